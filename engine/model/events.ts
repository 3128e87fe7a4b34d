/**
 * Domain events: the append-only truth. Use-cases decide which events a call produces; a store
 * appends them and updates its projections in the same transaction.
 * @module
 */
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import type { RunState } from "../workflow/interpreter.ts";
import type { Preferences } from "./preferences.ts";
import type { WorkspaceObservation } from "./workspace.ts";
import type { Evidence } from "../verification/evidence.ts";
import type { Principal } from "../access/principal.ts";
import type { UsageEvent } from "../cost/usage_event.ts";
import type { SnapshotChanges, SnapshotNotice, WorkspaceSnapshot } from "./snapshots.ts";
import type {
  AdvanceOutcome,
  Capability,
  CapabilityStatus,
  DelegationStatus,
  EdgeKind,
  EVENT_KINDS,
  GapSeverity,
  NodeKind,
  Reviewer,
  ReviewVerdict,
  RunAccess,
  SessionKind,
} from "./vocabulary.ts";

/** An artifact an agent recorded: a small structured payload with a kind. */
export interface Artifact {
  /** Artifact kind (free-form until contracts say otherwise). */
  kind: string;
  /** The payload. */
  [key: string]: unknown;
}

/** The fields every node has. */
export interface NodeFacts {
  /** Run id (hex). */
  runId: string;
  /** Node id (hex), unique within its run. */
  nodeId: string;
  /** Parent node, or `null` for a run's root. */
  parentId: string | null;
  /** Node kind. */
  nodeKind: NodeKind;
  /** Distance from the root. */
  depth: number;
  /** Interpreter state: where the run stands at this node. */
  state: RunState;
  /** Context in effect at this node. */
  context: Record<string, unknown>;
  /** Preferences in effect at this node and its descendants. */
  preferences: Preferences;
  /** Pending step id, or `null` once the run is complete. */
  pendingStepId: string | null;
}

/**
 * Who wrote an event: every event an authenticated call appends names its principal (`principal`);
 * a local call with no authentication writes none. It is part of the event's payload, so the
 * log's digests cover it and bundles carry it.
 */
export interface Attribution {
  /** The principal whose call appended the event; absent for an unauthenticated call. */
  principal?: Principal;
}

/** Everything that can happen, as data, with who made it happen. */
export type DomainEvent = EventBody & Attribution;

/** Everything that can happen, as data. */
type EventBody =
  | {
    kind: "session_created";
    sessionId: string;
    title: string;
    /** `notes` for a checkpoint-only session from `start_session`; absent means `workflow`. */
    sessionKind?: SessionKind;
  }
  | {
    kind: "run_started";
    sessionId: string;
    runId: string;
    workflowId: string;
    workflowHash: string;
    goal: string | null;
    /** Who besides its starter may act on it (`team_policy.ts`); absent: no owner to guard. */
    access?: RunAccess;
  }
  | {
    kind: "workflow_pinned";
    sessionId: string;
    runId: string;
    workflowHash: string;
    /** The compiled snapshot, present the first time a hash is stored. */
    compiled: CompiledWorkflow | null;
  }
  | ({ kind: "node_created"; sessionId: string } & NodeFacts)
  | {
    kind: "edge_created";
    sessionId: string;
    runId: string;
    fromId: string;
    toId: string;
    edgeKind: EdgeKind;
  }
  | {
    kind: "output_recorded";
    sessionId: string;
    runId: string;
    nodeId: string;
    stepId: string | null;
    notesMarkdown: string | null;
    artifacts: Artifact[];
  }
  | {
    kind: "observation_recorded";
    sessionId: string;
    runId: string;
    /** The node the call that observed it created (or the root, at start). */
    nodeId: string;
  } & WorkspaceObservation
  | {
    kind: "preference_changed";
    sessionId: string;
    runId: string;
    nodeId: string;
    preferences: Preferences;
  }
  | {
    kind: "advance_recorded";
    sessionId: string;
    runId: string;
    nodeId: string;
    attemptId: string;
    outcome: AdvanceOutcome;
    resultNodeId: string;
    /** The exact response returned, replayed byte for byte. */
    response: string;
    /** SHA-256 of the call's payload (see `payloadDigest`), to tell a replay that differs. */
    payloadDigest?: string;
  }
  | {
    kind: "gap_recorded";
    sessionId: string;
    runId: string;
    nodeId: string;
    stepId: string | null;
    severity: GapSeverity;
    /** The blocker code the gap stands for, or `AGENT_DISCLOSED`. */
    code: string;
    pointer: Record<string, string> | null;
    message: string;
  }
  | {
    kind: "capability_observed";
    sessionId: string;
    runId: string;
    nodeId: string;
    stepId: string | null;
    capability: Capability;
    status: CapabilityStatus;
    remediation: string | null;
  }
  | {
    kind: "divergence_recorded";
    sessionId: string;
    runId: string;
    nodeId: string;
    stepId: string | null;
    reason: string;
    summary: string;
    relatedStepId: string | null;
  }
  | {
    kind: "assessment_recorded";
    sessionId: string;
    runId: string;
    /** The node the acknowledgement created (the new step, or the blocked attempt). */
    nodeId: string;
    stepId: string | null;
    assessmentId: string;
    /** Dimension id → the level recorded, in declared order. */
    dimensions: Record<string, string>;
  }
  | {
    kind: "checkpoint_recorded";
    sessionId: string;
    runId: string;
    nodeId: string;
    attemptId: string;
    resultNodeId: string;
    /** The exact response returned, replayed byte for byte. */
    response: string;
    /** SHA-256 of the call's payload (see `payloadDigest`), to tell a replay that differs. */
    payloadDigest?: string;
  }
  | ({
    /** A step's verification command as the server ran it (or why it did not) on an ack. */
    kind: "evidence_recorded";
    sessionId: string;
    runId: string;
    /** The node the acknowledgement created (the new step, or the blocked attempt). */
    nodeId: string;
    /** The step acknowledged. */
    stepId: string | null;
    /** The attempt id of the ack token. */
    attemptId: string;
  } & Evidence)
  | SnapshotEvent
  | StackEvent
  | DelegationEvent
  | ReviewPassedEvent
  | UsageEvent;

/**
 * The workspace's files as a git snapshot taken for a node (at a run's start, an
 * acknowledgement or a checkpoint; `snapshots.ts`), with what changed since the parent node's
 * snapshot, or why none was taken (`notice`).
 */
export interface SnapshotEvent {
  kind: "snapshot_recorded";
  sessionId: string;
  runId: string;
  /** The node the call created (the root at start; the new step, the blocked attempt, the checkpoint). */
  nodeId: string;
  /** The snapshot (`commit` is `null` when none was taken). */
  snapshot: WorkspaceSnapshot;
  /** Changes since the parent node's snapshot; `null` at a root or when the parent has none. */
  changes: SnapshotChanges | null;
  /** Why no snapshot was taken, or what it left out. */
  notice?: SnapshotNotice;
  /** Who took it, when the call was authenticated. */
  principal?: Principal;
}

/**
 * A review found nothing left to fix (`mark_review_as_passed`), recorded in its workspace's
 * reviews session: while its files keep these contents, the review is not handed out again.
 */
export interface ReviewPassedEvent {
  kind: "review_passed";
  sessionId: string;
  /** The review's id (`plan.ts`: the rule, its file, the files and their contents). */
  reviewId: string;
  /** The rule's name. */
  rule: string;
  /** The file that states the rule (a project path, or `bundled:<name>`). */
  definedIn: string;
  /** The files reviewed, with the SHA-256 of the content that passed. */
  files: { path: string; sha256: string }[];
  /** Who passed it, when the call was authenticated; absent otherwise. */
  principal?: Principal;
}

/** What a settled child run left for its parent's synthesis step, bounded. */
export interface DelegationDigest {
  /** The child run (hex). */
  runId: string;
  /** Its delegation's position in the parallel step, from 0. */
  index: number;
  /** The child's workflow. */
  workflowId: string;
  /** The delegation's goal, or `null`. */
  goal: string | null;
  /** How it ended. */
  status: Exclude<DelegationStatus, "open">;
  /** The notes of its last acknowledged step (or the abort's explanation), cut to a budget. */
  notesMarkdown: string | null;
  /** The artifacts of its last acknowledged step, or `[]` when they did not fit the budget. */
  artifacts: Artifact[];
  /** Whether notes or artifacts were cut. */
  truncated: boolean;
}

/**
 * Events of delegation: a parallel step's child runs (one per delegation that applies, in the
 * parent's session), the moment the last of them ended, and what the synthesis step was given.
 */
export type DelegationEvent =
  | {
    /** A child run opened for one delegation; its `run_started` comes just before. */
    kind: "run_delegated";
    sessionId: string;
    /** The child run. */
    runId: string;
    /** The parent run and the node whose pending step is the parallel step. */
    parentRunId: string;
    parentNodeId: string;
    /** The parallel step's id. */
    stepId: string;
    /** The delegation's position in the step's `parallelDelegations`, from 0. */
    index: number;
  }
  | {
    /** Every child of a parent node has ended (recorded once, by the call that ended the last). */
    kind: "delegations_settled";
    sessionId: string;
    /** The parent run and node. */
    runId: string;
    nodeId: string;
    stepId: string | null;
    /** The child run whose completion or abort settled them. */
    by: string;
  }
  | {
    /** The children's outcomes as the synthesis step at this node was given them. */
    kind: "delegations_collected";
    sessionId: string;
    runId: string;
    /** The node whose pending step is the synthesis step. */
    nodeId: string;
    stepId: string | null;
    children: DelegationDigest[];
  };

/** One criterion of a review verdict. */
export interface CriterionResult {
  /** The criterion's name. */
  criterion: string;
  /** Whether it was met. */
  passed: boolean;
  /** What the reviewer said about it. */
  feedback?: string;
}

/**
 * Events of runs that nest (DeepWork's workflow stack), end early, and have their outputs
 * reviewed. Each is recorded at a node, so the viewer shows it there.
 */
export type StackEvent =
  | {
    kind: "run_stacked";
    sessionId: string;
    runId: string;
    /** The sub-agent whose stack this is; `null` for the main agent. */
    agentId: string | null;
    /** The run (and the node of it) that was current when this one was pushed; `null` at the bottom. */
    parentRunId: string | null;
    parentNodeId: string | null;
    /** The job's folder when the run started, for `begin_step.job_dir`. */
    jobDir: string | null;
    /** The connection holding the stack; absent in logs written before stacks had holders. */
    owner?: string;
  }
  | {
    /** A connection took over a stack whose holder is gone (after a crash or a restart). */
    kind: "stack_claimed";
    sessionId: string;
    /** The stack's agent (`null`: the main agent). */
    agentId: string | null;
    /** The holder it had. */
    from: string;
    /** The new holder. */
    owner: string;
  }
  | {
    kind: "run_aborted";
    sessionId: string;
    runId: string;
    /** The node the run stood at. */
    nodeId: string;
    stepId: string | null;
    explanation: string;
  }
  | {
    kind: "review_recorded";
    sessionId: string;
    runId: string;
    /** The node whose pending step was reviewed. */
    nodeId: string;
    stepId: string | null;
    reviewer: Reviewer;
    verdict: ReviewVerdict;
    /** The attempt's number among this reviewer's reviews of the step at this node, from 1. */
    attempt: number;
    feedback: string;
    criteria: CriterionResult[] | null;
    /** Where self-review instructions were written, when they were. */
    file: string | null;
  };

/** The kind names of {@linkcode DomainEvent}. */
export type EventKind = DomainEvent["kind"];

// `EVENT_KINDS` names every event kind and nothing else (a compile error otherwise)
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _everyKindListed: Same<EventKind, typeof EVENT_KINDS[number]> = true;
