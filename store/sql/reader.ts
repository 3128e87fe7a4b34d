/**
 * The store port's reads, over any SQL dialect: queries that return engine records, decoded by
 * `rows.ts`. The same reader runs on the connection and inside a write transaction.
 * @module
 */
import { getDelegationLink, getDelegations } from "./delegation_reads.ts";
import { getPassedReviews } from "./review_reads.ts";
import { type CompiledQuery, sql } from "npm:kysely@0.29.9";
import type {
  AncestorNotes,
  AttemptRecord,
  NodeAndRun,
  NodeRecord,
  RunRecord,
  StoreReader,
} from "../../engine/model/ports.ts";
import { InvariantViolationError, StorageCorruptionError } from "../../engine/model/result.ts";
import {
  type AttemptKind,
  isMember,
  type NodeKind,
  RUN_STATUSES,
} from "../../engine/model/vocabulary.ts";
import type { CompiledWorkflow } from "../../engine/workflow/compiled.ts";
import type { ReadScope } from "./dialect.ts";
import {
  ancestorsCte,
  type Executor,
  NODE_CONTEXT,
  nodesWithEdges,
  NOT_A_BRANCH,
  preferredTipId,
  stepAnchorId,
} from "./graph_sql.ts";
import { prepare } from "./prepared.ts";
import {
  decodeAttempt,
  decodeJsonOr,
  decodeNode,
  decodeOwnership,
  decodePinnedSnapshot,
  decodeSnapshot,
  evidenceColumn,
  type NodeRow,
} from "./rows.ts";
import { getSession, listSessions } from "./sessions.ts";
import { searchRuns } from "./search.ts";
import {
  findStackSession,
  getBranchOutputs,
  getNodeEvents,
  getRunTokens,
  getStack,
  getStackFrame,
  listStacks,
} from "./stack_reads.ts";
import { changeCounter, getBranchSteps, getRunListing, listRuns } from "./task_reads.ts";

/** What readers on one database share. */
export interface ReaderShared {
  /** The connection: reads outside a transaction may record what they find on it. */
  db: Executor;
  /** Pinned snapshots already read (content-addressed and immutable, so kept for the process). */
  snapshots: Map<string, CompiledWorkflow>;
  /**
   * Contexts of nodes read, by object: `runId:contextId` of the stored row each came from.
   * A new node carrying one on unchanged needs no lookup to know its context is stored.
   */
  storedContexts: WeakMap<object, string>;
}

/** Nodes with their edge kind and the notes recorded on arrival: what node reads select. */
function nodeQuery(ex: Executor) {
  return nodesWithEdges(ex).select([
    "n.run_id",
    "n.node_id",
    "n.session_id",
    "n.parent_id",
    "n.node_kind",
    "n.depth",
    "n.state",
    NODE_CONTEXT,
    "n.preferences",
    "n.pending_step_id",
    "e.edge_kind",
    "o.notes_markdown",
    "o.step_id as notes_step_id",
    "n.step_count",
    "n.context_id",
    "n.created_at",
  ]);
}

const nodeById = prepare((db, p: { runId: string; nodeId: string }) =>
  nodeQuery(db).where("n.run_id", "=", p.runId).where("n.node_id", "=", p.nodeId)
);

const childrenOf = prepare((db, p: { runId: string; nodeId: string }) =>
  nodeQuery(db).where("n.run_id", "=", p.runId).where("n.parent_id", "=", p.nodeId)
    .where("n.node_kind", "!=", NOT_A_BRANCH).orderBy("n.created_seq")
);

/** The read of a node's children as `getChildren` makes it on `ex`, to send it ahead. */
export function childrenQuery(
  ex: Executor,
  at: { runId: string; nodeId: string },
): CompiledQuery {
  return childrenOf.compile(ex, at);
}

/** What a run record is read from, beside its ids (`runs as r` joined to `sessions as s`). */
const RUN_COLUMNS = [
  "r.workflow_id",
  "r.workflow_hash",
  "r.status",
  "s.health",
  "r.workspace",
  "r.git_branch",
  "r.git_head_sha",
  "r.owner",
  "r.access",
] as const;

const runById = prepare((db, p: { runId: string }) =>
  db.selectFrom("runs as r")
    .innerJoin("sessions as s", "s.session_id", "r.session_id")
    .select(["r.run_id", "r.session_id", ...RUN_COLUMNS])
    .where("r.run_id", "=", p.runId)
);

type RunRow = NonNullable<Awaited<ReturnType<typeof runById.first>>>;

/** Nodes with their run's columns (its session as `run_session_id`). */
function nodesWithRuns(db: Executor) {
  return nodeQuery(db)
    .innerJoin("runs as r", "r.run_id", "n.run_id")
    .innerJoin("sessions as s", "s.session_id", "r.session_id")
    .select(["r.session_id as run_session_id", ...RUN_COLUMNS]);
}

const nodeAndRun = prepare((db, p: { runId: string; nodeId: string }) =>
  nodesWithRuns(db).where("n.run_id", "=", p.runId).where("n.node_id", "=", p.nodeId)
);

/**
 * A node with its run and the attempt recorded under a key (left joined): what an attempt reads
 * before its transaction, in one statement instead of three.
 */
const nodeAndAttempt = prepare((
  db,
  p: { runId: string; nodeId: string; attemptId: string; kind: AttemptKind },
) =>
  nodesWithRuns(db)
    .leftJoin("attempts as a", (j) =>
      j.onRef("a.run_id", "=", "n.run_id").onRef("a.node_id", "=", "n.node_id")
        .on("a.attempt_id", "=", p.attemptId).on("a.attempt_kind", "=", p.kind))
    .select([
      "a.attempt_id",
      "a.outcome",
      "a.result_node_id",
      "a.response",
      "a.response_digest",
      "a.payload_digest",
    ])
    .where("n.run_id", "=", p.runId).where("n.node_id", "=", p.nodeId)
);

type NodeAndRunRow = NonNullable<Awaited<ReturnType<typeof nodeAndRun.first>>>;

const attemptByKey = prepare((
  db,
  p: { runId: string; nodeId: string; attemptId: string; kind: AttemptKind },
) =>
  db.selectFrom("attempts as a")
    .innerJoin("runs as r", "r.run_id", "a.run_id")
    .innerJoin("sessions as s", "s.session_id", "r.session_id")
    .select([
      "a.node_id",
      "a.attempt_id",
      "a.outcome",
      "a.result_node_id",
      "a.response",
      "a.response_digest",
      "a.payload_digest",
      "s.session_id",
      "s.health",
      "r.run_id",
      "r.owner",
      "r.access",
    ])
    .where("a.run_id", "=", p.runId).where("a.node_id", "=", p.nodeId)
    .where("a.attempt_id", "=", p.attemptId).where("a.attempt_kind", "=", p.kind)
);

const snapshotText = prepare((db, p: { hash: string }) =>
  db.selectFrom("workflow_snapshots").select("compiled").where("workflow_hash", "=", p.hash)
);

const snapshotKept = prepare((db, p: { hash: string }) =>
  db.selectFrom("workflow_snapshots").select("workflow_hash").where("workflow_hash", "=", p.hash)
);

const ancestorNotes = prepare((_db, p: { runId: string; nodeId: string; limit: number }) =>
  sql<{
    node_id: string;
    node_kind: NodeKind;
    notes_markdown: string | null;
    step_id: string | null;
    evidence: string | null;
  }>`
    ${ancestorsCte(p.runId, p.nodeId, p.limit)}
    SELECT up.node_id, up.node_kind, o.notes_markdown, o.step_id, e.payload AS evidence
    FROM up LEFT JOIN outputs o ON o.run_id = ${p.runId} AND o.node_id = up.node_id
    LEFT JOIN node_events e ON e.run_id = ${p.runId} AND e.node_id = up.node_id
      AND e.kind = 'evidence_recorded'
    ORDER BY up.hop`
);

async function getRun(ex: Executor, runId: string): Promise<RunRecord | null> {
  const row = await runById.first(ex, { runId });
  return row ? runRecord(row) : null;
}

function runRecord(row: RunRow): RunRecord {
  const observed = row.workspace !== null || row.git_branch !== null || row.git_head_sha !== null;
  return {
    ...decodeOwnership(row),
    sessionId: row.session_id,
    workflowId: row.workflow_id,
    workflowHash: row.workflow_hash,
    corrupt: row.health === "corrupt",
    status: isMember(RUN_STATUSES, row.status) ? row.status : "running",
    observed: observed
      ? { workspace: row.workspace, gitBranch: row.git_branch, gitHeadSha: row.git_head_sha }
      : null,
  };
}

async function getAttempt(
  ex: Executor,
  shared: ReaderShared,
  key: { runId: string; nodeId: string; attemptId: string; kind: AttemptKind },
): Promise<AttemptRecord | null> {
  const row = await attemptByKey.first(ex, key);
  return row ? await attemptRecord(ex, shared, row) : null;
}

/** The attempt a row holds; one that fails its checks marks its session corrupt (outside a write). */
async function attemptRecord(
  ex: Executor,
  shared: ReaderShared,
  row: Parameters<typeof decodeAttempt>[0],
): Promise<AttemptRecord> {
  try {
    return decodeAttempt(row);
  } catch (error) {
    // Outside a transaction, record the finding; inside one it would roll back with the error.
    if (error instanceof StorageCorruptionError && ex === shared.db) {
      await markCorrupt(shared.db, row.session_id);
    }
    throw error;
  }
}

/** Marks a session whose recorded attempt failed its checks corrupt (best effort). */
export async function markCorrupt(db: Executor, sessionId: string): Promise<void> {
  await db.updateTable("sessions").set({ health: "corrupt" })
    .where("session_id", "=", sessionId).execute().catch(() => {});
}

async function getAncestorNotes(
  ex: Executor,
  at: { runId: string; nodeId: string },
  limit: number,
): Promise<AncestorNotes[]> {
  const result = await ancestorNotes.execute(ex, { ...at, limit });
  return result.rows.map((r) => {
    const notes: AncestorNotes = {
      nodeId: r.node_id,
      nodeKind: r.node_kind,
      notesMarkdown: r.notes_markdown,
      notesStepId: r.step_id,
    };
    // an acknowledgement records at most one piece of evidence on the node it creates
    const evidence = r.evidence === null ? null : decodeJsonOr(evidenceColumn, r.evidence, null);
    return evidence ? { ...notes, evidence } : notes;
  });
}

/** A pinned snapshot by hash, normalised to the current compiled format, or `null`. */
export async function readSnapshot(ex: Executor, hash: string): Promise<CompiledWorkflow | null> {
  const row = await snapshotText.first(ex, { hash });
  return row ? decodeSnapshot(row.compiled, hash) : null;
}

async function getSnapshot(
  ex: Executor,
  shared: ReaderShared,
  hash: string,
): Promise<CompiledWorkflow | null> {
  const cached = shared.snapshots.get(hash);
  if (cached && ex === shared.db) return cached;
  if (cached) {
    // Inside a write the row decides: `waymark gc` removes snapshots no run uses any more, and
    // a run pinned on a cached copy alone would have none.
    if (await snapshotKept.first(ex, { hash })) return cached;
    shared.snapshots.delete(hash);
    return null;
  }
  // Checked against its hash once per process: runs execute what they were pinned to.
  const row = await snapshotText.first(ex, { hash });
  if (!row) return null;
  const compiled = decodePinnedSnapshot(row.compiled, hash);
  shared.snapshots.set(hash, compiled);
  return compiled;
}

/** The store port's reads on `scope.ex` (the connection, or a write transaction). */
export function createReader(scope: ReadScope, shared: ReaderShared): StoreReader {
  const { ex } = scope;
  const node = (runId: string, nodeId: string) => nodeById.first(ex, { runId, nodeId });
  const decode = (row: NodeRow & { context_id: string | null }): NodeRecord => {
    const record = decodeNode(row);
    if (row.context_id) {
      shared.storedContexts.set(record.context, `${row.run_id}:${row.context_id}`);
    }
    return record;
  };
  const nodeAndRunOf = (row: NodeAndRunRow): NodeAndRun => ({
    node: decode(row),
    run: runRecord({ ...row, session_id: row.run_session_id }),
  });
  return {
    getRun: (runId) => getRun(ex, runId),
    getNodeAndRun: async (runId, nodeId) => {
      const row = await nodeAndRun.first(ex, { runId, nodeId });
      return row ? nodeAndRunOf(row) : null;
    },
    getAttemptOrNode: async (runId, nodeId, attemptId, kind) => {
      const row = await nodeAndAttempt.first(ex, { runId, nodeId, attemptId, kind });
      if (!row) return { attempt: null, at: null };
      if (row.attempt_id === null) return { attempt: null, at: nodeAndRunOf(row) };
      const attempt = await attemptRecord(ex, shared, {
        ...row,
        attempt_id: row.attempt_id,
        outcome: row.outcome!,
        result_node_id: row.result_node_id!,
        response: row.response!,
        response_digest: row.response_digest!,
        session_id: row.run_session_id,
      });
      return { attempt };
    },
    getNode: async (runId, nodeId) => {
      const row = await node(runId, nodeId);
      return row ? decode(row) : null;
    },
    getAttempt: (runId, nodeId, attemptId, kind) =>
      getAttempt(ex, shared, { runId, nodeId, attemptId, kind }),
    getChildren: async (runId, nodeId) => {
      const rows = await childrenOf.all(ex, { runId, nodeId });
      return rows.map(decode);
    },
    getAncestorNotes: (runId, nodeId, limit) => getAncestorNotes(ex, { runId, nodeId }, limit),
    getPreferredTip: async (runId, nodeId) => {
      // Only rehydrates of a node that is not a tip come here; it reads that node's subtree.
      const row = await node(runId, await preferredTipId(ex, runId, nodeId));
      if (!row) {
        throw new InvariantViolationError(`The preferred tip of node ${nodeId} is not stored`, {
          invariant: "tip_exists",
          runId,
          nodeId,
        });
      }
      return decode(row);
    },
    getStepAnchorId: (runId, nodeId) => stepAnchorId(ex, runId, nodeId),
    getSnapshot: (hash) => getSnapshot(ex, shared, hash),
    hasSnapshot: async (hash) => (await snapshotKept.first(ex, { hash })) !== undefined,
    searchRuns: (layer, query) => searchRuns(scope, { layer, query }),
    listSessions: (options) => listSessions(ex, options),
    getSession: (sessionId) => getSession(scope, sessionId),
    getStack: (sessionId, agentId) => getStack(ex, { sessionId, agentId }),
    findStackSession: (workspace, at) => findStackSession(ex, { workspace, ...at }),
    listStacks: (workspace, at) => listStacks(ex, { workspace, ...at }),
    getStackFrame: (runId) => getStackFrame(ex, runId),
    getNodeEvents: (runId, nodeId) => getNodeEvents(ex, { runId, nodeId }),
    getRunTokens: (runId) => getRunTokens(ex, runId),
    getDelegations: (runId, nodeId) => getDelegations(ex, { runId, nodeId }),
    getDelegationLink: (runId) => getDelegationLink(ex, runId),
    getBranchOutputs: (runId, nodeId, limit) => getBranchOutputs(ex, { runId, nodeId, limit }),
    getBranchSteps: (runId, nodeId, limit) => getBranchSteps(ex, { runId, nodeId, limit }),
    getRunListing: (runId) => getRunListing(ex, runId),
    listRuns: (page) => listRuns(ex, page),
    changeCounter: () => changeCounter(ex),
    getPassedReviews: (ids) => getPassedReviews(ex, ids),
  };
}
