/**
 * Sessions as the session resource shows them (the store port's `listSessions` and
 * `getSession`).
 * @module
 */
import type { SessionRunSummary, SessionSummary } from "../../engine/model/ports.ts";
import type { FullTextSearch, ReadScope } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";
import { preview } from "./search.ts";
import { decodeSessionKind } from "./rows.ts";

/** Most runs listed with a session. */
const MAX_SESSION_RUNS = 50;

const SESSION_COLUMNS = [
  "session_id",
  "title",
  "kind",
  "health",
  "event_count",
  "created_at",
  "updated_at",
] as const;

interface SessionRow {
  session_id: string;
  title: string;
  kind: string;
  health: string;
  event_count: number;
  created_at: string;
  updated_at: string;
}

async function sessionRuns(
  ex: Executor,
  fts: FullTextSearch,
  sessionId: string,
): Promise<SessionRunSummary[]> {
  const rows = await ex.selectFrom("runs as r")
    .leftJoin(
      "nodes as n",
      (j) => j.onRef("n.run_id", "=", "r.run_id").onRef("n.node_id", "=", "r.last_node_id"),
    )
    .select([
      "r.run_id",
      "r.workflow_id",
      "r.goal",
      "r.status",
      "r.node_count",
      "r.last_node_id",
      "n.pending_step_id",
      "r.workspace",
      "r.git_branch",
      "r.git_head_sha",
      "r.created_at",
      "r.updated_at",
    ])
    .where("r.session_id", "=", sessionId).orderBy("r.created_at").orderBy("r.run_id")
    .limit(MAX_SESSION_RUNS).execute();
  const tips = rows.length === 0
    ? new Map<string, string>()
    : await fts.tipTexts(ex, rows.map((r) => r.run_id));
  return rows.map((r) => ({
    runId: r.run_id,
    workflowId: r.workflow_id,
    goal: r.goal,
    status: r.status,
    nodeCount: r.node_count,
    tipNodeId: r.last_node_id,
    tipPendingStepId: r.pending_step_id,
    latestNotes: preview(tips.get(r.run_id)),
    workspace: r.workspace,
    gitBranch: r.git_branch,
    gitHeadSha: r.git_head_sha,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }));
}

function toSession(row: SessionRow, runs: SessionRunSummary[]): SessionSummary {
  return {
    sessionId: row.session_id,
    title: row.title,
    sessionKind: decodeSessionKind(row.kind),
    health: row.health,
    eventCount: row.event_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    runs,
  };
}

/** Sessions, most recently changed first, without their runs. */
export async function listSessions(
  ex: Executor,
  options: { limit: number; offset: number },
): Promise<SessionSummary[]> {
  const rows = await ex.selectFrom("sessions").select(SESSION_COLUMNS)
    // the minute first, for its index (`activity_minutes.ts`); the same order as `updated_at`'s
    .orderBy("updated_minute", "desc").orderBy("updated_at", "desc").orderBy("session_id")
    .limit(options.limit).offset(options.offset).execute();
  return rows.map((r) => toSession(r, []));
}

/** One session with its runs (oldest first, at most 50), or `null`. */
export async function getSession(
  scope: ReadScope,
  sessionId: string,
): Promise<SessionSummary | null> {
  const { ex, search } = scope;
  const row = await ex.selectFrom("sessions").select(SESSION_COLUMNS)
    .where("session_id", "=", sessionId).executeTakeFirst();
  return row ? toSession(row, await sessionRuns(ex, search, sessionId)) : null;
}
