/**
 * The workflow stack as the DeepWork tools see it: which (session, agent) stack a call acts
 * on, its top run loaded with its pinned workflow, and the `stack` and `begin_step` fields of
 * every answer. The stack itself is a projection of the log (`run_stacked` and the runs'
 * statuses), so it is read afresh on every call and is the same in every process.
 * @module
 */
import { parseSessionLabel, runLabel, sessionLabel } from "../ids.ts";
import type { NodeRecord, RunRecord, StackFrame, StackView, StoreReader } from "../ports.ts";
import { fail, ok, type Result, StorageCorruptionError } from "../result.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { currentStep, pendingStep } from "../workflow/interpreter.ts";
import { OUTPUT_SYNTAX } from "./job.ts";
import type { BeginStep, StackEntry } from "./responses.ts";

/** Who is calling and where: what picks a stack. */
export interface StackCaller {
  /** `session_id` as the agent passed it (`ses_…`), when it did. */
  sessionId?: string;
  /** `agent_id`: a sub-agent's own stack; absent for the main agent. */
  agentId?: string;
  /** The caller's workspace folder. */
  workspace: string | null;
}

/** The caller named by a DeepWork tool's arguments (`session_id`, `agent_id`) and workspace. */
export function stackCaller(
  input: { session_id?: string; agent_id?: string; workspace: { workspace: string | null } },
): StackCaller {
  return {
    sessionId: input.session_id,
    agentId: input.agent_id,
    workspace: input.workspace.workspace,
  };
}

/** A stack found for a caller: its session (when there is one) and its frames. */
export interface FoundStack {
  /** The session (hex), or `null` when the caller has no stack yet. */
  sessionId: string | null;
  /** The agent whose stack it is. */
  agentId: string | null;
  /** Its frames. */
  view: StackView;
}

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

const EMPTY: StackView = { frames: [], lastFinished: null };

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
      ? `No active workflow session in \`${sessionId}\`: its workflows have all finished or been aborted. Start one with start_workflow.`
      : "No active workflow session. Start one with start_workflow (or pass the session_id that begin_step returned).",
    { details: sessionId ? { session_id: sessionId } : {} },
  );
}

/**
 * The stack a call acts on: the one of `session_id` when given, else the most recently changed
 * running stack of the caller's workspace (as the seed says), for the caller's agent.
 */
export async function findStack(
  store: StoreReader,
  caller: StackCaller,
): Promise<Result<FoundStack>> {
  const agentId = caller.agentId ?? null;
  if (caller.sessionId !== undefined) {
    const sessionId = parseSessionLabel(caller.sessionId);
    if (!sessionId || !(await store.getSession(sessionId))) {
      return fail(
        "NO_ACTIVE_WORKFLOW",
        `There is no session \`${caller.sessionId}\` in this database. Pass the session_id that begin_step returned, or omit it to use the current stack.`,
        { details: { session_id: caller.sessionId } },
      );
    }
    return ok({ sessionId, agentId, view: await store.getStack(sessionId, agentId) });
  }
  const sessionId = await store.findStackSession(caller.workspace, agentId);
  if (!sessionId) return ok({ sessionId: null, agentId, view: EMPTY });
  return ok({ sessionId, agentId, view: await store.getStack(sessionId, agentId) });
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
  node: Pick<NodeRecord, "sessionId" | "state" | "context">,
  jobDir: string | null,
): BeginStep | null {
  const step = currentStep(compiled, node.state);
  const pending = pendingStep(compiled, node.state, node.context);
  if (!step || !pending) return null;
  const job = step.job;
  const out: BeginStep = {
    session_id: sessionLabel(node.sessionId),
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
