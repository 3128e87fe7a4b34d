/**
 * The in-memory store's reads: the port's queries over the tables, each returning fresh
 * objects (JSON columns are parsed on every read), so callers cannot change stored state.
 * @module
 */
import { InvariantViolationError } from "../../engine/mod.ts";
import type {
  AncestorNotes,
  AttemptKind,
  AttemptRecord,
  NodeRecord,
  RunRecord,
  StoreReader,
} from "../../engine/mod.ts";
import { key, type NodeRow, type Tables } from "./tables.ts";
import { getSession, listSessions, searchRuns } from "./search.ts";
import { checkSnapshotHash, decodeNode, decodeSnapshot } from "../sql/rows.ts";
import {
  findStackSession,
  getBranchOutputs,
  getNodeEvents,
  getStack,
  getStackFrame,
  listStacks,
} from "./stack.ts";
import { changeCounter, getBranchSteps, getRunListing, listRuns } from "./tasks.ts";

/** Snapshot rows whose hash was checked (rows are immutable, so once is enough). */
const checked = new WeakSet<object>();

/** A node record, decoded from the row the SQL reader would select (one read path). */
function toNode(tables: Tables, row: NodeRow): NodeRecord {
  const edge = tables.edges.get(key(row.runId, row.nodeId));
  const output = tables.outputs.get(key(row.runId, row.nodeId));
  return decodeNode({
    run_id: row.runId,
    node_id: row.nodeId,
    session_id: row.sessionId,
    parent_id: row.parentId,
    node_kind: row.nodeKind,
    depth: row.depth,
    state: row.state,
    context: tables.contexts.get(key(row.runId, row.contextId)),
    preferences: row.preferences,
    pending_step_id: row.pendingStepId,
    edge_kind: edge?.edgeKind ?? null,
    notes_markdown: output?.notesMarkdown ?? null,
    notes_step_id: output?.stepId ?? null,
    step_count: row.stepCount,
  });
}

function getRun(tables: Tables, runId: string): RunRecord | null {
  const run = tables.runs.get(runId);
  const session = run && tables.sessions.get(run.sessionId);
  if (!run || !session) return null;
  const observed = run.workspace !== null || run.gitBranch !== null || run.gitHeadSha !== null;
  return {
    runId: run.runId,
    sessionId: run.sessionId,
    workflowId: run.workflowId,
    workflowHash: run.workflowHash,
    corrupt: session.health === "corrupt",
    status: run.status,
    observed: observed
      ? { workspace: run.workspace, gitBranch: run.gitBranch, gitHeadSha: run.gitHeadSha }
      : null,
  };
}

function getAttempt(
  tables: Tables,
  id: { runId: string; nodeId: string; attemptId: string; kind: AttemptKind },
): AttemptRecord | null {
  const row = tables.attempts.get(key(id.runId, id.nodeId, id.attemptId, id.kind));
  const run = row && tables.runs.get(row.runId);
  const session = run && tables.sessions.get(run.sessionId);
  if (!row || !session) return null;
  return {
    nodeId: row.nodeId,
    attemptId: row.attemptId,
    outcome: row.outcome,
    resultNodeId: row.resultNodeId,
    response: row.response,
    sessionId: session.sessionId,
    corrupt: session.health === "corrupt",
    payloadDigest: row.payloadDigest,
  };
}

function childRows(tables: Tables, runId: string, nodeId: string): NodeRow[] {
  return (tables.children.get(key(runId, nodeId)) ?? [])
    .map((id) => tables.nodes.get(key(runId, id))!);
}

function getAncestorNotes(
  tables: Tables,
  at: { runId: string; nodeId: string; limit: number },
): AncestorNotes[] {
  const out: AncestorNotes[] = [];
  let row = tables.nodes.get(key(at.runId, at.nodeId));
  while (row && out.length < Math.max(1, at.limit)) {
    const output = tables.outputs.get(key(row.runId, row.nodeId));
    out.push({
      nodeId: row.nodeId,
      nodeKind: row.nodeKind,
      notesMarkdown: output?.notesMarkdown ?? null,
      notesStepId: output?.stepId ?? null,
    });
    row = row.parentId === null ? undefined : tables.nodes.get(key(at.runId, row.parentId));
  }
  return out;
}

function getPreferredTip(tables: Tables, runId: string, nodeId: string): NodeRecord {
  let tip: NodeRow | undefined;
  const pending = [nodeId];
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    const row = tables.nodes.get(key(runId, id));
    if (row && row.nodeKind !== "blocked_attempt" && (!tip || row.createdSeq > tip.createdSeq)) {
      tip = row;
    }
    pending.push(...(tables.children.get(key(runId, id)) ?? []));
  }
  const found = tip ?? tables.nodes.get(key(runId, nodeId));
  if (!found) {
    throw new InvariantViolationError(`The preferred tip of node ${nodeId} is not stored`, {
      invariant: "tip_exists",
      runId,
      nodeId,
    });
  }
  return toNode(tables, found);
}

/** The port's reads over the tables `current()` returns at each call. */
export function reader(current: () => Tables): StoreReader {
  return {
    getRun: (runId) => Promise.resolve(getRun(current(), runId)),
    getNode(runId, nodeId) {
      const tables = current();
      const row = tables.nodes.get(key(runId, nodeId));
      return Promise.resolve().then(() => row ? toNode(tables, row) : null);
    },
    getAttempt: (runId, nodeId, attemptId, kind) =>
      Promise.resolve(getAttempt(current(), { runId, nodeId, attemptId, kind })),
    getChildren(runId, nodeId) {
      const tables = current();
      const rows = childRows(tables, runId, nodeId).filter((r) => r.nodeKind !== "blocked_attempt");
      return Promise.resolve().then(() => rows.map((r) => toNode(tables, r)));
    },
    getAncestorNotes: (runId, nodeId, limit) =>
      Promise.resolve(getAncestorNotes(current(), { runId, nodeId, limit })),
    getPreferredTip: (runId, nodeId) =>
      Promise.resolve().then(() => getPreferredTip(current(), runId, nodeId)),
    getSnapshot(hash) {
      const row = current().snapshots.get(hash);
      // The SQL store's decoder and hash check (rows are immutable, so each is checked once).
      return Promise.resolve().then(() => {
        if (!row) return null;
        const compiled = decodeSnapshot(row.compiled, hash);
        if (!checked.has(row)) checkSnapshotHash(row.compiled, hash);
        checked.add(row);
        return compiled;
      });
    },
    searchRuns: (layer, query) => Promise.resolve(searchRuns(current(), { layer, query })),
    listSessions: (options) => Promise.resolve(listSessions(current(), options)),
    getSession: (sessionId) => Promise.resolve(getSession(current(), sessionId)),
    getStack: (sessionId, agentId) => Promise.resolve(getStack(current(), { sessionId, agentId })),
    findStackSession: (workspace, at) =>
      Promise.resolve(findStackSession(current(), { workspace, ...at })),
    listStacks: (workspace, at) => Promise.resolve(listStacks(current(), { workspace, ...at })),
    getStackFrame: (runId) => Promise.resolve(getStackFrame(current(), runId)),
    getNodeEvents: (runId, nodeId) => Promise.resolve(getNodeEvents(current(), { runId, nodeId })),
    getBranchOutputs: (runId, nodeId, limit) =>
      Promise.resolve(getBranchOutputs(current(), { runId, nodeId, limit })),
    getBranchSteps: (runId, nodeId, limit) =>
      Promise.resolve().then(() => getBranchSteps(current(), { runId, nodeId, limit })),
    getRunListing: (runId) => Promise.resolve(getRunListing(current(), runId)),
    listRuns: (page) => Promise.resolve(listRuns(current(), page)),
    changeCounter: () => Promise.resolve(changeCounter(current())),
  };
}
