/**
 * `go_to_step`: back to an earlier step of the top run, as a fork. A checkpoint node under the
 * node where that step was pending becomes where the run stands, so the old branch and its
 * outputs stay in the log and the viewer; the answer lists the steps to redo.
 * @module
 */
import { sessionOfJobDir } from "./session_jobs.ts";
import type { EngineDeps, NodeRecord, StoreReader } from "../model/ports.ts";
import { fail, ok, type Result } from "../model/result.ts";
import { guard } from "../run/error_guard.ts";
import { childNode, nodeCreated } from "../run/node_events.ts";
import { allSteps } from "../workflow/interpreter.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import type { GoToStepResponse } from "./job_responses.ts";
import { findStack, stackCaller } from "./find_stack.ts";
import { jobDrift } from "./drift.ts";
import type { JobPorts } from "./ports.ts";
import { beginStep, loadFrame, noActiveWorkflow, stackEntries } from "./stack.ts";

/** Input of {@linkcode goToStep}, as the tool takes it. */
export interface GoToStepInput {
  /** The earlier step to go back to. */
  step_id: string;
  /** The workflow to act on (its `run_…`), instead of the top of the caller's stack. */
  session_id?: string;
  /** A sub-agent's own stack. */
  agent_id?: string;
}

/** Most nodes walked back from the tip looking for the step. */
const MAX_WALK = 2000;

/** The path from the nearest node where `stepId` was pending up to `tip` (that node first). */
async function pathBack(
  store: StoreReader,
  tip: NodeRecord,
  stepId: string,
): Promise<NodeRecord[] | null> {
  const path: NodeRecord[] = [];
  let node: NodeRecord | null = tip;
  for (let i = 0; node && i < MAX_WALK; i++) {
    path.unshift(node);
    if (node.pendingStepId === stepId && node.nodeKind !== "blocked_attempt") return path;
    node = node.parentId ? await store.getNode(node.runId, node.parentId) : null;
  }
  return null;
}

/** Steps completed from `path[0]` on, in order, once each: the steps to redo. */
function invalidated(path: readonly NodeRecord[]): string[] {
  const out: string[] = [];
  for (const n of path.slice(0, -1)) {
    if (n.nodeKind === "step" && n.pendingStepId && !out.includes(n.pendingStepId)) {
      out.push(n.pendingStepId);
    }
  }
  return out;
}

/** Goes back to an earlier step of the caller's top run. */
export function goToStep(
  deps: EngineDeps & Pick<JobPorts, "presence" | "jobs">,
  input: GoToStepInput & { workspace: WorkspaceObservation },
): Promise<Result<GoToStepResponse>> {
  return guard(async () => {
    const found = await findStack(deps, stackCaller(input), { claim: true });
    if (!found.ok) return found;
    const frames = found.value.view.frames;
    const frame = found.value.target;
    if (!frame) return noActiveWorkflow(input.session_id);
    const top = await loadFrame(deps.store, frame);
    const drift = jobDrift(
      await deps.jobs.load(input.workspace.workspace, { session: sessionOfJobDir(frame.jobDir) }),
      {
        frame,
        pinned: top.compiled,
      },
    );
    const warnings = drift.length > 0 ? { warnings: drift } : {};
    const path = await pathBack(deps.store, top.node, input.step_id);
    if (!path) {
      const ids = allSteps(top.compiled).map((s) => s.id);
      return fail(
        "STEP_NOT_FOUND",
        ids.includes(input.step_id)
          ? `Step \`${input.step_id}\` is not behind the current step \`${top.node.pendingStepId}\`; go_to_step only goes back to a step already reached.`
          : `Step \`${input.step_id}\` is not a step of this workflow. Steps: ${ids.join(", ")}.`,
        { details: { step_id: input.step_id, steps: ids } },
      );
    }
    const redo = invalidated(path);
    if (redo.length === 0) {
      return ok({
        begin_step: beginStep(top.compiled, top.node, frame.jobDir)!,
        invalidated_steps: [],
        ...warnings,
        stack: stackEntries(frames),
      });
    }
    const at = path[0]!;
    const fork = await childNode(at, {
      origin: ["go_to_step", at.runId, at.nodeId, top.node.nodeId],
      nodeKind: "checkpoint",
      state: at.state,
      context: at.context,
      preferences: at.preferences,
      pendingStepId: at.pendingStepId,
      edgeKind: "checkpoint",
      notesMarkdown: `Went back to step \`${input.step_id}\` (go_to_step); to redo: ${
        redo.map((s) => `\`${s}\``).join(", ")
      }.`,
      notesStepId: input.step_id,
    });
    await deps.store.write((tx) =>
      tx.append([...nodeCreated(fork), {
        kind: "output_recorded",
        sessionId: fork.sessionId,
        runId: fork.runId,
        nodeId: fork.nodeId,
        stepId: input.step_id,
        notesMarkdown: fork.notesMarkdown,
        artifacts: [],
      }])
    );
    return ok({
      begin_step: beginStep(top.compiled, fork, frame.jobDir)!,
      invalidated_steps: redo,
      ...warnings,
      stack: stackEntries(
        frames.map((f) =>
          f.runId === frame.runId
            ? { ...f, tipNodeId: fork.nodeId, pendingStepId: fork.pendingStepId }
            : f
        ),
      ),
    });
  });
}
