/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The HTML routes: the sessions list (`/`, `/sessions`), a session at a run and node
 * (`/sessions/:sid[/runs/:rid[/nodes/:nid]]`), and its Markdown export (`…/export.md`).
 * Ids are accepted with or without their `ses_`/`run_` prefix.
 * @module
 */
import { type Context, Hono } from "npm:hono@4.13.19";
import { sessionLabel } from "../../engine/model/ids.ts";
import { exportSessionMarkdown } from "../export_md.ts";
import { loadPinned, loadSessionView, parseNodeId, parseRunId, parseSessionId } from "../model.ts";
import { WorkflowPage } from "../pages/workflow.tsx";
import { SessionPageView } from "../pages/session.tsx";
import { SessionsPage } from "../pages/sessions.tsx";
import {
  globalVersion,
  listSessions,
  SESSIONS_PAGE_SIZE,
  type ViewerDb,
  workflowIdsWithRuns,
  workspacesWithRuns,
} from "../queries.ts";
import { MISSES, notFound } from "./errors.tsx";
import { filtersFrom } from "./filters.ts";

async function listPage(c: Context, db: ViewerDb): Promise<Response> {
  const { filters, page } = filtersFrom(c);
  const now = new Date();
  const [result, workflows, workspaces, version] = await Promise.all([
    listSessions(db, filters, { offset: (page - 1) * SESSIONS_PAGE_SIZE }, now),
    workflowIdsWithRuns(db),
    workspacesWithRuns(db),
    globalVersion(db),
  ]);
  return c.html(
    `<!doctype html>${(
      <SessionsPage
        page={result}
        filters={filters}
        workflows={workflows}
        workspaces={workspaces}
        now={now}
        version={version}
      />
    )}`,
  );
}

async function sessionPage(c: Context, db: ViewerDb): Promise<Response> {
  const sessionId = parseSessionId(c.req.param("sid") ?? "");
  const runParam = c.req.param("rid");
  const nodeParam = c.req.param("nid");
  const runId = runParam === undefined ? null : parseRunId(runParam);
  const nodeId = nodeParam === undefined ? null : parseNodeId(nodeParam);
  if (!sessionId) return notFound(c, MISSES.session);
  if (runParam !== undefined && !runId) return notFound(c, MISSES.run);
  if (nodeParam !== undefined && !nodeId) return notFound(c, MISSES.node);
  const view = await loadSessionView(db, sessionId, runId, nodeId);
  if (typeof view === "string") return notFound(c, MISSES[view]);
  return c.html(`<!doctype html>${<SessionPageView view={view} />}`);
}

async function exportPage(c: Context, db: ViewerDb): Promise<Response> {
  const sessionId = parseSessionId(c.req.param("sid") ?? "");
  const text = sessionId ? await exportSessionMarkdown(db, sessionId) : null;
  if (sessionId === null || text === null) return notFound(c, MISSES.session);
  return c.body(text, 200, {
    "content-type": "text/markdown; charset=utf-8",
    "content-disposition": `attachment; filename="waymark-${sessionLabel(sessionId)}.md"`,
  });
}

async function workflowPage(c: Context, db: ViewerDb): Promise<Response> {
  const hash = c.req.param("hash") ?? "";
  const pinned = /^sha256:[0-9a-f]{64}$/.test(hash) ? await loadPinned(db, hash) : null;
  if (!pinned) return notFound(c, MISSES.workflow);
  return c.html(`<!doctype html>${<WorkflowPage pinned={pinned} hash={hash} />}`);
}

/** The page routes over `db`. */
export function pageRoutes(db: ViewerDb): Hono {
  const app = new Hono();
  app.get("/", (c) => listPage(c, db));
  app.get("/sessions", (c) => listPage(c, db));
  app.get("/sessions/:sid", (c) => sessionPage(c, db));
  app.get("/sessions/:sid/runs/:rid", (c) => sessionPage(c, db));
  app.get("/sessions/:sid/runs/:rid/nodes/:nid", (c) => sessionPage(c, db));
  app.get("/sessions/:sid/export.md", (c) => exportPage(c, db));
  app.get("/workflows/:hash", (c) => workflowPage(c, db));
  return app;
}
