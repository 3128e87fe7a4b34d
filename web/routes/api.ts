/**
 * The JSON API under `/api/`: the sessions list, a session, its bundle (the file `waymark
 * import` reads), its timeline, a run's graph, a node and the footprints of the steps leading to it. Misses answer `{ error: { code: "NOT_FOUND", message } }` with 404.
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
  getStepFootprints,
  listSessions,
  type RunSummary,
  SESSIONS_PAGE_SIZE,
  type ViewerDb,
} from "../queries.ts";
import { exportSession } from "../../store/bundle/mod.ts";
import { MISSES, notFound } from "./errors.tsx";
import { filtersFrom } from "./filters.ts";

async function findRun(c: Context, db: ViewerDb): Promise<RunSummary | null> {
  const sessionId = parseSessionId(c.req.param("sid") ?? "");
  const runId = parseRunId(c.req.param("rid") ?? "");
  const detail = sessionId ? await getSession(db, sessionId) : null;
  return detail?.runs.find((r) => r.runId === runId) ?? null;
}

/** The session as a bundle file (`waymark import` reads it); a corrupt log answers 409. */
async function bundle(c: Context, db: ViewerDb): Promise<Response> {
  const sessionId = parseSessionId(c.req.param("sid") ?? "");
  const exported = sessionId ? await exportSession({ store: { db } }, sessionId) : null;
  if (!exported || (!exported.ok && exported.error.code === "SESSION_NOT_FOUND")) {
    return notFound(c, MISSES.session);
  }
  if (!exported.ok) {
    return c.json({ error: { code: exported.error.code, message: exported.error.message } }, 409);
  }
  return c.body(exported.value.text, 200, {
    "content-type": "application/json; charset=utf-8",
    "content-disposition": `attachment; filename="${exported.value.sessionId}.json"`,
  });
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
  app.get("/api/sessions/:sid/bundle", (c) => bundle(c, db));
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
  // each step's footprint (time, changes with the diff, evidence, tokens), root to the node
  app.get("/api/sessions/:sid/runs/:rid/nodes/:nid/footprints", async (c) => {
    const run = await findRun(c, db);
    if (!run) return notFound(c, MISSES.run);
    const nodeId = parseNodeId(c.req.param("nid"));
    const steps = nodeId ? await getStepFootprints(db, { runId: run.runId, nodeId }) : [];
    if (steps.length === 0) return notFound(c, MISSES.node);
    return c.json({ steps });
  });
  return app;
}
