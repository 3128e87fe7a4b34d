/**
 * The in-memory store's `resume_session` layers and session listings, matching the libSQL
 * store's queries (see `text.ts` for how matching and relevance differ from FTS5's).
 * @module
 */
import type {
  RunHit,
  SearchLayer,
  SearchQuery,
  SessionRunSummary,
  SessionSummary,
} from "../../engine/mod.ts";
import { key, type RunRow, type SessionRow, type Tables } from "./tables.ts";
import { matchText, preview } from "./text.ts";

interface Found {
  runId: string;
  relevance: number;
  snippet: string | null;
}

function byUpdatedDesc(a: RunRow, b: RunRow): number {
  return a.updatedAt < b.updatedAt
    ? 1
    : a.updatedAt > b.updatedAt
    ? -1
    : a.runId < b.runId
    ? 1
    : a.runId > b.runId
    ? -1
    : 0;
}

function idLayer(tables: Tables, query: SearchQuery): Found[] {
  const ids = new Set(query.ids);
  return [...tables.runs.values()]
    .filter((r) => ids.has(r.runId) || ids.has(r.sessionId))
    .slice(0, query.limit)
    .map((r) => ({ runId: r.runId, relevance: 0, snippet: null }));
}

function recentLayer(tables: Tables, query: SearchQuery): Found[] {
  const runs = [...tables.runs.values()].sort(byUpdatedDesc);
  const here = runs.filter((r) => r.workspace === query.workspace).slice(0, query.limit);
  const ids = new Set([...here, ...runs.slice(0, query.limit)].map((r) => r.runId));
  return [...ids].map((runId) => ({ runId, relevance: 0, snippet: null }));
}

/** Texts matched against the terms, best first, ties in insertion order. */
function matched(
  texts: readonly { runId: string; text: string | null }[],
  terms: readonly string[],
): Found[] {
  const found: Found[] = [];
  for (const { runId, text } of texts) {
    const match = text === null ? null : matchText(text, terms);
    if (match) found.push({ runId, ...match });
  }
  return found.sort((a, b) => a.relevance - b.relevance);
}

function textLayer(tables: Tables, search: { layer: SearchLayer; query: SearchQuery }): Found[] {
  const { layer, query } = search;
  if (query.terms.length === 0) return [];
  const runs = [...tables.runs.values()];
  const hits = layer === "title"
    ? matched(runs.map((r) => ({ runId: r.runId, text: r.titleText })), query.terms)
    : layer === "tip_notes"
    ? matched(runs.map((r) => ({ runId: r.runId, text: r.tipText })), query.terms)
    : matched([...tables.outputs.values()], query.terms).slice(0, query.limit * 4);
  const seen = new Set<string>();
  const found: Found[] = [];
  for (const hit of hits) {
    if (seen.has(hit.runId)) continue;
    seen.add(hit.runId);
    found.push(hit);
    if (found.length >= query.limit) break;
  }
  return found;
}

function toHit(tables: Tables, found: Found): RunHit | null {
  const run = tables.runs.get(found.runId);
  const session = run && tables.sessions.get(run.sessionId);
  const tip = run && tables.nodes.get(key(run.runId, run.lastNodeId));
  if (!run || !session || !tip) return null;
  return {
    runId: run.runId,
    sessionId: run.sessionId,
    title: session.title,
    sessionKind: session.kind,
    corrupt: session.health === "corrupt",
    workflowId: run.workflowId,
    status: run.status === "aborted"
      ? "aborted"
      : tip.pendingStepId === null
      ? "complete"
      : "running",
    updatedAt: run.updatedAt,
    tipNodeId: tip.nodeId,
    tipPendingStepId: tip.pendingStepId,
    workspace: run.workspace,
    gitBranch: run.gitBranch,
    gitHeadSha: run.gitHeadSha,
    relevance: found.relevance,
    snippet: found.snippet ?? preview(run.tipText),
  };
}

/** One search layer of `resume_session`. */
export function searchRuns(
  tables: Tables,
  search: { layer: SearchLayer; query: SearchQuery },
): RunHit[] {
  const { layer, query } = search;
  const found = layer === "id"
    ? idLayer(tables, query)
    : layer === "recent"
    ? recentLayer(tables, query)
    : textLayer(tables, search);
  return found.flatMap((f) => toHit(tables, f) ?? []);
}

function toSession(row: SessionRow, runs: SessionRunSummary[]): SessionSummary {
  return {
    sessionId: row.sessionId,
    title: row.title,
    sessionKind: row.kind,
    health: row.health,
    eventCount: row.eventCount,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    runs,
  };
}

function toRunSummary(tables: Tables, run: RunRow): SessionRunSummary {
  const tip = run.lastNodeId === null
    ? undefined
    : tables.nodes.get(key(run.runId, run.lastNodeId));
  return {
    runId: run.runId,
    workflowId: run.workflowId,
    goal: run.goal,
    status: run.status,
    nodeCount: run.nodeCount,
    tipNodeId: run.lastNodeId,
    tipPendingStepId: tip?.pendingStepId ?? null,
    latestNotes: preview(run.tipText),
    workspace: run.workspace,
    gitBranch: run.gitBranch,
    gitHeadSha: run.gitHeadSha,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
  };
}

/** Sessions, most recently changed first (ties by id), without their runs. */
export function listSessions(
  tables: Tables,
  options: { limit: number; offset: number },
): SessionSummary[] {
  return [...tables.sessions.values()]
    .sort((a, b) =>
      a.updatedAt < b.updatedAt
        ? 1
        : a.updatedAt > b.updatedAt
        ? -1
        : a.sessionId < b.sessionId
        ? -1
        : a.sessionId > b.sessionId
        ? 1
        : 0
    )
    .slice(options.offset, options.offset + options.limit)
    .map((row) => toSession(row, []));
}

/** One session with its first 50 runs, oldest first. */
export function getSession(tables: Tables, sessionId: string): SessionSummary | null {
  const row = tables.sessions.get(sessionId);
  if (!row) return null;
  const runs = [...tables.runs.values()]
    .filter((r) => r.sessionId === sessionId)
    .sort((a, b) =>
      a.createdAt < b.createdAt
        ? -1
        : a.createdAt > b.createdAt
        ? 1
        : a.runId < b.runId
        ? -1
        : a.runId > b.runId
        ? 1
        : 0
    )
    .slice(0, 50);
  return toSession(row, runs.map((r) => toRunSummary(tables, r)));
}
