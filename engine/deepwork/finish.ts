/**
 * `finished_step`: check the submission (shape, files, `json_schema`, quality gate), then
 * advance the top run of the caller's stack in one write transaction, recording the files'
 * path, size and SHA-256 so a replay never reads them again. A retry with identical arguments
 * of a call that already advanced returns the recorded answer; a run that completes leaves the
 * stack, and its parent's step is pending again.
 * @module
 */
import { sessionOfJobDir } from "./session_jobs.ts";
import type { DomainEvent } from "../model/events.ts";
import { canonicalJson, sha256Hex } from "../common/hash.ts";
import type { StackFrame, StoreReader } from "../model/ports.ts";
import { checkNotes, checkRecordedValue } from "../model/limits.ts";
import { fail, ok, type Result, StorageCorruptionError } from "../model/result.ts";
import { guard } from "../run/error_guard.ts";
import { currentStep } from "../workflow/interpreter.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import { advanceJobRun } from "./advance.ts";
import { jobDrift } from "./drift.ts";
import { checkSubmission } from "./gate.ts";
import {
  describeFiles,
  namedFiles,
  outputsProblem,
  type SubmittedOutputs,
  tooManyFiles,
} from "./outputs.ts";
import type { JobDeps } from "./ports.ts";
import type { FinishedResponse } from "./job_responses.ts";
import { findStack, type FoundStack, stackCaller } from "./find_stack.ts";
import { loadFrame, noActiveWorkflow, stackEntries, type TopRun } from "./stack.ts";

/** Input of {@linkcode finishStep}, as the tool takes it. */
export interface FinishInput {
  /** Output names to a path, a list of paths, or text. */
  outputs: SubmittedOutputs;
  /** What was done (also spelled `work_summary`). */
  notes?: string;
  /** The newer spelling of `notes`. */
  work_summary?: string;
  /** Skips the quality gate; recorded as a gap. */
  quality_review_override_reason?: string;
  /** The workflow to act on (its `run_…`), instead of the top of the caller's stack. */
  session_id?: string;
  /** A sub-agent's own stack. */
  agent_id?: string;
}

/** The attempt id of a call: its arguments' digest, so an identical retry finds its record. */
async function callKey(input: FinishInput): Promise<string> {
  const { outputs, quality_review_override_reason } = input;
  const notes = input.notes ?? input.work_summary ?? null;
  return (await sha256Hex(
    canonicalJson({ outputs, notes, override: quality_review_override_reason ?? null }),
  )).slice(0, 12);
}

/** The recorded answer of `attemptId` when it is what left `frame` where it stands. */
async function recordedAt(
  store: StoreReader,
  frame: StackFrame,
  attemptId: string,
): Promise<FinishedResponse | null> {
  const node = await store.getNode(frame.runId, frame.tipNodeId);
  if (!node?.parentId || node.edgeKind !== "acked_step") return null;
  const recorded = await store.getAttempt(frame.runId, node.parentId, attemptId, "ack");
  if (!recorded || recorded.resultNodeId !== node.nodeId) return null;
  if (recorded.corrupt) {
    throw new StorageCorruptionError(
      "The session failed an integrity check",
      recorded.sessionId,
    );
  }
  return JSON.parse(recorded.response) as FinishedResponse;
}

/**
 * Whether identical arguments could also be a new call for the step now current: they fit its
 * outputs and carry no notes to tell the two apart. Then they are taken as a new call (as the
 * original server would), not replayed.
 */
function couldBeNew(top: TopRun | null, input: FinishInput): boolean {
  if (!top || (input.notes ?? input.work_summary ?? "") !== "") return false;
  const step = currentStep(top.compiled, top.node.state);
  return step !== null && outputsProblem(step.job?.outputs ?? [], input.outputs, step.id) === null;
}

/**
 * A retry of the call that advanced the targeted run, or of the one that completed the run
 * that left the stack last (and nothing happened since) or that `session_id` names.
 */
async function replayed(
  store: StoreReader,
  at: { found: FoundStack; top: TopRun | null; input: FinishInput; attemptId: string },
): Promise<FinishedResponse | null> {
  const { found, top, attemptId } = at;
  if (couldBeNew(top, at.input)) return null;
  if (top) {
    const hit = await recordedAt(store, top.frame, attemptId);
    if (hit) return hit;
  }
  const last = found.finished;
  if (!last || last.status !== "complete") return null;
  const sinceThen = top
    ? last.parentRunId === top.frame.runId && last.parentNodeId === top.frame.tipNodeId
    : true;
  return sinceThen ? await recordedAt(store, last, attemptId) : null;
}

/** The notes and outputs against the caps every profile's writes are held to. */
function checkSizes(input: FinishInput): Result<void> {
  const notes = input.notes !== undefined
    ? checkNotes("notes", input.notes)
    : checkNotes("work_summary", input.work_summary);
  if (!notes.ok) return notes;
  return checkRecordedValue("outputs", input.outputs);
}

/** Finishes the current step of the caller's top run. */
export function finishStep(
  deps: JobDeps,
  input: FinishInput & { workspace: WorkspaceObservation },
): Promise<Result<FinishedResponse>> {
  return guard(async () => {
    const sized = checkSizes(input);
    if (!sized.ok) return sized;
    const found = await findStack(deps, stackCaller(input), { claim: true });
    if (!found.ok) return found;
    const attemptId = await callKey(input);
    const frame = found.value.target;
    const top = frame ? await loadFrame(deps.store, frame) : null;
    const replay = await replayed(deps.store, { found: found.value, top, input, attemptId });
    if (!top) return replay ? ok(replay) : noActiveWorkflow(input.session_id);
    const drift = jobDrift(
      await deps.jobs.load(input.workspace.workspace, {
        session: sessionOfJobDir(top.frame.jobDir),
      }),
      {
        frame: top.frame,
        pinned: top.compiled,
      },
    );
    const warned = (r: FinishedResponse) => drift.length > 0 ? { ...r, warnings: drift } : r;
    if (replay) return ok(warned(replay));
    const result = await finishTop(deps, { input, found: found.value, top, attemptId });
    return result.ok ? ok(warned(result.value)) : result;
  });
}

/** Checks the submission for the targeted run's current step, then advances it. */
async function finishTop(
  deps: JobDeps,
  at: {
    input: FinishInput & { workspace: WorkspaceObservation };
    found: FoundStack;
    top: TopRun;
    attemptId: string;
  },
): Promise<Result<FinishedResponse>> {
  const { input, found, top, attemptId } = at;
  const step = currentStep(top.compiled, top.node.state);
  if (!step) return noActiveWorkflow(input.session_id);
  const root = input.workspace.workspace ?? top.run.observed?.workspace ?? null;
  if (root === null) {
    return fail(
      "OUTPUT_INVALID",
      "No project root is known for this call (the client's roots are not file:// folders), so output paths cannot be checked.",
    );
  }
  const shape = outputsProblem(step.job?.outputs ?? [], input.outputs, step.id);
  if (shape) return fail("OUTPUT_INVALID", shape, { details: { step_id: step.id } });
  const named = namedFiles(step.job?.outputs ?? [], input.outputs);
  const tooMany = tooManyFiles(named);
  if (tooMany) return tooMany;
  const described = await describeFiles(deps.files, { root, named });
  if (!described.ok) {
    return fail("OUTPUT_INVALID", described.message, { details: { step_id: step.id } });
  }
  const submission = {
    top,
    step,
    outputs: input.outputs,
    files: described.files,
    root,
    overrideReason: input.quality_review_override_reason,
  };
  const gate = await checkSubmission(deps, submission);
  if (gate.kind !== "pass") {
    if (gate.events.length > 0) await deps.store.write((tx) => tx.append(gate.events));
    if (gate.kind === "fail") return gate.error;
    return ok({
      status: "needs_work",
      feedback: gate.feedback,
      stack: stackEntries(found.view.frames),
    });
  }
  return await advanceJobRun(deps, {
    found,
    submission,
    attemptId,
    notes: input.notes ?? input.work_summary,
    reviewEvents: gate.events as DomainEvent[],
    workspace: input.workspace,
  });
}
