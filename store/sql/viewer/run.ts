/**
 * A run's reads for the viewer: its graph nodes, one node in full, the branch leading to a
 * node, its pinned workflow, and everything the Markdown export prints. Stored JSON is decoded
 * by the store's `rows.ts`, as the engine reads it.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { Principal } from "../../../engine/access/principal.ts";
import { StorageCorruptionError } from "../../../engine/model/result.ts";
import type { CompiledWorkflow } from "../../../engine/workflow/compiled.ts";
import { ancestorsCte, NODE_CONTEXT, nodesWithOutputs, nodesWithParent } from "../graph_sql.ts";
import { readSnapshot } from "../reader.ts";
import {
  artifactsColumn,
  contextColumn,
  decodeJsonOr,
  decodePrincipal,
  eventColumn,
  preferencesColumn,
  responseColumn,
  stateColumn,
} from "../rows.ts";
import type { ViewerDb } from "./sessions_list.ts";

/** Most nodes of one run drawn in its graph (the newest are kept). */
export const MAX_GRAPH_NODES = 2_000;
/** Most entries on the "steps on this branch" list (the nearest the focused node are kept). */
export const MAX_BRANCH_STEPS = 100;
/** Most attempts listed for one node. */
export const MAX_ATTEMPTS = 50;
/** Most nodes of one run in a Markdown export. */
export const MAX_EXPORT_NODES = 20_000;

/** One node as the run graph draws it. */
export interface GraphNodeRow {
  /** Node id (hex). */
  nodeId: string;
  /** Parent node id. */
  parentId: string | null;
  /** `step`, `checkpoint` or `blocked_attempt`. */
  kind: string;
  /** Pending step at this node (`null` once the run is complete). */
  pendingStepId: string | null;
  /** The parent's pending step: the step whose acknowledgement led here. */
  parentPendingStepId: string | null;
  /** Whether the run is complete at this node. */
  isComplete: boolean;
  /** ISO time. */
  createdAt: string;
  /** The first characters of its notes. */
  notesPreview: string | null;
}

/**
 * A run's nodes for its graph, oldest first; the newest {@linkcode MAX_GRAPH_NODES} at most.
 * Six columns only: at a thousand rows the client's per-cell cost is most of the query's time.
 */
export async function getRunNodes(
  db: ViewerDb,
  runId: string,
  options: { max?: number } = {},
): Promise<{ nodes: GraphNodeRow[]; truncated: boolean }> {
  const max = options.max ?? MAX_GRAPH_NODES;
  const rows = await nodesWithOutputs(db)
    .select([
      "n.node_id",
      "n.parent_id",
      "n.node_kind",
      "n.pending_step_id",
      "n.created_at",
      sql<string | null>`substr(o.notes_markdown, 1, 160)`.as("notes_preview"),
    ])
    .where("n.run_id", "=", runId).orderBy("n.created_seq", "desc").limit(max + 1).execute();
  const truncated = rows.length > max;
  const kept = rows.slice(0, max).reverse();
  const pendingOf = new Map(kept.map((r) => [r.node_id, r.pending_step_id]));
  if (truncated) {
    // the parents of the oldest kept nodes may be cut off: read their pending steps
    const missing = [...new Set(kept.map((r) => r.parent_id))].filter(
      (id): id is string => id !== null && !pendingOf.has(id),
    );
    for (let i = 0; i < missing.length; i += 500) {
      const parents = await db.selectFrom("nodes").select(["node_id", "pending_step_id"])
        .where("run_id", "=", runId).where("node_id", "in", missing.slice(i, i + 500)).execute();
      for (const p of parents) pendingOf.set(p.node_id, p.pending_step_id);
    }
  }
  return {
    truncated,
    nodes: kept.map((r) => ({
      nodeId: r.node_id,
      parentId: r.parent_id,
      kind: r.node_kind,
      pendingStepId: r.pending_step_id,
      parentPendingStepId: r.parent_id === null ? null : pendingOf.get(r.parent_id) ?? null,
      isComplete: r.pending_step_id === null,
      createdAt: r.created_at,
      notesPreview: r.notes_preview,
    })),
  };
}

/** An attempt made on a node (an ack or a checkpoint) with what it returned. */
export interface AttemptRow {
  /** `ack` or `checkpoint`. */
  kind: string;
  /** `advanced`, `blocked` or `checkpointed`. */
  outcome: string;
  /** The node it produced. */
  resultNodeId: string;
  /** Log sequence. */
  createdSeq: number;
  /** Blockers in the recorded response, when it was blocked. */
  blockers: unknown[];
  /** Gaps in the recorded response, when there were any. */
  gaps: unknown[];
}

/** Everything about one node. */
export interface NodeDetailRow extends GraphNodeRow {
  /** Distance from the root. */
  depth: number;
  /** Log sequence of its creation. */
  createdSeq: number;
  /** Run id. */
  runId: string;
  /** Session id. */
  sessionId: string;
  /** Interpreter state (`{v, pc}`). */
  state: unknown;
  /** Context in effect. */
  context: Record<string, unknown>;
  /** Preferences in effect. */
  preferences: Record<string, unknown>;
  /** Full notes. */
  notesMarkdown: string | null;
  /** The step the notes describe. */
  notesStepId: string | null;
  /** Artifacts recorded with the notes. */
  artifacts: unknown[];
  /** The edge kind from its parent. */
  edgeKind: string | null;
  /** The principal whose call made it (an ack, a checkpoint, a start); `null` unauthenticated. */
  madeBy: Principal | null;
  /** Direct children, oldest first. */
  children: { nodeId: string; kind: string; pendingStepId: string | null }[];
  /** Attempts made on this node, oldest first. */
  attempts: AttemptRow[];
  /** Reviews, gaps, assessments and an abort recorded at this node, oldest first (loosely). */
  events: Record<string, unknown>[];
}

/** Where a node is: its run and its id. */
export interface NodeAt {
  /** Run id (hex). */
  runId: string;
  /** Node id (hex). */
  nodeId: string;
}

function nodeDetailRow(db: ViewerDb, { runId, nodeId }: NodeAt) {
  return nodesWithParent(db)
    .leftJoin(
      "edges as e",
      (j) => j.onRef("e.run_id", "=", "n.run_id").onRef("e.to_id", "=", "n.node_id"),
    )
    .select([
      "n.run_id",
      "n.session_id",
      "n.node_id",
      "n.parent_id",
      "n.node_kind",
      "n.depth",
      "n.state",
      NODE_CONTEXT,
      "n.preferences",
      "n.pending_step_id",
      "n.is_complete",
      "n.created_seq",
      "n.created_at",
      "n.made_by",
      "p.pending_step_id as parent_pending",
      "o.notes_markdown",
      "o.step_id as notes_step_id",
      "o.artifacts",
      "e.edge_kind",
    ])
    .where("n.run_id", "=", runId).where("n.node_id", "=", nodeId).executeTakeFirst();
}

async function attemptsOn(db: ViewerDb, { runId, nodeId }: NodeAt): Promise<AttemptRow[]> {
  const rows = await db.selectFrom("attempts")
    .select(["attempt_kind", "outcome", "result_node_id", "response", "created_seq"])
    .where("run_id", "=", runId).where("node_id", "=", nodeId).orderBy("created_seq")
    .limit(MAX_ATTEMPTS).execute();
  return rows.map((a) => {
    const response = decodeJsonOr(responseColumn, a.response, null);
    return {
      kind: a.attempt_kind,
      outcome: a.outcome,
      resultNodeId: a.result_node_id,
      createdSeq: Number(a.created_seq),
      blockers: response?.blockers ?? [],
      gaps: response?.gaps ?? [],
    };
  });
}

/**
 * One node with its notes, artifacts, children and attempts, or `null`. Stored JSON that fails
 * its schema shows as empty rather than failing the page.
 */
export async function getNodeDetail(db: ViewerDb, at: NodeAt): Promise<NodeDetailRow | null> {
  const row = await nodeDetailRow(db, at);
  if (!row) return null;
  const [children, attempts, events] = await Promise.all([
    db.selectFrom("nodes").select(["node_id", "node_kind", "pending_step_id"])
      .where("run_id", "=", at.runId).where("parent_id", "=", at.nodeId).orderBy("created_seq")
      .limit(200).execute(),
    attemptsOn(db, at),
    db.selectFrom("node_events").select("payload").where("run_id", "=", at.runId)
      .where("node_id", "=", at.nodeId).orderBy("seq").limit(MAX_ATTEMPTS).execute(),
  ]);
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    nodeId: row.node_id,
    parentId: row.parent_id,
    kind: row.node_kind,
    depth: Number(row.depth),
    pendingStepId: row.pending_step_id,
    parentPendingStepId: row.parent_pending,
    isComplete: Number(row.is_complete) === 1,
    createdSeq: Number(row.created_seq),
    createdAt: row.created_at,
    notesPreview: row.notes_markdown?.slice(0, 160) ?? null,
    state: decodeJsonOr(stateColumn, row.state, null),
    context: decodeJsonOr(contextColumn, row.context, {}),
    preferences: decodeJsonOr(preferencesColumn, row.preferences, null) ?? {},
    notesMarkdown: row.notes_markdown,
    notesStepId: row.notes_step_id,
    artifacts: decodeJsonOr(artifactsColumn, row.artifacts, []),
    edgeKind: row.edge_kind,
    madeBy: decodePrincipal(row.made_by),
    children: children.map((c) => ({
      nodeId: c.node_id,
      kind: c.node_kind,
      pendingStepId: c.pending_step_id,
    })),
    attempts,
    events: events.flatMap((e) => {
      const decoded = decodeJsonOr(eventColumn, e.payload, null);
      return decoded ? [decoded] : [];
    }),
  };
}

/** One entry of a branch's history: a node with its notes. */
export interface BranchEntry {
  /** Node id. */
  nodeId: string;
  /** Node kind. */
  kind: string;
  /** The step whose acknowledgement led here (its parent's pending step). */
  completedStepId: string | null;
  /** Pending step at this node. */
  pendingStepId: string | null;
  /** Notes. */
  notesMarkdown: string | null;
  /** Artifacts. */
  artifacts: unknown[];
  /** ISO time. */
  createdAt: string;
  /** Distance from the root. */
  depth: number;
}

/**
 * The branch from the root to a node, root first: the node and its nearest
 * {@linkcode MAX_BRANCH_STEPS} - 1 ancestors at most (`omitted` says how many older ones exist).
 */
export async function getBranch(
  db: ViewerDb,
  at: NodeAt,
  options: { limit?: number } = {},
): Promise<{ entries: BranchEntry[]; omitted: number }> {
  const { runId, nodeId } = at;
  const result = await sql<{
    node_id: string;
    node_kind: string;
    pending_step_id: string | null;
    parent_pending: string | null;
    notes_markdown: string | null;
    artifacts: string | null;
    created_at: string;
    depth: number;
    hop: number;
  }>`
    ${ancestorsCte(runId, nodeId, options.limit ?? MAX_BRANCH_STEPS)}
    SELECT n.node_id, n.node_kind, n.pending_step_id, n.created_at, n.depth, up.hop,
           pp.pending_step_id AS parent_pending, o.notes_markdown, o.artifacts
    FROM up JOIN nodes n ON n.run_id = ${runId} AND n.node_id = up.node_id
    LEFT JOIN nodes pp ON pp.run_id = n.run_id AND pp.node_id = n.parent_id
    LEFT JOIN outputs o ON o.run_id = n.run_id AND o.node_id = n.node_id
    ORDER BY up.hop DESC`.execute(db);
  const entries = result.rows.map((r): BranchEntry => ({
    nodeId: r.node_id,
    kind: r.node_kind,
    completedStepId: r.node_kind === "step" ? r.parent_pending : null,
    pendingStepId: r.pending_step_id,
    notesMarkdown: r.notes_markdown,
    artifacts: decodeJsonOr(artifactsColumn, r.artifacts, []),
    createdAt: r.created_at,
    depth: Number(r.depth),
  }));
  const first = entries[0];
  return { entries, omitted: first ? first.depth : 0 };
}

/**
 * A pinned compiled workflow, read as the engine reads it (format-1 snapshots normalised), or
 * `null` when it is missing or corrupt.
 */
export async function getCompiled(db: ViewerDb, hash: string): Promise<CompiledWorkflow | null> {
  try {
    return await readSnapshot(db, hash);
  } catch (error) {
    if (error instanceof StorageCorruptionError) return null;
    throw error;
  }
}
/** A node with everything the Markdown export prints. */
export interface ExportNode extends GraphNodeRow {
  /** Log sequence of its creation. */
  createdSeq: number;
  /** Full notes. */
  notesMarkdown: string | null;
  /** Artifacts. */
  artifacts: unknown[];
}

/** A run's nodes with notes and artifacts, oldest first, for the export. */
export async function getExportNodes(
  db: ViewerDb,
  runId: string,
): Promise<{ nodes: ExportNode[]; truncated: boolean }> {
  const rows = await nodesWithParent(db)
    .select([
      "n.node_id",
      "n.parent_id",
      "n.node_kind",
      "n.pending_step_id",
      "n.is_complete",
      "n.created_seq",
      "n.created_at",
      "p.pending_step_id as parent_pending",
      "o.notes_markdown",
      "o.artifacts",
    ])
    .where("n.run_id", "=", runId).orderBy("n.created_seq").limit(MAX_EXPORT_NODES + 1)
    .execute();
  return {
    truncated: rows.length > MAX_EXPORT_NODES,
    nodes: rows.slice(0, MAX_EXPORT_NODES).map((r) => ({
      nodeId: r.node_id,
      parentId: r.parent_id,
      kind: r.node_kind,
      pendingStepId: r.pending_step_id,
      parentPendingStepId: r.parent_pending,
      isComplete: Number(r.is_complete) === 1,
      createdSeq: Number(r.created_seq),
      createdAt: r.created_at,
      notesPreview: r.notes_markdown?.slice(0, 160) ?? null,
      notesMarkdown: r.notes_markdown,
      artifacts: decodeJsonOr(artifactsColumn, r.artifacts, []),
    })),
  };
}
