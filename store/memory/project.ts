/**
 * Events to rows: what each domain event does to the in-memory tables, the same as the libSQL
 * store's projections (one `at` per append, one sequence number per event, the session's
 * `updated_at` and `event_count` moved once per append). A second row under a primary key
 * throws, as SQLite's constraint does, and the write transaction rolls back.
 * @module
 */
import type { DomainEvent } from "../../engine/mod.ts";
import { type LoggedEvent, loggedEvents, type LoggedNodeCreated } from "../sql/context_refs.ts";
import { key, type NodeRow, type Tables } from "./tables.ts";
import { searchText } from "../text_match.ts";

/** Thrown for a second row under a primary key, with SQLite's wording. */
export class ConstraintError extends Error {
  /** SQLite's result code for the same failure. */
  readonly code = "SQLITE_CONSTRAINT_PRIMARYKEY";
  /** `table` names the table whose key was taken. */
  constructor(table: string) {
    super(`SQLITE_CONSTRAINT_PRIMARYKEY: UNIQUE constraint failed: ${table} primary key`);
    this.name = "ConstraintError";
  }
}

function insert<T>(table: Map<string, T>, name: string, id: string, row: T): void {
  if (table.has(id)) throw new ConstraintError(name);
  table.set(id, row);
}

/** Appends `events` to `tables` and updates every projection, all stamped `at`. */
export function appendEvents(tables: Tables, events: readonly DomainEvent[], at: string): void {
  if (events.length === 0) return;
  const logged = loggedEvents(events, (runId, id) => tables.contexts.has(key(runId, id)));
  for (const event of logged) {
    const seq = ++tables.seq;
    tables.events.push({
      seq,
      sessionId: event.sessionId,
      runId: "runId" in event ? event.runId : null,
      kind: event.kind,
      payload: JSON.stringify(event),
      at,
    });
    project(tables, event, { seq, at });
  }
  const sessionId = events[0]!.sessionId;
  const session = tables.sessions.get(sessionId);
  if (session) {
    tables.sessions.set(sessionId, {
      ...session,
      updatedAt: at,
      eventCount: session.eventCount + events.length,
    });
  }
}

function project(tables: Tables, event: LoggedEvent, stamp: { seq: number; at: string }): void {
  const { seq, at } = stamp;
  switch (event.kind) {
    case "session_created":
      return insert(tables.sessions, "sessions", event.sessionId, {
        sessionId: event.sessionId,
        title: event.title,
        createdAt: at,
        updatedAt: at,
        health: "healthy",
        eventCount: 0,
        kind: event.sessionKind ?? "workflow",
      });
    case "run_started":
      return startRun(tables, event, at);
    case "workflow_pinned":
      if (event.compiled && !tables.snapshots.has(event.workflowHash)) {
        tables.snapshots.set(event.workflowHash, {
          workflowHash: event.workflowHash,
          workflowId: event.compiled.id,
          compiled: JSON.stringify(event.compiled),
          createdAt: at,
        });
      }
      return;
    case "node_created":
      return createNode(tables, event, stamp);
    case "edge_created":
      return insert(tables.edges, "edges", key(event.runId, event.toId), {
        runId: event.runId,
        fromId: event.fromId,
        toId: event.toId,
        edgeKind: event.edgeKind,
        createdSeq: seq,
      });
    case "output_recorded":
      return recordOutput(tables, event, seq);
    case "observation_recorded":
      return observe(tables, event, stamp);
    case "run_stacked":
      return insert(tables.runLinks, "run_links", event.runId, {
        runId: event.runId,
        sessionId: event.sessionId,
        agentId: event.agentId ?? "",
        parentRunId: event.parentRunId,
        parentNodeId: event.parentNodeId,
        jobDir: event.jobDir,
        createdSeq: seq,
        owner: event.owner ?? "",
      });
    case "stack_claimed":
      for (const [id, link] of tables.runLinks) {
        if (link.sessionId === event.sessionId && link.agentId === (event.agentId ?? "")) {
          tables.runLinks.set(id, { ...link, owner: event.owner });
        }
      }
      return;
    case "run_aborted":
    case "review_recorded":
    case "gap_recorded":
    case "assessment_recorded":
      return recordNodeEvent(tables, event, stamp);
    case "preference_changed":
    case "capability_observed":
    case "divergence_recorded":
      // The log is their record, as in the libSQL store.
      return;
    case "advance_recorded":
    case "checkpoint_recorded": {
      const attemptKind = event.kind === "advance_recorded" ? "ack" : "checkpoint";
      const id = key(event.runId, event.nodeId, event.attemptId, attemptKind);
      return insert(tables.attempts, "attempts", id, {
        runId: event.runId,
        nodeId: event.nodeId,
        attemptId: event.attemptId,
        attemptKind,
        outcome: event.kind === "advance_recorded" ? event.outcome : "checkpointed",
        resultNodeId: event.resultNodeId,
        response: event.response,
        payloadDigest: event.payloadDigest ?? null,
        createdSeq: seq,
      });
    }
  }
}

function startRun(
  tables: Tables,
  event: Extract<DomainEvent, { kind: "run_started" }>,
  at: string,
): void {
  const title = tables.sessions.get(event.sessionId)?.title;
  // The libSQL store indexes the run only when its session exists (an inner join).
  const titleText = title === undefined
    ? ""
    : `${title} ${event.goal === title ? "" : event.goal ?? ""} ${event.workflowId}`;
  insert(tables.runs, "runs", event.runId, {
    runId: event.runId,
    sessionId: event.sessionId,
    workflowId: event.workflowId,
    workflowHash: event.workflowHash,
    goal: event.goal,
    createdAt: at,
    updatedAt: at,
    lastNodeId: null,
    status: "running",
    nodeCount: 0,
    workspace: null,
    gitBranch: null,
    gitHeadSha: null,
    titleText,
    tipText: null,
  });
}

function createNode(
  tables: Tables,
  event: LoggedNodeCreated,
  stamp: { seq: number; at: string },
): void {
  const contextId = event.contextId!;
  if (event.context) {
    tables.contexts.set(key(event.runId, contextId), JSON.stringify(event.context));
  }
  const parent = event.parentId === null
    ? undefined
    : tables.nodes.get(key(event.runId, event.parentId));
  const row: NodeRow = {
    runId: event.runId,
    nodeId: event.nodeId,
    sessionId: event.sessionId,
    parentId: event.parentId,
    nodeKind: event.nodeKind,
    depth: event.depth,
    state: JSON.stringify(event.state),
    contextId,
    preferences: JSON.stringify(event.preferences),
    pendingStepId: event.pendingStepId,
    createdSeq: stamp.seq,
    createdAt: stamp.at,
    stepCount: (parent?.stepCount ?? 0) + (event.nodeKind === "step" ? 1 : 0),
  };
  insert(tables.nodes, "nodes", key(event.runId, event.nodeId), row);
  const siblings = key(event.runId, event.parentId);
  tables.children.set(siblings, [...(tables.children.get(siblings) ?? []), event.nodeId]);
  const run = tables.runs.get(event.runId);
  if (!run) return;
  tables.runs.set(event.runId, {
    ...run,
    updatedAt: stamp.at,
    lastNodeId: event.nodeKind === "blocked_attempt" ? run.lastNodeId : event.nodeId,
    nodeCount: run.nodeCount + 1,
    status: event.pendingStepId === null ? "complete" : run.status,
  });
}

function recordOutput(
  tables: Tables,
  event: Extract<DomainEvent, { kind: "output_recorded" }>,
  seq: number,
): void {
  const text = searchText(event.notesMarkdown, event.artifacts);
  insert(tables.outputs, "outputs", key(event.runId, event.nodeId), {
    runId: event.runId,
    nodeId: event.nodeId,
    stepId: event.stepId,
    notesMarkdown: event.notesMarkdown,
    artifacts: JSON.stringify(event.artifacts),
    createdSeq: seq,
    text,
  });
  const run = tables.runs.get(event.runId);
  if (run) tables.runs.set(event.runId, { ...run, tipText: text });
}

function recordNodeEvent(
  tables: Tables,
  event: Extract<
    DomainEvent,
    { kind: "run_aborted" | "review_recorded" | "gap_recorded" | "assessment_recorded" }
  >,
  stamp: { seq: number; at: string },
): void {
  tables.nodeEvents.push({
    seq: stamp.seq,
    runId: event.runId,
    nodeId: event.nodeId,
    payload: JSON.stringify(event),
  });
  const run = tables.runs.get(event.runId);
  if (event.kind === "run_aborted" && run) {
    tables.runs.set(event.runId, { ...run, status: "aborted", updatedAt: stamp.at });
  }
}

function observe(
  tables: Tables,
  event: Extract<DomainEvent, { kind: "observation_recorded" }>,
  stamp: { seq: number; at: string },
): void {
  tables.observations.push({
    seq: stamp.seq,
    sessionId: event.sessionId,
    runId: event.runId,
    nodeId: event.nodeId,
    workspace: event.workspace,
    gitBranch: event.gitBranch,
    gitHeadSha: event.gitHeadSha,
    at: stamp.at,
  });
  const run = tables.runs.get(event.runId);
  if (!run) return;
  tables.runs.set(event.runId, {
    ...run,
    workspace: event.workspace,
    gitBranch: event.gitBranch,
    gitHeadSha: event.gitHeadSha,
  });
}
