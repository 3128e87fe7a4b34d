/**
 * The write of a `finished_step` that passed its checks: a new step node under the node the
 * step was pending at, the output with its files' facts, the reviews and any override (a
 * gap), and the exact answer, in one transaction. Another process that finished the same step
 * first wins; this call then replays its answer or says where the run is now.
 * @module
 */
import { CONTRACT_PACKS } from "../gates/contracts.ts";
import type { Artifact, DomainEvent } from "../model/events.ts";
import type { EngineDeps, NodeRecord, StackFrame, StoreWriter } from "../model/ports.ts";
import { fail, ok, type Result } from "../model/result.ts";
import { childNode, nodeCreated, observationEvent } from "../run/node_events.ts";
import { advanceState, currentStep } from "../workflow/interpreter.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import { JOB_OUTPUTS_CONTRACT } from "./compile.ts";
import type { Submission } from "./gate.ts";
import type { FinishedResponse } from "./job_responses.ts";
import type { FoundStack } from "./find_stack.ts";
import { beginStep, stackEntries, workflowLabel } from "./stack.ts";

/** What an advance records. */
export interface JobAdvance {
  /** The stack it acts on. */
  found: FoundStack;
  /** The checked submission. */
  submission: Submission;
  /** The call's attempt id. */
  attemptId: string;
  /** What was done. */
  notes?: string;
  /** Reviews that passed, recorded with the advance. */
  reviewEvents: DomainEvent[];
  /** The caller's workspace. */
  workspace: WorkspaceObservation;
}

/** The artifact that records a submission: outputs as given, and each file's facts. */
function outputsArtifact(s: Submission): Artifact {
  return {
    kind: CONTRACT_PACKS.get(JOB_OUTPUTS_CONTRACT)!.artifactKind,
    outputs: s.outputs,
    files: s.files.map((f) => ({
      output: f.output,
      path: f.path,
      size: f.size,
      sha256: f.sha256,
      ...(f.modified !== undefined ? { modified: f.modified } : {}),
    })),
  };
}

/** Every output of the branch ending at `node`, later steps over earlier ones. */
async function allOutputs(
  tx: StoreWriter,
  node: NodeRecord,
): Promise<Record<string, string | string[]>> {
  const merged: Record<string, string | string[]> = {};
  const kind = CONTRACT_PACKS.get(JOB_OUTPUTS_CONTRACT)!.artifactKind;
  for (const out of await tx.getBranchOutputs(node.runId, node.nodeId, 1000)) {
    for (const a of out.artifacts) {
      if (a.kind === kind) Object.assign(merged, a.outputs as Record<string, string | string[]>);
    }
  }
  return merged;
}

/** The files recorded by size and modification time (past the hashing budget), for the answer. */
function unhashed(s: Submission): Pick<FinishedResponse, "unhashed_files"> {
  const files = s.files.filter((f) => f.sha256 === null).map((f) => ({
    output: f.output,
    path: f.path,
    size: f.size,
    modified: f.modified ?? "",
  }));
  return files.length > 0 ? { unhashed_files: files } : {};
}

/** The answer after the advance to `child`: the next step, or the run's completion. */
async function answer(
  tx: StoreWriter,
  at: { child: NodeRecord; frames: StackFrame[]; s: Submission },
): Promise<FinishedResponse> {
  return { ...await nextOrDone(tx, at), ...unhashed(at.s) };
}

async function nextOrDone(
  tx: StoreWriter,
  at: { child: NodeRecord; frames: StackFrame[]; s: Submission },
): Promise<FinishedResponse> {
  const { child, frames, s } = at;
  const { compiled, frame } = s.top;
  const next = beginStep(compiled, child, frame.jobDir);
  if (next) {
    return {
      status: "next_step",
      begin_step: next,
      stack: stackEntries(
        frames.map((f) =>
          f.runId === frame.runId
            ? { ...f, tipNodeId: child.nodeId, pendingStepId: child.pendingStepId }
            : f
        ),
      ),
    };
  }
  const index = frames.findIndex((f) => f.runId === frame.runId);
  const below = frames.filter((f) => f.runId !== frame.runId);
  const parent = frames[index - 1];
  const response: FinishedResponse = {
    status: "workflow_complete",
    summary: `Workflow \`${workflowLabel(compiled.id)}\` is complete.${
      parent
        ? ` Back in \`${
          workflowLabel(parent.workflowId)
        }\` at step \`${parent.pendingStepId}\`: finish that step with finished_step.`
        : ""
    }`,
    all_outputs: await allOutputs(tx, child),
    stack: stackEntries(below),
  };
  const post = compiled.job?.postWorkflowInstructions;
  if (post !== undefined) response.post_workflow_instructions = post;
  return response;
}

function overrideGap(s: Submission): DomainEvent[] {
  if (s.overrideReason === undefined) return [];
  const { node } = s.top;
  return [{
    kind: "gap_recorded",
    sessionId: node.sessionId,
    runId: node.runId,
    nodeId: node.nodeId,
    stepId: node.pendingStepId,
    severity: "minor",
    code: "QUALITY_REVIEW_OVERRIDDEN",
    pointer: { kind: "workflow_step", stepId: s.step.id },
    message: s.overrideReason,
  }];
}

/** Records the advance, unless another writer moved the run first. */
export function advanceJobRun(deps: EngineDeps, a: JobAdvance): Promise<Result<FinishedResponse>> {
  const { top } = a.submission;
  const { node, run, compiled } = top;
  return deps.store.write(async (tx) => {
    const raced = await tx.getAttempt(node.runId, node.nodeId, a.attemptId, "ack");
    if (raced) return ok(JSON.parse(raced.response) as FinishedResponse);
    const { sessionId, agentId } = a.found;
    const now = (await tx.getStack(sessionId!, agentId)).frames;
    const current = now.find((f) => f.runId === node.runId);
    if (!current || current.tipNodeId !== node.nodeId) {
      return fail(
        "STEP_NOT_FOUND",
        `Step \`${node.pendingStepId}\` was finished (or the workflow moved on) in another call meanwhile; the stack is now ${
          JSON.stringify(stackEntries(now))
        }. Call finished_step for the step the workflow stands at now.`,
        { retry: { kind: "retryable_immediate" } },
      );
    }
    const advanced = advanceState(compiled, node.state, { context: node.context });
    const child = await childNode(node, {
      origin: ["ack", node.runId, node.nodeId, a.attemptId],
      nodeKind: "step",
      state: advanced.state,
      context: node.context,
      preferences: node.preferences,
      pendingStepId: currentStep(compiled, advanced.state)?.id ?? null,
      edgeKind: "acked_step",
      notesMarkdown: a.notes ?? null,
      notesStepId: node.pendingStepId,
    });
    const where = { sessionId: node.sessionId, runId: node.runId, nodeId: child.nodeId };
    const output: DomainEvent = {
      kind: "output_recorded",
      ...where,
      stepId: node.pendingStepId,
      notesMarkdown: a.notes ?? null,
      artifacts: [outputsArtifact(a.submission)],
    };
    await tx.append([...nodeCreated(child), output]);
    const response = await answer(tx, { child, frames: now, s: a.submission });
    await tx.append([
      ...a.reviewEvents,
      ...overrideGap(a.submission),
      ...observationEvent(run, { nodeId: child.nodeId, workspace: a.workspace }),
      {
        kind: "advance_recorded",
        sessionId: node.sessionId,
        runId: node.runId,
        nodeId: node.nodeId,
        attemptId: a.attemptId,
        outcome: "advanced",
        resultNodeId: child.nodeId,
        response: JSON.stringify(response),
      },
    ]);
    return ok(response);
  });
}
