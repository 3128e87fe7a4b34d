/**
 * The one write path of an attempt (an ack or a checkpoint): verify the tokens, replay an
 * attempt already recorded, load the node, check for drift, then decide and append in one
 * transaction, replaying instead when another writer recorded the same attempt first (its
 * unique key fails this one's write).
 * @module
 */
import type { Artifact, DomainEvent } from "../model/events.ts";
import { runLabel, sessionLabel } from "../model/ids.ts";
import { canonicalJson, sha256Hex } from "../common/hash.ts";
import type {
  AttemptRecord,
  EngineDeps,
  NodeRecord,
  RunListing,
  StoreWriter,
} from "../model/ports.ts";
import { fail, ok, type Result } from "../model/result.ts";
import type { StepProgress, StepResponse } from "../answers/responses.ts";
import type { VerificationWait } from "../verification/policy.ts";
import type { Warning } from "../workflow/catalog.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import type { AttemptKind } from "../model/vocabulary.ts";
import { refuseActor } from "../access/team_policy.ts";
import { driftWarnings } from "./drift.ts";
import { replayRecorded } from "../answers/node_response.ts";
import { measureStep, runBudget, withUsage } from "../cost/record_usage.ts";
import { checkNode, type NodeContext, verifyPair } from "./run_context.ts";
import { snapshotFolder, snapshotForStep, withSnapshot } from "./snapshot_step.ts";

/** Options of the execution use-cases. */
export interface CallOptions {
  /** The caller's workspace, recorded as an observation when it differs from the run's last. */
  workspace?: WorkspaceObservation;
  /**
   * Where a step's verification command may run for this caller, when not the workspace's
   * folder: `null` when nowhere (an HTTP client that named no root).
   */
  commandFolder?: string | null;
  /**
   * Told the session (`ses_…`) after this call's events committed; not called for a replay or
   * a rehydrate, which append nothing.
   */
  onAppend?: (sessionId: string) => void;
  /**
   * Told how far the branch is after this call advanced it (after the commit); not called for
   * a blocked acknowledgement, a replay, a rehydrate or a checkpoint.
   */
  onProgress?: (progress: StepProgress) => void;
  /**
   * Told when the step's verification command has to wait for a turn (the server runs only so
   * many at once), before it runs.
   */
  onVerificationWait?: (wait: VerificationWait) => void;
  /**
   * Told when the call replayed an attempt already recorded (its recorded response is returned
   * unchanged): whether this call's payload differs from the one recorded, so was not kept.
   * Attempts recorded before payload digests count as not differing.
   */
  onReplay?: (replay: { payloadDiffers: boolean }) => void;
  /**
   * Told the node a committed start or advance created, with what the caller would otherwise
   * read back to describe the run (its task view); not called for anything that wrote no node
   * on the branch.
   */
  onAnswered?: (answered: AnsweredNode) => void;
  /**
   * The host's id of the model's tool call that made this request (Claude Code's
   * `_meta["claudecode/toolUseId"]`): the step's tokens are read once its records hold it.
   */
  hostCallId?: string;
}

/** A node a call just created, with its run's pinned workflow and the artifacts left on it. */
export interface AnsweredNode {
  /** The node. */
  node: NodeRecord;
  /** The workflow its run is pinned to. */
  compiled: CompiledWorkflow;
  /** The artifacts recorded on arrival at it. */
  artifacts: readonly Artifact[];
  /** Its run's listing read right after the commit, when the store reads it then. */
  listing?: Promise<RunListing | null>;
}

/** A loaded attempt: the node with its run and workflow, the attempt id, the drift warnings. */
export interface Attempt extends NodeContext {
  /** The attempt id of the ack or checkpoint token. */
  attemptId: string;
  /** Drift warnings, for the response. */
  warnings: Warning[];
}

/** What an attempt decided: the response to return (and record), and the events to append. */
export interface Recorded {
  /** The response; the events carry it verbatim for replays. */
  response: StepResponse;
  /** Everything the attempt appends, in order. */
  events: DomainEvent[];
  /** How far the branch is, when the attempt advanced it. */
  progress?: StepProgress;
  /** The node the attempt added to the branch, when it advanced it. */
  answered?: AnsweredNode;
}

/** One attempt: its tokens and what to make of it. */
export interface AttemptSpec {
  /** The snapshot the attempt is made at. */
  stateToken: string;
  /** The ack or checkpoint token. */
  token: string;
  /** Which kind `token` is. */
  kind: AttemptKind;
  /** What the call carries besides its tokens (context, output, preferences): its digest is kept. */
  payload: AttemptPayload;
  /** A refusal decided from the loaded node before anything is written, or `null`. */
  refuse?: (attempt: Attempt) => Result<never> | null;
  /**
   * Work done before the transaction, outside it, once per attempt not already recorded (never
   * for a replay): workflows a parallel step delegates to are looked up, and a verification
   * command runs, here, so no write lock is held meanwhile.
   */
  prepare?: (attempt: Attempt) => Promise<Result<never> | void>;
  /** Decides inside the write transaction (children and tips read through `tx`). */
  decide: (tx: StoreWriter, attempt: Attempt) => Promise<Recorded>;
}

/** What an attempt carries besides its tokens. */
export interface AttemptPayload {
  /** Context changes. */
  context?: unknown;
  /** Notes and artifacts. */
  output?: unknown;
  /** Preference changes. */
  preferences?: unknown;
}

/** SHA-256 of the canonical JSON of a payload (absent fields as `null`). */
export function payloadDigest(payload: AttemptPayload): Promise<string> {
  const { context = null, output = null, preferences = null } = payload;
  return sha256Hex(canonicalJson({ context, output, preferences }));
}

/** The recorded response, telling `onReplay` whether this call's payload differs. */
function replay(
  recorded: AttemptRecord,
  at: { digest: string; options: CallOptions },
): Result<StepResponse> {
  const replayed = replayRecorded(recorded);
  const differs = recorded.payloadDigest !== null && recorded.payloadDigest !== at.digest;
  at.options.onReplay?.({ payloadDiffers: differs });
  return replayed;
}

/** The attempt's events with its payload digest on the event that records the attempt. */
function withDigest(events: DomainEvent[], digest: string): DomainEvent[] {
  return events.map((e) =>
    e.kind === "advance_recorded" || e.kind === "checkpoint_recorded"
      ? { ...e, payloadDigest: digest }
      : e
  );
}

/** Records an attempt once; a repeat of the same attempt returns the recorded response. */
export async function recordAttempt(
  deps: EngineDeps,
  spec: AttemptSpec,
  options: CallOptions = {},
): Promise<Result<StepResponse>> {
  const verified = verifyPair(deps, spec.stateToken, { token: spec.token, kind: spec.kind });
  if (!verified.ok) return verified;
  const claims = verified.value.attempt!;
  const attemptId = claims.attemptId!;
  const digest = await payloadDigest(spec.payload);
  // the attempt, or when it is not recorded yet the node with its run, in one read
  const found = await deps.store.getAttemptOrNode(
    claims.runId,
    claims.nodeId,
    attemptId,
    spec.kind,
  );
  if (found.attempt) {
    const recorded = found.attempt;
    return refuseActor(recorded, deps.principal) ?? replay(recorded, { digest, options });
  }
  const loaded = await checkNode(deps.store, verified.value.state, found.at);
  if (!loaded.ok) return loaded;
  // Nodes are immutable, so the node read above is still right inside the transaction; only
  // its children must be read under the lock (a racing writer's attempt fails the append).
  const { node, run } = loaded.value;
  const notYours = refuseActor(run, deps.principal);
  if (notYours) return notYours;
  if (spec.kind === "ack" && run.status === "aborted") return abortedRun(run.runId);
  const refused = spec.refuse?.({ ...loaded.value, attemptId, warnings: [] });
  if (refused) return refused;
  const warnings = await driftWarnings(deps, run.workflowId, run.workflowHash);
  const refusedNow = await spec.prepare?.({ ...loaded.value, attemptId, warnings });
  if (refusedNow) return refusedNow;
  // outside the transaction, like verification: no write lock is held while git runs
  const taken = await snapshotForStep(deps, { node, workspace: snapshotFolder(options) });
  const measured = await measureStep(deps, { node, hostCallId: options.hostCallId });
  const usageAt = { measured, budget: runBudget(deps, loaded.value.compiled), node };
  let committed: Recorded | null = null;
  let result: Result<StepResponse>;
  try {
    result = await deps.store.write(async (tx) => {
      committed = null; // a try the store runs again starts afresh
      const decided = withUsage(
        withSnapshot(
          await spec.decide(tx, { ...loaded.value, attemptId, warnings }),
          { taken, stateToken: spec.stateToken, node },
        ),
        usageAt,
      );
      await tx.append(withDigest(decided.events, digest));
      committed = withListing(decided, options.onAnswered && tx);
      return ok(decided.response);
    });
  } catch (error) {
    // The attempt's key is unique: a writer that recorded it first fails this write, which
    // then answers as a replay (looked up only on failure, never on the way to a commit).
    const raced = await recordedAfter(deps, claims, { attemptId, kind: spec.kind });
    if (raced) return replay(raced, { digest, options });
    throw error;
  }
  const done = committed as Recorded | null;
  if (done) {
    if (measured) deps.usage?.settle(measured.to);
    options.onAppend?.(sessionLabel(node.sessionId));
    if (done.progress) options.onProgress?.(done.progress);
    if (done.answered) options.onAnswered?.(done.answered);
  }
  return result;
}

/**
 * `recorded` with its run's listing asked of `tx` for after the commit, when a node was
 * answered and someone is told of it (the task view reads the listing next).
 */
function withListing(recorded: Recorded, tx: StoreWriter | undefined): Recorded {
  const answered = recorded.answered;
  const listing = answered && tx?.runListingAfterCommit?.(answered.node.runId);
  if (!listing) return recorded;
  listing.catch(() => {}); // a try that does not commit is not read
  return { ...recorded, answered: { ...answered, listing } };
}

/** The attempt as recorded after a failed write, or `null` (also when it cannot be read). */
function recordedAfter(
  deps: EngineDeps,
  claims: { runId: string; nodeId: string },
  attempt: { attemptId: string; kind: AttemptKind },
): Promise<AttemptRecord | null> {
  return deps.store.getAttempt(claims.runId, claims.nodeId, attempt.attemptId, attempt.kind)
    .catch(() => null);
}

/** An aborted run takes no more acknowledgements (checkpoints still add notes). */
function abortedRun(runId: string): Result<never> {
  return fail(
    "RUN_ABORTED",
    `Run ${
      runLabel(runId)
    } was aborted (abort_workflow); it takes no more steps. Start the workflow again to carry on, or use checkpoint_workflow to add notes.`,
    { details: { runId: runLabel(runId) } },
  );
}
