/**
 * The JSON API under `/api/`: the sessions list, a session, its timeline, a run's graph and a
 * node. Misses answer `{ error: { code: "NOT_FOUND", message } }` with 404.
 * @module
 */
import { type Context, Hono } from "npm:hono@4.13.19";
import {
  loadNode,
  loadRunGraph,
  loadTimeline,
  parseNodeId,
  parseRunId,
  parseSessionId,
} from "../model.ts";
import {
  getSession,
  listSessions,
  type RunSummary,
  SESSIONS_PAGE_SIZE,
  type ViewerDb,
} from "../queries.ts";
import { MISSES, notFound } from "./errors.tsx";
import { filtersFrom } from "./filters.ts";

async function findRun(c: Context, db: ViewerDb): Promise<RunSummary | null> {
  const sessionId = parseSessionId(c.req.param("sid") ?? "");
  const runId = parseRunId(c.req.param("rid") ?? "");
  const detail = sessionId ? await getSession(db, sessionId) : null;
  return detail?.runs.find((r) => r.runId === runId) ?? null;
}

/** The API routes over `db`. */
export function apiRoutes(db: ViewerDb): Hono {
  const app = new Hono();
  app.get("/api/sessions", async (c) => {
    const { filters, page } = filtersFrom(c);
    const result = await listSessions(db, filters, { offset: (page - 1) * SESSIONS_PAGE_SIZE });
    return c.json({ filters, page, ...result });
  });
  app.get("/api/sessions/:sid", async (c) => {
    const sessionId = parseSessionId(c.req.param("sid"));
    const detail = sessionId ? await getSession(db, sessionId) : null;
    if (!detail) return notFound(c, MISSES.session);
    return c.json(detail);
  });
  app.get("/api/sessions/:sid/timeline", async (c) => {
    const sessionId = parseSessionId(c.req.param("sid"));
    const detail = sessionId ? await getSession(db, sessionId) : null;
    if (!detail) return notFound(c, MISSES.session);
    return c.json(await loadTimeline(db, detail));
  });
  app.get("/api/sessions/:sid/runs/:rid/graph", async (c) => {
    const run = await findRun(c, db);
    if (!run) return notFound(c, MISSES.run);
    return c.json(await loadRunGraph(db, run));
  });
  app.get("/api/sessions/:sid/runs/:rid/nodes/:nid", async (c) => {
    const run = await findRun(c, db);
    if (!run) return notFound(c, MISSES.run);
    const nodeId = parseNodeId(c.req.param("nid"));
    const node = nodeId ? await loadNode(db, run, nodeId) : null;
    if (!node) return notFound(c, MISSES.node);
    return c.json(node);
  });
  return app;
}
