/**
 * The workflow stack as the DeepWork tools see it: a run on it loaded with its pinned workflow,
 * and the `stack` and `begin_step` fields of every answer. The stack itself is a projection of
 * the log (`run_stacked`, `stack_claimed` and the runs' statuses), so it is read afresh on every
 * call and is the same in every process; `find_stack.ts` says which stack a call acts on.
 * @module
 */
import { runLabel, sessionLabel } from "../model/ids.ts";
import type { NodeRecord, RunRecord, StackFrame, StoreReader } from "../model/ports.ts";
import { fail, type Result, StorageCorruptionError } from "../model/result.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { currentStep } from "../workflow/interpreter.ts";
import { pendingStep } from "../workflow/pending.ts";
import { OUTPUT_SYNTAX } from "./job.ts";
import type { BeginStep, StackEntry } from "./job_responses.ts";

/** The top run of a stack, loaded. */
export interface TopRun {
  /** The frame. */
  frame: StackFrame;
  /** Its run. */
  run: RunRecord;
  /** The node it stands at. */
  node: NodeRecord;
  /** Its pinned workflow. */
  compiled: CompiledWorkflow;
}

/** `job/workflow` for a job workflow's id (`job.workflow`). */
export function workflowLabel(workflowId: string): string {
  const dot = workflowId.indexOf(".");
  return dot < 0 ? workflowId : `${workflowId.slice(0, dot)}/${workflowId.slice(dot + 1)}`;
}

/** The `stack` field: running frames, bottom first. */
export function stackEntries(frames: readonly StackFrame[]): StackEntry[] {
  return frames.map((f) => ({
    workflow: workflowLabel(f.workflowId),
    step: f.pendingStepId,
    run_id: runLabel(f.runId),
  }));
}

/** The error for a call that needs a running workflow and has none. */
export function noActiveWorkflow(sessionId?: string): Result<never> {
  return fail(
    "NO_ACTIVE_WORKFLOW",
    sessionId
      ? `The workflow session \`${sessionId}\` is not running: it has finished or been aborted. Start one with start_workflow.`
      : "No active workflow session. Start one with start_workflow (or pass the session_id that begin_step returned).",
    { details: sessionId ? { session_id: sessionId } : {} },
  );
}

/** Loads a frame's run, the node it stands at and its pinned workflow. */
export async function loadFrame(store: StoreReader, frame: StackFrame): Promise<TopRun> {
  const [run, node, compiled] = await Promise.all([
    store.getRun(frame.runId),
    store.getNode(frame.runId, frame.tipNodeId),
    store.getSnapshot(frame.workflowHash),
  ]);
  if (!run || !node || !compiled) {
    throw new StorageCorruptionError(
      `Run ${runLabel(frame.runId)} on the workflow stack is missing its node or pinned workflow`,
      frame.sessionId,
    );
  }
  if (run.corrupt) {
    throw new StorageCorruptionError(
      `Session ${sessionLabel(run.sessionId)} failed an integrity check`,
      run.sessionId,
    );
  }
  return { frame, run, node, compiled };
}

/** The `begin_step` of a node's pending step, or `null` when the run is complete there. */
export function beginStep(
  compiled: CompiledWorkflow,
  node: Pick<NodeRecord, "runId" | "state" | "context">,
  jobDir: string | null,
): BeginStep | null {
  const step = currentStep(compiled, node.state);
  const pending = pendingStep(compiled, node.state, node.context);
  if (!step || !pending) return null;
  const job = step.job;
  const out: BeginStep = {
    session_id: runLabel(node.runId),
    step_id: step.id,
    job_dir: jobDir ?? "",
    step_expected_outputs: (job?.outputs ?? []).map((o) => ({
      name: o.name,
      type: o.type,
      description: o.description,
      required: o.required,
      syntax_for_finished_step_tool: OUTPUT_SYNTAX[o.type],
    })),
    step_reviews: (job?.reviews ?? []).map((r) => ({
      run_each: r.runEach,
      quality_criteria: r.criteria,
      ...(r.guidance !== undefined ? { additional_review_guidance: r.guidance } : {}),
      ...(r.strategy ? { strategy: r.strategy } : {}),
    })),
    step_instructions: pending.prompt,
    common_job_info: compiled.job?.commonJobInfo ?? compiled.description,
  };
  if (job && job.hooks.length > 0) out.hooks_not_run = job.hooks;
  return out;
}
