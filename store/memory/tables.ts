/**
 * The in-memory store's tables: the rows the libSQL schema holds, kept in maps. Rows are never
 * mutated once stored (an update stores a new row), so a write transaction can work on a
 * shallow copy of the maps and commit by swapping it in.
 * @module
 */
import type {
  AttemptKind,
  AttemptOutcome,
  EdgeKind,
  NodeKind,
  RunStatus,
  SessionHealth,
  SessionKind,
} from "../../engine/mod.ts";

/** A logged event (the `events` table). */
export interface EventRow {
  seq: number;
  sessionId: string;
  runId: string | null;
  kind: string;
  payload: string;
  at: string;
}

/** A session (the `sessions` table). */
export interface SessionRow {
  sessionId: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  health: SessionHealth;
  eventCount: number;
  kind: SessionKind;
}

/** A run, with the texts the libSQL store keeps in its `search_titles` and `search_tips`. */
export interface RunRow {
  runId: string;
  sessionId: string;
  workflowId: string;
  workflowHash: string;
  goal: string | null;
  createdAt: string;
  updatedAt: string;
  lastNodeId: string | null;
  status: RunStatus;
  nodeCount: number;
  workspace: string | null;
  gitBranch: string | null;
  gitHeadSha: string | null;
  /** Session title, goal and workflow id, as indexed when the run started. */
  titleText: string;
  /** The run's latest output text (notes and artifact preview), or `null` before any. */
  tipText: string | null;
}

/** A node; JSON columns stay strings so every read parses a fresh copy. */
export interface NodeRow {
  runId: string;
  nodeId: string;
  sessionId: string;
  parentId: string | null;
  nodeKind: NodeKind;
  depth: number;
  state: string;
  /** The node's context in {@linkcode Tables.contexts} (stored once per change, as in libSQL). */
  contextId: string;
  preferences: string;
  pendingStepId: string | null;
  createdSeq: number;
  createdAt: string;
  stepCount: number;
}

/** An edge, keyed by the node it leads to. */
export interface EdgeRow {
  runId: string;
  fromId: string;
  toId: string;
  edgeKind: EdgeKind;
  createdSeq: number;
}

/** A recorded attempt with its exact response. */
export interface AttemptRow {
  runId: string;
  nodeId: string;
  attemptId: string;
  attemptKind: AttemptKind;
  outcome: AttemptOutcome;
  resultNodeId: string;
  response: string;
  /** The digest of the payload the attempt was made with. */
  payloadDigest: string | null;
  createdSeq: number;
}

/** A durable output, with its indexed text (what `search_outputs` holds). */
export interface OutputRow {
  runId: string;
  nodeId: string;
  stepId: string | null;
  notesMarkdown: string | null;
  artifacts: string;
  createdSeq: number;
  text: string;
}

/** A workspace observation. */
export interface ObservationRow {
  seq: number;
  sessionId: string;
  runId: string;
  nodeId: string;
  workspace: string | null;
  gitBranch: string | null;
  gitHeadSha: string | null;
  at: string;
}

/** A run on a workflow stack. */
export interface RunLinkRow {
  runId: string;
  sessionId: string;
  /** `""` for the main agent, as the libSQL column. */
  agentId: string;
  parentRunId: string | null;
  parentNodeId: string | null;
  jobDir: string | null;
  createdSeq: number;
  /** The connection holding the stack; `""` when unknown. */
  owner: string;
}

/** An event recorded at a node (review, gap, abort), as JSON. */
export interface NodeEventRow {
  seq: number;
  runId: string;
  nodeId: string;
  payload: string;
}

/** A pinned compiled workflow, as JSON text. */
export interface SnapshotRow {
  workflowHash: string;
  workflowId: string;
  compiled: string;
  createdAt: string;
}

/** Every table; map keys are the libSQL primary keys joined with `:`. */
export interface Tables {
  /** The last event sequence number handed out. */
  seq: number;
  events: EventRow[];
  sessions: Map<string, SessionRow>;
  runs: Map<string, RunRow>;
  snapshots: Map<string, SnapshotRow>;
  nodes: Map<string, NodeRow>;
  /** Each distinct context of a run, as JSON text, by `run:contextId`. */
  contexts: Map<string, string>;
  /** Child node ids by `run:parent`, oldest first (the `nodes_by_parent` index). */
  children: Map<string, readonly string[]>;
  edges: Map<string, EdgeRow>;
  attempts: Map<string, AttemptRow>;
  outputs: Map<string, OutputRow>;
  observations: ObservationRow[];
  /** Stacked runs by run id. */
  runLinks: Map<string, RunLinkRow>;
  /** Node events in log order. */
  nodeEvents: NodeEventRow[];
}

/** Row counts under the libSQL store's table names, as its `counts()` reports them. */
export interface TableCounts {
  events: number;
  sessions: number;
  runs: number;
  workflow_snapshots: number;
  nodes: number;
  edges: number;
  attempts: number;
  outputs: number;
}

/** Empty tables. */
export function emptyTables(): Tables {
  return {
    seq: 0,
    events: [],
    sessions: new Map(),
    runs: new Map(),
    snapshots: new Map(),
    nodes: new Map(),
    contexts: new Map(),
    children: new Map(),
    edges: new Map(),
    attempts: new Map(),
    outputs: new Map(),
    observations: [],
    runLinks: new Map(),
    nodeEvents: [],
  };
}

/** A copy a transaction may change without touching `tables` (rows are shared: immutable). */
export function copyTables(tables: Tables): Tables {
  return {
    seq: tables.seq,
    events: [...tables.events],
    sessions: new Map(tables.sessions),
    runs: new Map(tables.runs),
    snapshots: new Map(tables.snapshots),
    nodes: new Map(tables.nodes),
    contexts: new Map(tables.contexts),
    children: new Map(tables.children),
    edges: new Map(tables.edges),
    attempts: new Map(tables.attempts),
    outputs: new Map(tables.outputs),
    observations: [...tables.observations],
    runLinks: new Map(tables.runLinks),
    nodeEvents: [...tables.nodeEvents],
  };
}

/** The map key of a row: its primary key columns joined. */
export function key(...parts: readonly (string | null)[]): string {
  return parts.join(":");
}

/** Row counts of `tables`. */
export function countRows(tables: Tables): TableCounts {
  return {
    events: tables.events.length,
    sessions: tables.sessions.size,
    runs: tables.runs.size,
    workflow_snapshots: tables.snapshots.size,
    nodes: tables.nodes.size,
    edges: tables.edges.size,
    attempts: tables.attempts.size,
    outputs: tables.outputs.size,
  };
}
