/**
 * The ports: everything the engine needs from the outside world, as small interfaces that
 * adapters implement. The engine never reaches past them.
 * @module
 */
import type { DomainEvent } from "./events.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import type { LoadedSet, LoadedWorkflow } from "../workflow/catalog.ts";
import type { WorkflowLoadError } from "../workflow/parse.ts";
import type { WorkflowSummary } from "../answers/responses.ts";
import type { Keyring } from "../access/tokens.ts";
import type { Preferences } from "./preferences.ts";
import type { Principal } from "../access/principal.ts";
import type { UsageMeter } from "../cost/ports.ts";
import type { TokenUsage } from "../cost/usage.ts";
import type { WorkspaceSnapshots } from "./snapshots.ts";
import type {
  VerificationPolicy,
  VerificationRequest,
  VerificationRun,
  VerificationWait,
} from "../verification/policy.ts";
import type { AttemptKind, SearchLayer } from "./vocabulary.ts";

export type * from "./records.ts";
import type {
  AncestorNotes,
  AttemptRecord,
  BranchOutput,
  BranchStep,
  DelegatedRun,
  DelegationLink,
  NodeEvent,
  NodeRecord,
  RunHit,
  RunListing,
  RunRecord,
  SearchQuery,
  SessionSummary,
  StackFrame,
  StackSummary,
  StackView,
} from "./records.ts";

/** Wall-clock time, handed in. */
export interface Clock {
  /** The current time as an ISO-8601 string. */
  now(): string;
}

/** Randomness, handed in. */
export interface Random {
  /** `n` random bytes. */
  bytes(n: number): Uint8Array;
}

/** A node with its run. */
export interface NodeAndRun {
  /** The node. */
  node: NodeRecord;
  /** Its run. */
  run: RunRecord;
}

/** The key an attempt is recorded under: its node, its id and its kind. */
export interface AttemptKey {
  /** The run. */
  runId: string;
  /** The node the attempt is made at. */
  nodeId: string;
  /** The attempt id of its token. */
  attemptId: string;
  /** Ack or checkpoint. */
  kind: AttemptKind;
}

/**
 * What an attempt at a node reads first: the attempt recorded under its key, else the node with
 * its run (`at`, `null` when either is not stored).
 */
export type AttemptOrNode = { attempt: AttemptRecord } | { attempt: null; at: NodeAndRun | null };

/** Read access to the store. */
export interface StoreReader {
  /** A run, or `null`. */
  getRun(runId: string): Promise<RunRecord | null>;
  /**
   * The step node a node hangs below: itself when it is a step node, else its nearest step
   * ancestor (checkpoints and blocked attempts are made at a step); one read.
   */
  getStepAnchorId(runId: string, nodeId: string): Promise<string>;
  /** The child runs a parallel step opened at a node, in delegation order. */
  getDelegations(runId: string, nodeId: string): Promise<DelegatedRun[]>;
  /** The parent of a delegated child run, or `null`. */
  getDelegationLink(runId: string): Promise<DelegationLink | null>;
  /** A node, or `null`. */
  getNode(runId: string, nodeId: string): Promise<NodeRecord | null>;
  /** A recorded attempt, or `null`. */
  getAttempt(
    runId: string,
    nodeId: string,
    attemptId: string,
    kind: AttemptKind,
  ): Promise<AttemptRecord | null>;
  /** A node with its run, read together; `null` when either is not stored. */
  getNodeAndRun(runId: string, nodeId: string): Promise<NodeAndRun | null>;
  /** What an attempt at a node reads first ({@linkcode AttemptOrNode}), in one read. */
  getAttemptOrNode(
    runId: string,
    nodeId: string,
    attemptId: string,
    kind: AttemptKind,
  ): Promise<AttemptOrNode>;
  /**
   * Direct children of a node that are steps or checkpoints (blocked attempts are not branches),
   * oldest first.
   */
  getChildren(runId: string, nodeId: string): Promise<NodeRecord[]>;
  /** The notes of a node and up to `limit - 1` of its nearest ancestors, nearest first. */
  getAncestorNotes(runId: string, nodeId: string, limit: number): Promise<AncestorNotes[]>;
  /** The preferred tip under a node: its most recently created descendant (itself if none). */
  getPreferredTip(runId: string, nodeId: string): Promise<NodeRecord>;
  /** A pinned compiled workflow in the current format (older formats normalised), or `null`. */
  getSnapshot(workflowHash: string): Promise<CompiledWorkflow | null>;
  /** Whether a compiled workflow is pinned under this hash (nothing read or decoded). */
  hasSnapshot(workflowHash: string): Promise<boolean>;
  /** Runs matching one search layer, best first by that layer's own order. */
  searchRuns(layer: SearchLayer, query: SearchQuery): Promise<RunHit[]>;
  /** Sessions, most recently changed first. */
  listSessions(options: { limit: number; offset: number }): Promise<SessionSummary[]>;
  /** One session with its runs, or `null`. */
  getSession(sessionId: string): Promise<SessionSummary | null>;
  /** The stack of one agent (`null`: the main agent) in a session. */
  getStack(sessionId: string, agentId: string | null): Promise<StackView>;
  /**
   * The session of `agentId`'s stack in a workspace folder held by `owner` (`null`: any): the
   * one with the most recently changed running run, else the one whose run finished last;
   * `null` when there is none.
   */
  findStackSession(
    workspace: string | null,
    at: { agentId: string | null; owner: string | null },
  ): Promise<string | null>;
  /**
   * `agentId`'s stacks in a workspace folder that have a running run, their top runs most
   * recently changed first, at most `limit`.
   */
  listStacks(
    workspace: string | null,
    at: { agentId: string | null; limit: number },
  ): Promise<StackSummary[]>;
  /** A run's frame on its stack, whatever its status (`depth` -1), or `null` when on none. */
  getStackFrame(runId: string): Promise<StackFrame | null>;
  /** The run's tokens as its latest `usage_recorded` event totals them; `null` when none. */
  getRunTokens(runId: string): Promise<TokenUsage | null>;
  /** Reviews, gaps and aborts recorded at a node, oldest first. */
  getNodeEvents(runId: string, nodeId: string): Promise<NodeEvent[]>;
  /** Outputs recorded along the branch from the root to a node (root first), at most `limit`. */
  getBranchOutputs(runId: string, nodeId: string, limit: number): Promise<BranchOutput[]>;
  /** The nodes from the root to a node (root first), at most the `limit` nearest to it. */
  getBranchSteps(runId: string, nodeId: string, limit: number): Promise<BranchStep[]>;
  /** A run with its timestamps, goal and preferred tip, or `null`. */
  getRunListing(runId: string): Promise<RunListing | null>;
  /**
   * Runs of workflow sessions, most recently changed first; with `ownedBy`, only the runs that
   * principal (by subject) started.
   */
  listRuns(options: { limit: number; offset: number; ownedBy?: string }): Promise<RunListing[]>;
  /** A number that grows whenever anything is appended (by any process); cheap to read. */
  changeCounter(): Promise<number>;
  /** The ids among `reviewIds` that have a pass recorded, in any session. */
  getPassedReviews(reviewIds: readonly string[]): Promise<Set<string>>;
}

/** Read and append access inside one write transaction. */
export interface StoreWriter extends StoreReader {
  /** Appends events and updates projections; visible to later reads in the same transaction. */
  append(events: readonly DomainEvent[]): Promise<void>;
  /**
   * The run's listing as `getRunListing` reads it once this transaction has committed, read
   * right after the commit (with it, where a round trip is dear); rejected when the
   * transaction does not commit. Absent: read it after `write` returns.
   */
  runListingAfterCommit?(runId: string): Promise<RunListing | null>;
}

/** The store port. */
export interface Store extends StoreReader {
  /**
   * Runs `fn` in one write transaction, serialised with every other writer on the same
   * database (across processes). Everything `fn` appends commits together or not at all. A
   * store may run `fn` again from the start when the database refused a try (another writer
   * got there first, or the connection dropped before the commit): `fn` keeps its effects in
   * what it returns and appends, or resets what it notes outside at its start.
   */
  write<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T>;
  /**
   * `write`, with what an attempt at `key` reads first ({@linkcode AttemptOrNode}) read inside
   * the transaction and handed to `fn`, in the round trip that begins it, together with the
   * node's children (the transaction's `getChildren` of that node answers from that read until
   * it writes) and, when this process has not read it yet, the run's pinned workflow (so
   * `getSnapshot` outside answers it without a read). For a store where a round trip is dear;
   * absent: read with `getAttemptOrNode` before `write`.
   */
  writeAttempt?<T>(
    key: AttemptKey,
    fn: (tx: StoreWriter, found: AttemptOrNode) => Promise<T>,
  ): Promise<T>;
}

/** Where workflows come from. */
export interface WorkflowSource {
  /** Every workflow from every source, precedence applied, and every load error. */
  load(): Promise<LoadedSet>;
  /**
   * The workflow `load` would list under `workflowId`, or `null`, compiling only what that
   * takes (a source without it is asked for `load` instead).
   */
  find?(workflowId: string): Promise<LoadedWorkflow | null>;
  /**
   * What `load` lists, as `list_workflows` summarises it, for a source that keeps summaries
   * (so listing needs no compiled workflow); a source without it is asked for `load` instead.
   */
  summaries?(): Promise<{ workflows: WorkflowSummary[]; errors: WorkflowLoadError[] }>;
}

/**
 * Runs a step's verification command in the caller's workspace, without a shell, under the
 * user's policy (which the engine applies first: only allowed commands reach `run`).
 */
export interface VerificationRunner {
  /** The user's policy (from their config). */
  readonly policy: VerificationPolicy;
  /**
   * Runs one command; never throws (a failure to start is `error`). A runner that runs only so
   * many at once tells `onWaiting` when this one has to wait for a turn.
   */
  run(
    request: VerificationRequest,
    options?: { onWaiting?: (wait: VerificationWait) => void },
  ): Promise<VerificationRun>;
}

/** Everything a use-case may touch. */
export interface EngineDeps {
  /** The store. */
  store: Store;
  /** Workflow files. */
  workflows: WorkflowSource;
  /** Token keys. */
  keyring: Keyring;
  /** Time. */
  clock: Clock;
  /** Randomness. */
  random: Random;
  /** Global default preferences, copied into each new session (built-in defaults when absent). */
  defaultPreferences?: Preferences;
  /** Runs verification commands; absent, they never run (`VERIFICATION_UNAVAILABLE`). */
  verifier?: VerificationRunner;
  /** Reads the host's model calls (`cost/`); absent, no tokens are counted. */
  usage?: UsageMeter;
  /** Tokens a run may use before every answer warns (the user's config); absent: no budget. */
  tokenBudget?: number;
  /** Takes and restores workspace snapshots (`snapshots.ts`); absent, none are taken. */
  snapshots?: WorkspaceSnapshots;
  /** Who is calling (`team_policy.ts`'s `actingAs`): none for an unauthenticated call. */
  principal?: Principal;
}
