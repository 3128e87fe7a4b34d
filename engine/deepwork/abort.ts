/**
 * `abort_workflow` of the DeepWork profile: aborts the top run of the caller's stack, or the
 * workflow `session_id` names (an event, and the run's status `aborted`), and says where the
 * stack resumes.
 * @module
 */
import type { EngineDeps } from "../model/ports.ts";
import type { AgentPresence } from "./ports.ts";
import { ok, type Result } from "../model/result.ts";
import { abortRun } from "../use_cases/abort_run.ts";
import { guard } from "../run/error_guard.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import type { JobAbortResponse } from "./job_responses.ts";
import { findStack, stackCaller } from "./find_stack.ts";
import { noActiveWorkflow, stackEntries, workflowLabel } from "./stack.ts";

/** Input of {@linkcode abortJobWorkflow}, as the tool takes it. */
export interface JobAbortInput {
  /** Why the workflow is abandoned. */
  explanation: string;
  /** The workflow to abort (its `run_…`), instead of the top of the caller's stack. */
  session_id?: string;
  /** A sub-agent's own stack. */
  agent_id?: string;
}

/** Aborts the caller's top run (or the one named); the new top (if any) is where work resumes. */
export function abortJobWorkflow(
  deps: EngineDeps & { presence: AgentPresence },
  input: JobAbortInput & { workspace: WorkspaceObservation },
): Promise<Result<JobAbortResponse>> {
  return guard(async () => {
    const found = await findStack(deps, stackCaller(input), { claim: true });
    if (!found.ok) return found;
    const frames = found.value.view.frames;
    const top = found.value.target;
    if (!top) return noActiveWorkflow(input.session_id);
    const done = await abortRun(deps, {
      runId: top.runId,
      nodeId: top.tipNodeId,
      explanation: input.explanation,
    });
    if (!done.ok) return done;
    const below = frames.filter((f) => f.runId !== top.runId);
    const resumed = below.at(-1);
    return ok({
      aborted_workflow: workflowLabel(top.workflowId),
      aborted_step: top.pendingStepId,
      explanation: input.explanation,
      stack: stackEntries(below),
      resumed_workflow: resumed ? workflowLabel(resumed.workflowId) : null,
      resumed_step: resumed?.pendingStepId ?? null,
    });
  });
}
