/**
 * The search layers of `resume_session`: `id` and `recent` as plain indexed reads, the text
 * layers through the dialect's full-text search, and every hit hydrated with one bounded read.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { RunHit, SearchQuery } from "../../engine/model/ports.ts";
import type { SearchLayer } from "../../engine/model/vocabulary.ts";
import type { ReadScope, TextMatch } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";
import { decodeOwnership, decodePrincipal, decodeSessionKind, type OwnerColumns } from "./rows.ts";

/** Characters of an artifact preview in the search index. */
const ARTIFACT_PREVIEW_CHARS = 600;
/** Characters of a notes preview in search results and the session resource. */
const PREVIEW_CHARS = 160;

/** The indexed text of an output: its notes and a small preview of its artifacts. */
export function searchText(notes: string | null, artifacts: readonly unknown[]): string {
  const preview = artifacts.length > 0
    ? JSON.stringify(artifacts).slice(0, ARTIFACT_PREVIEW_CHARS)
    : "";
  return [notes ?? "", preview].filter(Boolean).join("\n");
}

/** The text on one line, cut to a preview. */
export function preview(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 1)}…` : flat;
}

interface HitRow extends OwnerColumns {
  title: string;
  kind: string;
  health: string;
  workflow_id: string;
  run_status: string;
  updated_at: string;
  last_node_id: string;
  pending_step_id: string | null;
  workspace: string | null;
  git_branch: string | null;
  git_head_sha: string | null;
  delegated_by: string | null;
  delegated_step: string | null;
  delegated_idx: number | null;
  tip_made_by: string | null;
}

/** Details of the given runs, keyed by run id: one indexed query, whatever the store holds. */
async function hydrate(ex: Executor, runIds: readonly string[]): Promise<Map<string, HitRow>> {
  if (runIds.length === 0) return new Map();
  const rows = await ex.selectFrom("runs as r")
    .innerJoin("sessions as s", "s.session_id", "r.session_id")
    .innerJoin(
      "nodes as n",
      (j) => j.onRef("n.run_id", "=", "r.run_id").onRef("n.node_id", "=", "r.last_node_id"),
    )
    .leftJoin("run_delegations as d", "d.run_id", "r.run_id")
    .select([
      "r.run_id",
      "r.session_id",
      "s.title",
      "s.kind",
      "s.health",
      "r.workflow_id",
      "r.status as run_status",
      "r.updated_at",
      "n.node_id as last_node_id",
      "n.pending_step_id",
      "r.workspace",
      "r.git_branch",
      "r.git_head_sha",
      "d.parent_run_id as delegated_by",
      "d.step_id as delegated_step",
      "d.idx as delegated_idx",
      "r.owner",
      "r.access",
      "n.made_by as tip_made_by",
    ])
    .where("r.run_id", "in", runIds).execute();
  return new Map(rows.map((r) => [r.run_id, r]));
}

function toHit(row: HitRow, match: TextMatch, tipText: string | undefined): RunHit {
  return {
    ...decodeOwnership(row),
    sessionId: row.session_id,
    title: row.title,
    sessionKind: decodeSessionKind(row.kind),
    corrupt: row.health === "corrupt",
    workflowId: row.workflow_id,
    status: row.run_status === "aborted"
      ? "aborted"
      : row.pending_step_id === null
      ? "complete"
      : "running",
    updatedAt: row.updated_at,
    tipNodeId: row.last_node_id,
    tipPendingStepId: row.pending_step_id,
    tipMadeBy: decodePrincipal(row.tip_made_by),
    workspace: row.workspace,
    gitBranch: row.git_branch,
    gitHeadSha: row.git_head_sha,
    relevance: match.relevance,
    snippet: match.snippet ?? preview(tipText),
    delegatedFrom: row.delegated_by !== null && row.delegated_step !== null
      ? {
        parentRunId: row.delegated_by,
        stepId: row.delegated_step,
        index: Number(row.delegated_idx),
      }
      : null,
  };
}

/** Runs named by id (a run id, or a session id for each of its runs). */
async function byId(ex: Executor, query: SearchQuery): Promise<TextMatch[]> {
  if (query.ids.length === 0) return [];
  const rows = await sql<{ run_id: string }>`
    SELECT run_id FROM runs WHERE run_id IN (${sql.join(query.ids)})
    UNION SELECT run_id FROM runs WHERE session_id IN (${sql.join(query.ids)})
    LIMIT ${query.limit}`.execute(ex);
  return rows.rows.map((r) => ({ runId: r.run_id, relevance: 0, snippet: null }));
}

/**
 * The most recently changed runs, with the caller's workspace's own listed too (by the minute
 * first, for its indexes: `activity_minutes.ts`).
 */
async function recent(ex: Executor, query: SearchQuery): Promise<TextMatch[]> {
  const rows = await sql<{ run_id: string }>`
    SELECT run_id FROM (SELECT run_id FROM runs WHERE workspace = ${query.workspace}
      ORDER BY updated_minute DESC, updated_at DESC LIMIT ${query.limit}) AS here
    UNION SELECT run_id FROM (SELECT run_id FROM runs ORDER BY updated_minute DESC,
      updated_at DESC LIMIT ${query.limit}) AS anywhere`.execute(ex);
  return rows.rows.map((r) => ({ runId: r.run_id, relevance: 0, snippet: null }));
}

/** One search layer of `resume_session`: bounded reads through indexes and full-text search. */
export async function searchRuns(
  scope: ReadScope,
  search: { layer: SearchLayer; query: SearchQuery },
): Promise<RunHit[]> {
  const { ex, search: fts } = scope;
  const { layer, query } = search;
  const found = layer === "id"
    ? await byId(ex, query)
    : layer === "recent"
    ? await recent(ex, query)
    : query.terms.length === 0
    ? []
    : await fts.match(ex, layer, query);
  const runIds = found.map((f) => f.runId);
  // One after the other: inside a write transaction both share one connection.
  const rows = await hydrate(ex, runIds);
  const tips = runIds.length === 0 ? new Map<string, string>() : await fts.tipTexts(ex, runIds);
  const hits: RunHit[] = [];
  for (const f of found) {
    const row = rows.get(f.runId);
    if (row) hits.push(toHit(row, f, tips.get(f.runId)));
  }
  return hits;
}
