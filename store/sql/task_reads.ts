/**
 * The reads runs-as-tasks need (the store port's `getBranchSteps`, `getRunListing`, `listRuns`
 * and `changeCounter`): a branch's nodes with what arrived at each, runs with their timestamps
 * and preferred tip, and the log's highest sequence number as a cheap change counter.
 * @module
 */
import { type CompiledQuery, type QueryResult, sql } from "npm:kysely@0.29.9";
import type { Artifact } from "../../engine/model/events.ts";
import type { BranchStep, RunListing } from "../../engine/model/ports.ts";
import { StorageCorruptionError } from "../../engine/model/result.ts";
import { isMember, NODE_KINDS, RUN_STATUSES } from "../../engine/model/vocabulary.ts";
import type { RunState } from "../../engine/workflow/interpreter.ts";
import { ancestorsCte, type Executor } from "./graph_sql.ts";
import { prepare } from "./prepared.ts";
import { decodeOwnership, decodeSessionKind } from "./rows.ts";

/** JSON text parsed, or `fallback` when absent or not JSON (a plain parse: this read is hot). */
function parseOr(text: string | null, fallback: unknown): unknown {
  if (text === null) return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

const branchSteps = prepare((_db, p: { runId: string; nodeId: string; limit: number }) =>
  sql<{
    node_id: string;
    session_id: string;
    node_kind: string;
    state: string;
    pending_step_id: string | null;
    notes_markdown: string | null;
    artifacts: string | null;
  }>`
    ${ancestorsCte(p.runId, p.nodeId, p.limit)}
    -- CROSS JOIN keeps the walk outermost in SQLite: the cost follows the branch, not the run
    SELECT n.node_id, n.session_id, n.node_kind, n.state, n.pending_step_id,
           o.notes_markdown, o.artifacts
    FROM up CROSS JOIN nodes n
    LEFT JOIN outputs o ON o.run_id = n.run_id AND o.node_id = n.node_id
    WHERE n.run_id = ${p.runId} AND n.node_id = up.node_id
    ORDER BY up.hop DESC`
);

/** The nodes from the root to a node (root first), at most the `limit` nearest to it. */
export async function getBranchSteps(
  ex: Executor,
  at: { runId: string; nodeId: string; limit: number },
): Promise<BranchStep[]> {
  const result = await branchSteps.execute(ex, at);
  // A branch is a chain: each node's parent is the row before it (the first row's is unread).
  return result.rows.map((r, i) => {
    const state = parseOr(r.state, null) as RunState | null;
    if (typeof state?.pc !== "number" || !isMember(NODE_KINDS, r.node_kind)) {
      throw new StorageCorruptionError(
        `Stored node ${r.node_id} fails its shape check (state or kind)`,
        r.session_id,
      );
    }
    const artifacts = parseOr(r.artifacts, []);
    return {
      nodeId: r.node_id,
      nodeKind: r.node_kind,
      state,
      pendingStepId: r.pending_step_id,
      completedStepId: r.node_kind === "step" ? result.rows[i - 1]?.pending_step_id ?? null : null,
      notesMarkdown: r.notes_markdown,
      artifacts: Array.isArray(artifacts) ? artifacts as Artifact[] : [],
    };
  });
}

const listing = (ex: Executor) =>
  ex.selectFrom("runs as r").innerJoin("sessions as s", "s.session_id", "r.session_id").select([
    "r.run_id",
    "r.session_id",
    "s.kind",
    "s.health",
    "r.workflow_id",
    "r.workflow_hash",
    "r.goal",
    "r.status",
    "r.created_at",
    "r.updated_at",
    "r.last_node_id",
    "r.owner",
    "r.access",
  ]);

type ListingRow = Awaited<ReturnType<ReturnType<typeof listing>["executeTakeFirstOrThrow"]>>;

function toListing(r: ListingRow): RunListing {
  return {
    ...decodeOwnership(r),
    sessionId: r.session_id,
    sessionKind: decodeSessionKind(r.kind),
    workflowId: r.workflow_id,
    workflowHash: r.workflow_hash,
    goal: r.goal,
    status: isMember(RUN_STATUSES, r.status) ? r.status : "running",
    corrupt: r.health === "corrupt",
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    tipNodeId: r.last_node_id,
  };
}

const listingById = prepare((db, p: { runId: string }) =>
  listing(db).where("r.run_id", "=", p.runId)
);

/** A run with its timestamps, goal and preferred tip, or `null`. */
export async function getRunListing(ex: Executor, runId: string): Promise<RunListing | null> {
  const row = await listingById.first(ex, { runId });
  return row ? toListing(row) : null;
}

/**
 * A run's listing read by `read` (the dialect's, after the commit of the transaction `ex`):
 * the same statement as {@linkcode getRunListing}.
 */
export async function readRunListing(
  ex: Executor,
  runId: string,
  read: (query: CompiledQuery) => Promise<QueryResult<unknown>>,
): Promise<RunListing | null> {
  const { rows } = await read(listingById.compile(ex, { runId }));
  const row = rows[0] as ListingRow | undefined;
  return row ? toListing(row) : null;
}

/** Runs of workflow sessions (of one owner, by subject, when asked), most recently changed first. */
export async function listRuns(
  ex: Executor,
  page: { limit: number; offset: number; ownedBy?: string },
): Promise<RunListing[]> {
  let query = listing(ex).where("s.kind", "!=", "notes");
  if (page.ownedBy !== undefined) query = query.where("r.owner_subject", "=", page.ownedBy);
  // the minute first, for its index (`activity_minutes.ts`); the same order as `updated_at`'s
  const rows = await query.orderBy("r.updated_minute", "desc").orderBy("r.updated_at", "desc")
    .orderBy("r.run_id")
    .limit(page.limit).offset(page.offset).execute();
  return rows.map(toListing);
}

const lastSeq = prepare((db, _p: Record<string, never>) =>
  db.selectFrom("events").select((eb) => eb.fn.max("seq").as("seq"))
);

/** The log's highest sequence number: it grows with every append, by any process. */
export async function changeCounter(ex: Executor): Promise<number> {
  const row = await lastSeq.first(ex, {});
  return Number(row?.seq ?? 0);
}
