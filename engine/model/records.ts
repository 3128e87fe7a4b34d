/**
 * The records the store port reads and writes: runs, nodes, attempts, search hits, summaries,
 * stacks, branches and delegations as the engine sees them (`ports.ts` says how they are asked
 * for).
 * @module
 */
import type { Artifact, DomainEvent, NodeFacts, StackEvent } from "./events.ts";
import type { RunState } from "../workflow/interpreter.ts";
import type { WorkspaceObservation } from "./workspace.ts";
import type { Evidence } from "../verification/evidence.ts";
import type { Principal } from "../access/principal.ts";
import type {
  AttemptOutcome,
  EdgeKind,
  NodeKind,
  RunAccess,
  RunStatus,
  SessionKind,
} from "./vocabulary.ts";

/** Who owns a run and who else may act on it, as its row records them (`team_policy.ts`). */
export interface RunOwnership {
  /** The run (hex). */
  runId: string;
  /** The principal who started it; `null` for a run started by an unauthenticated call. */
  owner: Principal | null;
  /** Who besides its owner may act on it; `null` when it has no owner. */
  access: RunAccess | null;
}

/** A run as stored. */
export interface RunRecord extends RunOwnership {
  /** Run id (hex). */
  runId: string;
  /** Its session. */
  sessionId: string;
  /** The workflow it runs. */
  workflowId: string;
  /** The pinned compiled workflow. */
  workflowHash: string;
  /** Whether the run's session failed an integrity check (execution tools refuse it). */
  corrupt: boolean;
  /** `running`, `complete` (some branch reached the end) or `aborted`. */
  status: RunStatus;
  /** The latest workspace observation recorded for the run, or `null` when none was. */
  observed: WorkspaceObservation | null;
}

/** A node as stored. */
export interface NodeRecord extends NodeFacts {
  /** Its session. */
  sessionId: string;
  /** The edge kind from its parent, or `null` for a root. */
  edgeKind: EdgeKind | null;
  /** Notes recorded on arrival at this node (the completed step's or the checkpoint's). */
  notesMarkdown: string | null;
  /** Which step's completion the notes describe. */
  notesStepId: string | null;
  /** Step nodes from the root to this node, this one included (checkpoints do not count). */
  stepCount?: number;
  /** When the store recorded its creation (ISO-8601): where its step's window starts. */
  createdAt?: string;
}

/**
 * What a recap needs of a node: its kind, the notes recorded on arrival there, and the
 * verification evidence recorded there, when some was.
 */
export type AncestorNotes =
  & Pick<NodeRecord, "nodeId" | "nodeKind" | "notesMarkdown" | "notesStepId">
  & { evidence?: Evidence };

/** A recorded attempt (an ack or a checkpoint) with its exact response, and its run's owner. */
export interface AttemptRecord extends RunOwnership {
  /** The node the attempt was made on. */
  nodeId: string;
  /** Attempt id (hex). */
  attemptId: string;
  /** What the attempt produced. */
  outcome: AttemptOutcome;
  /** The node it produced. */
  resultNodeId: string;
  /** The exact response, as first returned. */
  response: string;
  /** The attempt's session. */
  sessionId: string;
  /** Whether that session failed an integrity check (execution tools refuse it, replays too). */
  corrupt: boolean;
  /** The digest of the payload the attempt was first made with; `null` if made before digests. */
  payloadDigest: string | null;
}

/** What one search layer looks for. */
export interface SearchQuery {
  /** Words to match (already split; the store quotes them). Empty for `id` and `recent`. */
  terms: readonly string[];
  /** Hex ids (session or run) named in the query, for the `id` layer. */
  ids: readonly string[];
  /** The caller's workspace folder: `recent` also lists that folder's runs first. */
  workspace: string | null;
  /** At most this many runs. */
  limit: number;
}

/** A run found by a search layer, with its tip (the newest node, a leaf by construction). */
export interface RunHit extends WorkspaceObservation, RunOwnership {
  /** Session id (hex). */
  sessionId: string;
  /** Session title. */
  title: string;
  /** `workflow`, or `notes` for a checkpoint-only session. */
  sessionKind: SessionKind;
  /** Whether the session failed an integrity check. */
  corrupt: boolean;
  /** Workflow id. */
  workflowId: string;
  /** `running` or `complete`. */
  status: string;
  /** Last change to the run (ISO-8601). */
  updatedAt: string;
  /** The tip node. */
  tipNodeId: string;
  /** The tip's pending step, or `null` when complete. */
  tipPendingStepId: string | null;
  /** Whose call made the tip (acknowledged the last step); `null` when unauthenticated. */
  tipMadeBy: Principal | null;
  /** FTS relevance (bm25; lower is better), 0 for `id` and `recent`. */
  relevance: number;
  /** A short excerpt of the matched text, or of the run's latest notes. */
  snippet: string | null;
  /** For a child run a parallel step opened: its parent run and step, else `null`. */
  delegatedFrom: Pick<DelegationLink, "parentRunId" | "stepId" | "index"> | null;
}

/** One run of a session, for the session resource. */
export interface SessionRunSummary extends WorkspaceObservation {
  /** Run id (hex). */
  runId: string;
  /** Workflow id. */
  workflowId: string;
  /** The goal given at start. */
  goal: string | null;
  /** `running` or `complete`. */
  status: string;
  /** Nodes in the run. */
  nodeCount: number;
  /** The newest node. */
  tipNodeId: string | null;
  /** Its pending step. */
  tipPendingStepId: string | null;
  /** The run's latest notes, cut to a preview. */
  latestNotes: string | null;
  /** Created (ISO-8601). */
  createdAt: string;
  /** Last change (ISO-8601). */
  updatedAt: string;
}

/** A session, as the session resource shows it. */
export interface SessionSummary {
  /** Session id (hex). */
  sessionId: string;
  /** Title. */
  title: string;
  /** `workflow` or `notes`. */
  sessionKind: SessionKind;
  /** `healthy` or `corrupt`. */
  health: string;
  /** Events appended to the session. */
  eventCount: number;
  /** Created (ISO-8601). */
  createdAt: string;
  /** Last change (ISO-8601). */
  updatedAt: string;
  /** Its runs, oldest first (at most 50). */
  runs: SessionRunSummary[];
}

/** A run on a workflow stack (DeepWork's nested workflows), with where it stands. */
export interface StackFrame {
  /** Run id (hex). */
  runId: string;
  /** Its session. */
  sessionId: string;
  /** The sub-agent whose stack it is on; `null` for the main agent. */
  agentId: string | null;
  /** The connection holding the stack (see `AgentPresence`); `""` when none is known. */
  owner: string;
  /** The run below it on the stack and the node that run stood at; `null` at the bottom. */
  parentRunId: string | null;
  /** See `parentRunId`. */
  parentNodeId: string | null;
  /** Position on the stack, from 0 at the bottom. */
  depth: number;
  /** The job's folder when the run started. */
  jobDir: string | null;
  /** Workflow id. */
  workflowId: string;
  /** The pinned compiled workflow. */
  workflowHash: string;
  /** `running`, `complete` or `aborted`. */
  status: RunStatus;
  /** The run's newest node that is not a blocked attempt: where it stands. */
  tipNodeId: string;
  /** That node's pending step (`null` once complete). */
  pendingStepId: string | null;
}

/** A stack with a running run, as a candidate for a caller that has none of its own. */
export interface StackSummary {
  /** The stack's session. */
  sessionId: string;
  /** Its agent (`null`: the main agent). */
  agentId: string | null;
  /** The connection holding it. */
  owner: string;
  /** Its top running run. */
  runId: string;
  /** That run's workflow. */
  workflowId: string;
  /** The step that run stands at. */
  pendingStepId: string | null;
  /** That run's last change (ISO-8601). */
  updatedAt: string;
}

/** One (session, agent) stack: its running frames and the frame that left it last. */
export interface StackView {
  /** Running frames, bottom first. */
  frames: StackFrame[];
  /** The most recently finished or aborted frame, or `null` when none has left. */
  lastFinished: StackFrame | null;
}

/** The events recorded at a node that nesting and reviews add (reviews, gaps, an abort). */
export type NodeEvent =
  | Extract<StackEvent, { kind: "review_recorded" | "run_aborted" }>
  | Extract<
    DomainEvent,
    {
      kind:
        | "gap_recorded"
        | "delegations_settled"
        | "delegations_collected"
        | "evidence_recorded"
        | "usage_recorded"
        | "snapshot_recorded";
    }
  >;

/** The output recorded on arrival at a node of a branch. */
export interface BranchOutput {
  /** The node. */
  nodeId: string;
  /** The step whose completion the output describes. */
  stepId: string | null;
  /** Its artifacts. */
  artifacts: Artifact[];
}

/** A node of a branch as a progress plan reads it: where the run stood, and what arrived. */
export interface BranchStep {
  /** The node. */
  nodeId: string;
  /** Its kind. */
  nodeKind: NodeKind;
  /** Where the run stood at it. */
  state: RunState | { v: 1; pc: number };
  /** Its pending step. */
  pendingStepId: string | null;
  /**
   * For a step node below the root: the step whose acknowledgement made it (its parent's
   * pending step); `null` on the first node read when the read stopped short of the root.
   */
  completedStepId: string | null;
  /** Notes recorded on arrival. */
  notesMarkdown: string | null;
  /** Artifacts recorded on arrival. */
  artifacts: Artifact[];
}

/** A run as a task shows it: its facts, its owner, and where its preferred branch ends. */
export interface RunListing extends RunOwnership {
  /** Its session (hex). */
  sessionId: string;
  /** `workflow`, or `notes` for a checkpoint-only session. */
  sessionKind: SessionKind;
  /** Workflow id. */
  workflowId: string;
  /** The pinned compiled workflow. */
  workflowHash: string;
  /** The goal given at start. */
  goal: string | null;
  /** `running`, `complete` or `aborted`. */
  status: RunStatus;
  /** Whether its session failed an integrity check. */
  corrupt: boolean;
  /** Started (ISO-8601). */
  createdAt: string;
  /** Last change (ISO-8601). */
  updatedAt: string;
  /** The preferred tip: the run's newest node that is not a blocked attempt. */
  tipNodeId: string | null;
}

/** A delegated child run, as its parent sees it. */
export interface DelegatedRun {
  /** The child run (hex). */
  runId: string;
  /** Its session (the parent's). */
  sessionId: string;
  /** Its delegation's position in the parallel step, from 0. */
  index: number;
  /** The parallel step's id. */
  stepId: string;
  /** The child's workflow. */
  workflowId: string;
  /** The delegation's goal. */
  goal: string | null;
  /** `complete` once some branch of it reached the end; `aborted` after `abort_workflow`. */
  status: RunStatus;
  /** The child's newest node (its preferred tip). */
  tipNodeId: string | null;
  /**
   * Its root node, which its delegation token names. Read, never derived from the run id: an
   * imported run keeps its node ids under a new run id.
   */
  rootNodeId: string;
  /** Its newest complete node, once it has one. */
  finalNodeId: string | null;
  /** The explanation of its abort, when it was aborted. */
  abortExplanation: string | null;
}

/** Where a delegated child run hangs: its parent run, node and parallel step. */
export interface DelegationLink {
  /** The child run. */
  runId: string;
  /** The parent run. */
  parentRunId: string;
  /** The parent node whose pending step opened it. */
  parentNodeId: string;
  /** The parallel step's id. */
  stepId: string;
  /** The delegation's position, from 0. */
  index: number;
}
