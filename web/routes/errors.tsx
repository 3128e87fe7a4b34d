/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * How the viewer answers a miss (404) or a failure (500): JSON under `/api/`, an error page
 * elsewhere. Failures are logged, never shown.
 * @module
 */
import type { Context, ErrorHandler } from "npm:hono@4.13.19";
import type { SessionViewMiss } from "../model.ts";
import { ErrorPage } from "../pages/error.tsx";

/** What a 404 says for each kind of id that named nothing. */
export const MISSES: Record<SessionViewMiss | "workflow", string> = {
  session: "There is no session with that id in this database.",
  run: "This session has no run with that id.",
  node: "This run has no node with that id.",
  workflow: "No run in this database is pinned to a workflow with that hash (sha256:…).",
};

/** A 404: `{ error: { code: "NOT_FOUND", message } }` under `/api/`, else the error page. */
export function notFound(c: Context, message: string): Response | Promise<Response> {
  if (c.req.path.startsWith("/api/")) {
    return c.json({ error: { code: "NOT_FOUND", message } }, 404);
  }
  c.status(404);
  return c.html(`<!doctype html>${<ErrorPage status={404} message={message} />}`);
}

/** The app's error handler: logs the error to `log`, answers 500 without its details. */
export function onViewerError(log?: (line: string) => void): ErrorHandler {
  return (error, c) => {
    log?.(
      `viewer error on ${c.req.path}: ${error instanceof Error ? error.message : String(error)}`,
    );
    if (c.req.path.startsWith("/api/")) {
      return c.json({
        error: { code: "INTERNAL_ERROR", message: "The viewer failed to read this." },
      }, 500);
    }
    c.status(500);
    return c.html(
      `<!doctype html>${(
        <ErrorPage
          status={500}
          message="The viewer failed to read this page; see the server's log."
        />
      )}`,
    );
  };
}
