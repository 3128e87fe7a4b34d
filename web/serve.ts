/**
 * Listens for the viewer on 127.0.0.1 (`deadlines.ts`: slow clients are cut off). Loopback only,
 * by construction: there is no option for another address.
 * @module
 */
import { createViewerApp } from "./app.ts";
import { allowedHostsFor } from "./request_guard.ts";
import { type Deadlines, serveWithDeadlines } from "./deadlines.ts";
import type { ViewerDb } from "./queries.ts";

/** The default port of `waymark view`. */
export const DEFAULT_VIEWER_PORT = 4321;

/** Options of {@linkcode serveViewer}. */
export interface ServeViewerOptions {
  /** The database, read only. */
  db: ViewerDb;
  /** The port (0 picks a free one); default {@linkcode DEFAULT_VIEWER_PORT}. */
  port?: number;
  /** Where unexpected errors are logged. */
  log?: (line: string) => void;
  /** Live-update poll interval in ms. */
  pollMs?: number;
  /** How long a client may take to send a request (`deadlines.ts`). */
  deadlines?: Partial<Deadlines>;
}

/** A listening viewer. */
export interface ViewerServer {
  /** `http://127.0.0.1:PORT/`. */
  url: string;
  /** The port bound. */
  port: number;
  /** Ends the event streams and stops listening. */
  close(): Promise<void>;
}

/** Serves the viewer on 127.0.0.1; throws (e.g. `AddrInUse`) when the port cannot be bound. */
export function serveViewer(options: ServeViewerOptions): ViewerServer {
  let hosts: string[] = [];
  const viewer = createViewerApp({
    db: options.db,
    allowedHosts: () => hosts,
    log: options.log,
    pollMs: options.pollMs,
  });
  const server = serveWithDeadlines(viewer.app.fetch, {
    port: options.port ?? DEFAULT_VIEWER_PORT,
    deadlines: options.deadlines,
    log: options.log,
  });
  const port = server.port;
  hosts = allowedHostsFor(port);
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: () =>
      closing ??= (async () => {
        viewer.close();
        await server.shutdown();
      })(),
  };
}
