/**
 * How each event updates the projection rows (every table but `events`), inside the
 * transaction that appends it. Full-text index writes go through the dialect.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { LoggedEvent } from "./context_refs.ts";
import type { FullTextSearch } from "./dialect.ts";
import { type Executor, isTipCandidate } from "./graph_sql.ts";
import { prepare } from "./prepared.ts";
import { digest } from "./rows.ts";
import type { Database } from "./database.ts";
import { searchText } from "./search.ts";
import { DEFAULT_RUN_ACCESS } from "../../engine/access/team_policy.ts";

/** Where an event lands: its transaction, its log sequence and time, the dialect's index. */
export interface ProjectionScope {
  /** The appending transaction. */
  tx: Executor;
  /** The dialect's full-text search. */
  search: FullTextSearch;
  /**
   * The event's log sequence. On PostgreSQL it may be a `PendingSeq` (`dialect.ts`) standing
   * for the number until the statement that binds it runs: bind it as a value, never read it.
   */
  seq: number;
  /** The append time. */
  at: string;
  /** The event's JSON as logged, when the caller has it (not serialised again). */
  payload?: string;
}

type EventOf<K extends LoggedEvent["kind"]> = Extract<LoggedEvent, { kind: K }>;

const insertSession = prepare((
  db,
  p: { id: string; title: string; at: string; kind: string },
) =>
  db.insertInto("sessions").values({
    session_id: p.id,
    title: p.title,
    created_at: p.at,
    updated_at: p.at,
    health: "healthy",
    event_count: 0,
    kind: p.kind,
  })
);

async function sessionCreated(s: ProjectionScope, event: EventOf<"session_created">) {
  await insertSession.execute(s.tx, {
    id: event.sessionId,
    title: event.title,
    at: s.at,
    kind: event.sessionKind ?? "workflow",
  });
}

const insertRun = prepare((
  db,
  p: {
    runId: string;
    sessionId: string;
    workflowId: string;
    workflowHash: string;
    goal: string | null;
    at: string;
    owner: string | null;
    ownerSubject: string | null;
    access: string | null;
  },
) =>
  db.insertInto("runs").values({
    run_id: p.runId,
    session_id: p.sessionId,
    workflow_id: p.workflowId,
    workflow_hash: p.workflowHash,
    goal: p.goal,
    owner: p.owner,
    owner_subject: p.ownerSubject,
    access: p.access,
    created_at: p.at,
    updated_at: p.at,
    last_node_id: null,
    status: "running",
    node_count: 0,
  })
);

async function runStarted(s: ProjectionScope, event: EventOf<"run_started">) {
  const { principal } = event;
  await insertRun.execute(s.tx, {
    ...event,
    at: s.at,
    owner: principal ? JSON.stringify(principal) : null,
    ownerSubject: principal?.subject ?? null,
    // a run without an owner has nothing to guard
    access: principal ? event.access ?? DEFAULT_RUN_ACCESS : null,
  });
  await s.search.indexRun(s.tx, event.runId);
}

async function workflowPinned(s: ProjectionScope, event: EventOf<"workflow_pinned">) {
  if (!event.compiled) return;
  await s.tx.insertInto("workflow_snapshots").values({
    workflow_hash: event.workflowHash,
    workflow_id: event.compiled.id,
    compiled: JSON.stringify(event.compiled),
    created_at: s.at,
  }).onConflict((oc) => oc.doNothing()).execute();
}

const insertContext = prepare((db, p: { runId: string; contextId: string; context: string }) =>
  db.insertInto("contexts").values({
    run_id: p.runId,
    context_id: p.contextId,
    context: p.context,
  }).onConflict((oc) => oc.doNothing())
);

type NodeRow = Omit<Database["nodes"], "step_count"> & { stepIncrement: number };

const insertNode = prepare((db, p: NodeRow) =>
  db.insertInto("nodes").values({
    run_id: p.run_id,
    node_id: p.node_id,
    session_id: p.session_id,
    parent_id: p.parent_id,
    node_kind: p.node_kind,
    depth: p.depth,
    state: p.state,
    context: p.context,
    context_id: p.context_id,
    preferences: p.preferences,
    pending_step_id: p.pending_step_id,
    is_complete: p.is_complete,
    created_seq: p.created_seq,
    created_at: p.created_at,
    made_by: p.made_by,
    // step nodes from the root: the parent's count, plus one for a step node
    step_count: sql<number>`coalesce((SELECT p.step_count FROM nodes p
      WHERE p.run_id = ${p.run_id} AND p.node_id = ${p.parent_id}), 0) + ${p.stepIncrement}`,
  })
);

/** A node added to its run: counted, the preferred tip when it is one, complete when it is. */
const runGrown = prepare((
  db,
  p: { runId: string; at: string; tip: string | null; status: string | null },
) =>
  db.updateTable("runs").set((eb) => ({
    updated_at: p.at,
    last_node_id: eb.fn.coalesce(eb.val(p.tip), "last_node_id"),
    node_count: eb("node_count", "+", 1),
    status: eb.fn.coalesce(eb.val(p.status), "status"),
  })).where("run_id", "=", p.runId)
);

async function nodeCreated(s: ProjectionScope, event: EventOf<"node_created">) {
  const { contextId } = event;
  if (contextId && event.context) {
    await insertContext.execute(s.tx, {
      runId: event.runId,
      contextId,
      context: JSON.stringify(event.context),
    });
  }
  await insertNode.execute(s.tx, {
    run_id: event.runId,
    node_id: event.nodeId,
    session_id: event.sessionId,
    parent_id: event.parentId,
    node_kind: event.nodeKind,
    depth: event.depth,
    state: JSON.stringify(event.state),
    // by reference, or inline as logged before context ids
    context: contextId ? "" : JSON.stringify(event.context),
    context_id: contextId ?? null,
    preferences: JSON.stringify(event.preferences),
    pending_step_id: event.pendingStepId,
    is_complete: event.pendingStepId === null ? 1 : 0,
    created_seq: s.seq,
    created_at: s.at,
    made_by: event.principal ? JSON.stringify(event.principal) : null,
    stepIncrement: event.nodeKind === "step" ? 1 : 0,
  });
  // the newest tip candidate is the run's preferred tip
  await runGrown.execute(s.tx, {
    runId: event.runId,
    at: s.at,
    tip: isTipCandidate(event.nodeKind) ? event.nodeId : null,
    status: event.pendingStepId === null ? "complete" : null,
  });
}

const insertOutput = prepare((db, p: Database["outputs"]) =>
  db.insertInto("outputs").values({
    run_id: p.run_id,
    node_id: p.node_id,
    step_id: p.step_id,
    notes_markdown: p.notes_markdown,
    artifacts: p.artifacts,
    created_seq: p.created_seq,
  })
);

async function outputRecorded(s: ProjectionScope, event: EventOf<"output_recorded">) {
  await insertOutput.execute(s.tx, {
    run_id: event.runId,
    node_id: event.nodeId,
    step_id: event.stepId,
    notes_markdown: event.notesMarkdown,
    artifacts: JSON.stringify(event.artifacts),
    created_seq: s.seq,
  });
  const text = searchText(event.notesMarkdown, event.artifacts);
  await s.search.indexOutput(s.tx, { runId: event.runId, nodeId: event.nodeId, text });
}

const insertObservation = prepare((db, p: Database["observations"]) =>
  db.insertInto("observations").values({
    seq: p.seq,
    session_id: p.session_id,
    run_id: p.run_id,
    node_id: p.node_id,
    workspace: p.workspace,
    git_branch: p.git_branch,
    git_head_sha: p.git_head_sha,
    at: p.at,
  })
);

const runObserved = prepare((
  db,
  p: { runId: string; workspace: string | null; branch: string | null; head: string | null },
) =>
  db.updateTable("runs").set({
    workspace: p.workspace,
    git_branch: p.branch,
    git_head_sha: p.head,
  }).where("run_id", "=", p.runId)
);

async function observationRecorded(s: ProjectionScope, event: EventOf<"observation_recorded">) {
  await insertObservation.execute(s.tx, {
    seq: s.seq,
    session_id: event.sessionId,
    run_id: event.runId,
    node_id: event.nodeId,
    workspace: event.workspace,
    git_branch: event.gitBranch,
    git_head_sha: event.gitHeadSha,
    at: s.at,
  });
  await runObserved.execute(s.tx, {
    runId: event.runId,
    workspace: event.workspace,
    branch: event.gitBranch,
    head: event.gitHeadSha,
  });
}

const insertAttempt = prepare((db, p: Database["attempts"]) =>
  db.insertInto("attempts").values({
    run_id: p.run_id,
    node_id: p.node_id,
    attempt_id: p.attempt_id,
    attempt_kind: p.attempt_kind,
    outcome: p.outcome,
    result_node_id: p.result_node_id,
    response: p.response,
    response_digest: p.response_digest,
    created_seq: p.created_seq,
    payload_digest: p.payload_digest,
  })
);

async function attemptRecorded(
  s: ProjectionScope,
  event: EventOf<"advance_recorded" | "checkpoint_recorded">,
) {
  const advance = event.kind === "advance_recorded";
  await insertAttempt.execute(s.tx, {
    run_id: event.runId,
    node_id: event.nodeId,
    attempt_id: event.attemptId,
    attempt_kind: advance ? "ack" : "checkpoint",
    outcome: advance ? event.outcome : "checkpointed",
    result_node_id: event.resultNodeId,
    response: event.response,
    response_digest: digest(event.response),
    created_seq: s.seq,
    payload_digest: event.payloadDigest ?? null,
  });
}

const insertRunLink = prepare((db, p: Database["run_links"]) =>
  db.insertInto("run_links").values({
    run_id: p.run_id,
    session_id: p.session_id,
    agent_id: p.agent_id,
    parent_run_id: p.parent_run_id,
    parent_node_id: p.parent_node_id,
    job_dir: p.job_dir,
    created_seq: p.created_seq,
    owner: p.owner,
  })
);

const claimStack = prepare((db, p: { sessionId: string; agentId: string; owner: string }) =>
  db.updateTable("run_links").set({ owner: p.owner })
    .where("session_id", "=", p.sessionId).where("agent_id", "=", p.agentId)
);

async function runStacked(s: ProjectionScope, event: EventOf<"run_stacked">) {
  await insertRunLink.execute(s.tx, {
    run_id: event.runId,
    session_id: event.sessionId,
    agent_id: event.agentId ?? "",
    parent_run_id: event.parentRunId,
    parent_node_id: event.parentNodeId,
    job_dir: event.jobDir,
    created_seq: s.seq,
    owner: event.owner ?? "",
  });
}

const insertDelegation = prepare((db, p: Database["run_delegations"]) =>
  db.insertInto("run_delegations").values({
    run_id: p.run_id,
    session_id: p.session_id,
    parent_run_id: p.parent_run_id,
    parent_node_id: p.parent_node_id,
    step_id: p.step_id,
    idx: p.idx,
    created_seq: p.created_seq,
  })
);

async function runDelegated(s: ProjectionScope, event: EventOf<"run_delegated">) {
  await insertDelegation.execute(s.tx, {
    run_id: event.runId,
    session_id: event.sessionId,
    parent_run_id: event.parentRunId,
    parent_node_id: event.parentNodeId,
    step_id: event.stepId,
    idx: event.index,
    created_seq: s.seq,
  });
}

const insertPass = prepare((db, p: Database["review_passes"]) =>
  db.insertInto("review_passes").values({
    session_id: p.session_id,
    review_id: p.review_id,
    rule: p.rule,
    files: p.files,
    principal: p.principal,
    created_seq: p.created_seq,
    created_at: p.created_at,
  })
);

async function reviewPassed(s: ProjectionScope, event: EventOf<"review_passed">) {
  await insertPass.execute(s.tx, {
    session_id: event.sessionId,
    review_id: event.reviewId,
    rule: event.rule,
    files: JSON.stringify(event.files),
    principal: event.principal ? JSON.stringify(event.principal) : null,
    created_seq: s.seq,
    created_at: s.at,
  });
}

const insertNodeEvent = prepare((db, p: Database["node_events"]) =>
  db.insertInto("node_events").values({
    seq: p.seq,
    session_id: p.session_id,
    run_id: p.run_id,
    node_id: p.node_id,
    kind: p.kind,
    payload: p.payload,
  })
);

const runAborted = prepare((db, p: { runId: string; at: string }) =>
  db.updateTable("runs").set({ status: "aborted", updated_at: p.at }).where("run_id", "=", p.runId)
);

async function nodeEvent(
  s: ProjectionScope,
  event: EventOf<
    | "run_aborted"
    | "review_recorded"
    | "gap_recorded"
    | "assessment_recorded"
    | "delegations_settled"
    | "delegations_collected"
    | "evidence_recorded"
    | "usage_recorded"
    | "snapshot_recorded"
  >,
) {
  await insertNodeEvent.execute(s.tx, {
    seq: s.seq,
    session_id: event.sessionId,
    run_id: event.runId,
    node_id: event.nodeId,
    kind: event.kind,
    payload: s.payload ?? JSON.stringify(event),
  });
  if (event.kind === "run_aborted") {
    await runAborted.execute(s.tx, { runId: event.runId, at: s.at });
  }
}

const insertEdge = prepare((db, p: Database["edges"]) =>
  db.insertInto("edges").values({
    run_id: p.run_id,
    from_id: p.from_id,
    to_id: p.to_id,
    edge_kind: p.edge_kind,
    created_seq: p.created_seq,
  })
);

/** Updates the projections for one event just appended (as logged). */
export async function project(scope: ProjectionScope, event: LoggedEvent): Promise<void> {
  switch (event.kind) {
    case "session_created":
      return await sessionCreated(scope, event);
    case "run_started":
      return await runStarted(scope, event);
    case "workflow_pinned":
      return await workflowPinned(scope, event);
    case "node_created":
      return await nodeCreated(scope, event);
    case "edge_created":
      await insertEdge.execute(scope.tx, {
        run_id: event.runId,
        from_id: event.fromId,
        to_id: event.toId,
        edge_kind: event.edgeKind,
        created_seq: scope.seq,
      });
      return;
    case "output_recorded":
      return await outputRecorded(scope, event);
    case "observation_recorded":
      return await observationRecorded(scope, event);
    case "advance_recorded":
    case "checkpoint_recorded":
      return await attemptRecorded(scope, event);
    case "run_stacked":
      return await runStacked(scope, event);
    case "stack_claimed":
      await claimStack.execute(scope.tx, {
        sessionId: event.sessionId,
        agentId: event.agentId ?? "",
        owner: event.owner,
      });
      return;
    case "run_delegated":
      return await runDelegated(scope, event);
    case "review_passed":
      return await reviewPassed(scope, event);
    case "run_aborted":
    case "review_recorded":
    case "gap_recorded":
    case "assessment_recorded":
    case "delegations_settled":
    case "delegations_collected":
    case "evidence_recorded":
    case "usage_recorded":
    case "snapshot_recorded":
      return await nodeEvent(scope, event);
    case "preference_changed":
    case "capability_observed":
    case "divergence_recorded":
      // The log is their record; the viewer's projections of them come with the viewer.
      return;
  }
}
