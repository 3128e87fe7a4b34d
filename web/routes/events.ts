/**
 * Live updates as server-sent events: `/api/events` (any change) and
 * `/api/sessions/:sid/events` (one session). Writers are other processes, so each stream polls
 * the database's version every `pollMs` and sends `changed` when it moves.
 * @module
 */
import { type Context, Hono } from "npm:hono@4.13.19";
import { streamSSE } from "npm:hono@4.13.19/streaming";
import { parseSessionId } from "../model.ts";
import { globalVersion, sessionVersion, type ViewerDb } from "../queries.ts";
import { MISSES, notFound } from "./errors.tsx";

/** Options of {@linkcode eventRoutes}. */
export interface EventRoutesOptions {
  /** How often a stream polls the database, in ms. */
  pollMs: number;
  /** True once the viewer is shutting down: open streams end. */
  isClosing: () => boolean;
}

/** A comment line every this many ms of quiet, so proxies and browsers keep the stream. */
const KEEP_ALIVE_MS = 15_000;

function watch(
  c: Context,
  read: () => Promise<string | null>,
  options: EventRoutesOptions,
): Response | Promise<Response> {
  const { pollMs, isClosing } = options;
  if (c.req.method === "HEAD") {
    return c.body(null, 200, { "content-type": "text/event-stream" });
  }
  return streamSSE(c, async (stream) => {
    let last = await read();
    await stream.writeSSE({ event: "version", data: last ?? "gone", retry: 1000 });
    let quiet = 0;
    while (!stream.aborted && !stream.closed && !isClosing()) {
      await stream.sleep(pollMs);
      if (stream.aborted || isClosing()) break;
      const now = await read().catch(() => last);
      if (now !== last) {
        last = now;
        quiet = 0;
        await stream.writeSSE({ event: "changed", data: now ?? "gone" });
      } else if ((quiet += pollMs) >= KEEP_ALIVE_MS) {
        quiet = 0;
        await stream.write(": keep-alive\n\n");
      }
    }
  }, async () => {});
}

/** The event-stream routes over `db`. */
export function eventRoutes(db: ViewerDb, options: EventRoutesOptions): Hono {
  const app = new Hono();
  app.get("/api/events", (c) => watch(c, () => globalVersion(db), options));
  app.get("/api/sessions/:sid/events", (c) => {
    const sessionId = parseSessionId(c.req.param("sid"));
    if (!sessionId) return notFound(c, MISSES.session);
    return watch(c, () => sessionVersion(db, sessionId), options);
  });
  return app;
}
