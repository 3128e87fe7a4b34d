/**
 * The viewer as a Hono app: read-only pages, a JSON API under `/api/`, server-sent events for
 * live updates, and a Markdown export, behind the guards of `guard.ts`. This module only
 * composes them; each concern lives in its own module under `routes/`. Runtime-neutral:
 * `serve.ts` listens.
 * @module
 */
import { Hono } from "npm:hono@4.13.19";
import { hardening, loopbackOnly, readOnly } from "./request_guard.ts";
import type { ViewerDb } from "./queries.ts";
import { apiRoutes } from "./routes/api.ts";
import { assetRoutes } from "./routes/assets.ts";
import { notFound, onViewerError } from "./routes/errors.tsx";
import { eventRoutes } from "./routes/events.ts";
import { pageRoutes } from "./routes/pages.tsx";

/** Options of {@linkcode createViewerApp}. */
export interface ViewerOptions {
  /** The database, read only. */
  db: ViewerDb;
  /** The `Host` values to answer (read per request, so the port can be learnt after listening). */
  allowedHosts: () => readonly string[];
  /** How often live-update streams poll the database, in ms (default 500). */
  pollMs?: number;
  /** Where unexpected errors are logged (default: nowhere). */
  log?: (line: string) => void;
}

/** The app and a way to end its open event streams. */
export interface Viewer {
  /** The Hono app (`app.fetch` serves it; `app.request` calls it in-process). */
  app: Hono;
  /** Ends every open event stream (call before shutting the listener down). */
  close(): void;
}

/** Builds the viewer: guards first (headers, Host/Origin 403, read-only 405), then the routes. */
export function createViewerApp(options: ViewerOptions): Viewer {
  const { db } = options;
  let closing = false;
  const app = new Hono();
  app.use("*", ...hardening(), loopbackOnly(options.allowedHosts), readOnly());
  app.onError(onViewerError(options.log));
  app.notFound((c) => notFound(c, "No such page."));
  app.route("/", assetRoutes());
  app.route("/", pageRoutes(db));
  app.route("/", apiRoutes(db));
  app.route("/", eventRoutes(db, { pollMs: options.pollMs ?? 500, isClosing: () => closing }));
  return {
    app,
    close() {
      closing = true;
    },
  };
}
