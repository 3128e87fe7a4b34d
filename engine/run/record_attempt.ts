/**
 * The one write path of an attempt (an ack or a checkpoint): verify the tokens, replay an
 * attempt already recorded, load the node, check for drift, then decide and append in one
 * transaction, replaying instead when another writer recorded the same attempt first (its
 * unique key fails this one's write).
 *
 * Where the store reads the attempt inside the transaction (`Store.writeAttempt`, a server a
 * round trip away), all of it happens in that transaction: an advance costs the round trip that
 * begins it and reads, and the one that appends and commits. Nothing that could wait on more
 * than the database's answer holds that transaction open, and nothing that may take a pooled
 * connection of its own runs inside it (every connection could be holding a transaction that
 * waits for one):
 *
 * - the drift check looks the run's workflow up (a listing, perhaps the database's workflow
 *   cache), so it is made before the transaction, for the workflow the process last read the
 *   run on (a run's never changes); a run not read yet is read before its transaction;
 * - a call that snapshots the workspace or reads the host's transcript reads the attempt before
 *   its transaction (known before anything is read);
 * - a step whose `prepare` has work to do (`AttemptSpec.outside`: a command, workflows to look
 *   up) leaves the transaction that read it, does that work, and writes in one of its own.
 * @module
 */
import type { Artifact, DomainEvent } from "../model/events.ts";
import { runLabel, sessionLabel } from "../model/ids.ts";
import { canonicalJson, sha256Hex } from "../common/hash.ts";
import type {
  AttemptKey,
  AttemptOrNode,
  AttemptRecord,
  EngineDeps,
  NodeRecord,
  RunListing,
  StoreWriter,
} from "../model/ports.ts";
import type { TokenClaims } from "../access/tokens.ts";
import type { SnapshotTaken } from "../model/snapshots.ts";
import { fail, ok, type Result } from "../model/result.ts";
import type { StepProgress, StepResponse } from "../answers/responses.ts";
import type { VerificationWait } from "../verification/policy.ts";
import type { Warning } from "../workflow/catalog.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import type { AttemptKind } from "../model/vocabulary.ts";
import { refuseActor } from "../access/team_policy.ts";
import { driftWarnings, isKnown, knownWorkflow, noteWorkflow, type RunWorkflow } from "./drift.ts";
import { replayRecorded } from "../answers/node_response.ts";
import { measureStep, runBudget, type StepUsage, withUsage } from "../cost/record_usage.ts";
import { checkNode, type NodeContext, verifyPair } from "./run_context.ts";
import { snapshotFolder, snapshotForStep, takesSnapshots, withSnapshot } from "./snapshot_step.ts";

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
   * command runs, here, so no write lock is held meanwhile. When `outside` says it has no such
   * work for the attempt, it may run inside the transaction that read the attempt.
   */
  prepare?: (attempt: Attempt) => Promise<Result<never> | void>;
  /**
   * Whether `prepare` has work to do outside a transaction for this attempt (a command to run,
   * workflows to look up); absent: none. A store that reads the attempt inside the transaction
   * leaves that one for it, and writes in a transaction of its own after.
   */
  outside?: (attempt: Attempt) => boolean;
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

/** One attempt being recorded: what each part of its path reads. */
interface Call {
  deps: EngineDeps;
  spec: AttemptSpec;
  options: CallOptions;
  /** The state token's claims. */
  state: TokenClaims;
  /** The key the attempt is recorded under. */
  key: AttemptKey;
  /** Its payload's digest. */
  digest: string;
}

/** What the first read made of an attempt: recorded already, refused, or to decide (at `at`). */
type Loaded = { recorded: AttemptRecord } | { refused: Result<never> } | { at: NodeContext };

/** What was taken outside any transaction for the attempt's record. */
interface Outside {
  taken: SnapshotTaken | null;
  measured: StepUsage | null;
}

/** A committed attempt: its record, the node it was made at, what was measured for it. */
interface Committed {
  recorded: Recorded;
  node: NodeRecord;
  measured: StepUsage | null;
}

/**
 * Thrown to leave (roll back) a transaction that read the attempt and writes nothing in it: a
 * replay or a refusal, or a step with work to do outside a transaction first.
 */
class Leave extends Error {
  constructor(readonly loaded: Loaded) {
    super("the attempt left its transaction");
  }
}

/** Records an attempt once; a repeat of the same attempt returns the recorded response. */
export async function recordAttempt(
  deps: EngineDeps,
  spec: AttemptSpec,
  options: CallOptions = {},
): Promise<Result<StepResponse>> {
  const verified = verifyPair(deps, spec.stateToken, { token: spec.token, kind: spec.kind });
  if (!verified.ok) return verified;
  const { runId, nodeId, attemptId } = verified.value.attempt!;
  const key: AttemptKey = { runId, nodeId, attemptId: attemptId!, kind: spec.kind };
  const digest = await payloadDigest(spec.payload);
  const call: Call = { deps, spec, options, state: verified.value.state, key, digest };
  const writeAttempt = deps.store.writeAttempt;
  // the drift check before any transaction: its workflow lookup may read the database
  const known = writeAttempt && !outsideFirst(deps, options)
    ? knownWorkflow(deps.workflows, runId)
    : undefined;
  const drift = known && { known, warnings: await driftWarnings(deps, known.id, known.hash) };
  let loaded: Loaded;
  if (writeAttempt && drift) {
    // the attempt read inside the transaction, in the round trip that begins it
    try {
      return await written(
        call,
        () => writeAttempt(key, (tx, found) => inOneWrite(call, tx, { found, drift })),
      );
    } catch (error) {
      if (!(error instanceof Leave)) throw error;
      loaded = error.loaded;
    }
  } else {
    // the attempt, or when it is not recorded yet the node with its run, in one read
    const found = await deps.store.getAttemptOrNode(runId, nodeId, key.attemptId, key.kind);
    loaded = await loadAttempt(call, found);
  }
  if ("recorded" in loaded) return answerRecorded(call, loaded.recorded);
  if ("refused" in loaded) return loaded.refused;
  const { run } = loaded.at;
  const warnings = drift && isKnown(run, drift.known)
    ? drift.warnings
    : await driftWarnings(deps, run.workflowId, run.workflowHash);
  return await prepareAndWrite(call, { ...loaded.at, attemptId: key.attemptId, warnings });
}

/** The drift check's answer, made before the transaction for the workflow a run was known by. */
interface Drift {
  known: RunWorkflow;
  warnings: Warning[];
}

/**
 * Whether the call has work to do outside any transaction whatever its step (a snapshot of the
 * workspace, the host's transcript to read): then it reads the attempt before its transaction.
 */
function outsideFirst(deps: EngineDeps, options: CallOptions): boolean {
  return takesSnapshots(deps, snapshotFolder(options)) || deps.usage !== undefined;
}

/** The attempt from what was read first, with the checks made before anything is written. */
async function loadAttempt(call: Call, found: AttemptOrNode): Promise<Loaded> {
  const { deps, spec, key } = call;
  if (found.attempt) return { recorded: found.attempt };
  const loaded = await checkNode(deps.store, call.state, found.at);
  if (!loaded.ok) return { refused: loaded };
  // Nodes are immutable, so the node read is still right inside the transaction; only its
  // children must be read under the lock (a racing writer's attempt fails the append).
  const { run } = loaded.value;
  noteWorkflow(deps.workflows, run);
  const refused = refuseActor(run, deps.principal) ??
    (spec.kind === "ack" && run.status === "aborted" ? abortedRun(run.runId) : null) ??
    spec.refuse?.({ ...loaded.value, attemptId: key.attemptId, warnings: [] });
  return refused ? { refused } : { at: loaded.value };
}

/** A recorded attempt's answer: its response replayed (to whoever may continue the run). */
function answerRecorded(call: Call, recorded: AttemptRecord): Result<StepResponse> {
  return refuseActor(recorded, call.deps.principal) ?? replay(recorded, call);
}

/**
 * Inside the transaction that read `found`: decides and appends, or leaves it (see `Leave`)
 * when there is nothing to write, the step has work to do outside it first, or the run's
 * workflow is not the one the drift check was made for.
 */
async function inOneWrite(
  call: Call,
  tx: StoreWriter,
  at: { found: AttemptOrNode; drift: Drift },
): Promise<Committed> {
  const loaded = await loadAttempt(call, at.found);
  if (!("at" in loaded) || !isKnown(loaded.at.run, at.drift.known)) throw new Leave(loaded);
  const attempt = { ...loaded.at, attemptId: call.key.attemptId, warnings: at.drift.warnings };
  if (call.spec.outside?.(attempt)) throw new Leave(loaded);
  // nothing for it to do outside: at most a refusal from what is known already
  const refused = await call.spec.prepare?.(attempt);
  if (refused) throw new Leave({ refused });
  return await decideIn(tx, call, { attempt, taken: null, measured: null });
}

/** The attempt's work outside any transaction, then its write. */
async function prepareAndWrite(call: Call, attempt: Attempt): Promise<Result<StepResponse>> {
  const { deps, spec, options } = call;
  const refusedNow = await spec.prepare?.(attempt);
  if (refusedNow) return refusedNow;
  // outside the transaction, like verification: no write lock is held while git runs
  const { node } = attempt;
  const taken = await snapshotForStep(deps, { node, workspace: snapshotFolder(options) });
  const measured = await measureStep(deps, { node, hostCallId: options.hostCallId });
  return await written(
    call,
    () => deps.store.write((tx) => decideIn(tx, call, { attempt, taken, measured })),
  );
}

/** Decides in `tx` and appends what was decided. */
async function decideIn(
  tx: StoreWriter,
  call: Call,
  at: Outside & { attempt: Attempt },
): Promise<Committed> {
  const { deps, spec } = call;
  const { attempt, taken, measured } = at;
  const { node } = attempt;
  const decided = withUsage(
    withSnapshot(await spec.decide(tx, attempt), { taken, stateToken: spec.stateToken, node }),
    { measured, budget: runBudget(deps, attempt.compiled), node },
  );
  await tx.append(withDigest(decided.events, call.digest));
  return { recorded: withListing(decided, call.options.onAnswered && tx), node, measured };
}

/**
 * The answer of a write that records the attempt, its listeners told once it committed. The
 * attempt's key is unique: a writer that recorded it first fails this write, which then answers
 * as a replay (looked up only on failure, never on the way to a commit).
 */
async function written(
  call: Call,
  write: () => Promise<Committed>,
): Promise<Result<StepResponse>> {
  let committed: Committed;
  try {
    committed = await write();
  } catch (error) {
    if (error instanceof Leave) throw error;
    const raced = await recordedAfter(call.deps, call.key);
    if (raced) return replay(raced, call);
    throw error;
  }
  const { recorded, node, measured } = committed;
  const { deps, options } = call;
  if (measured) deps.usage?.settle(measured.to);
  options.onAppend?.(sessionLabel(node.sessionId));
  if (recorded.progress) options.onProgress?.(recorded.progress);
  if (recorded.answered) options.onAnswered?.(recorded.answered);
  return ok(recorded.response);
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
function recordedAfter(deps: EngineDeps, key: AttemptKey): Promise<AttemptRecord | null> {
  return deps.store.getAttempt(key.runId, key.nodeId, key.attemptId, key.kind)
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
