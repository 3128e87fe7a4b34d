/**
 * `checkpoint_workflow`: durable notes at a node without advancing. Idempotent per checkpoint
 * token; never forks (it attaches after the node's last checkpoint).
 * @module
 */
import { describeDelegation } from "../answers/delegation_views.ts";
import { checkOutput } from "../model/limits.ts";
import type { EngineDeps, StoreWriter } from "../model/ports.ts";
import { fail, type Result } from "../model/result.ts";
import type { StepResponse } from "../answers/responses.ts";
import { checkpointChain } from "../run/branches.ts";
import { guard } from "../run/error_guard.ts";
import {
  childNode,
  nodeCreated,
  observationEvent,
  outputRecorded,
  type StepOutput,
} from "../run/node_events.ts";
import { responseFor } from "../answers/node_response.ts";
import {
  type Attempt,
  type CallOptions,
  recordAttempt,
  type Recorded,
} from "../run/record_attempt.ts";

/** Input of {@linkcode checkpointWorkflow}. */
export interface CheckpointInput {
  /** The snapshot to checkpoint at. */
  stateToken: string;
  /** The checkpoint attempt, as returned with the state token. */
  checkpointToken: string;
  /** The notes and artifacts to keep. */
  output: StepOutput;
}

/** Records a checkpoint. */
export function checkpointWorkflow(
  deps: EngineDeps,
  input: CheckpointInput,
  options: CallOptions = {},
): Promise<Result<StepResponse>> {
  return guard(() => {
    if (!input.output.notesMarkdown && !input.output.artifacts?.length) {
      return Promise.resolve(fail(
        "INVALID_ARGUMENTS",
        "A checkpoint needs output.notesMarkdown or at least one output.artifacts entry: say what was done and what is next.",
        { details: { path: "output" } },
      ));
    }
    const sized = checkOutput(input.output);
    if (!sized.ok) return Promise.resolve(sized);
    return recordAttempt(deps, {
      stateToken: input.stateToken,
      token: input.checkpointToken,
      kind: "checkpoint",
      payload: { output: input.output },
      decide: (tx, attempt) => recordCheckpoint(deps, tx, { attempt, input, options }),
    }, options);
  });
}

async function recordCheckpoint(
  deps: EngineDeps,
  tx: StoreWriter,
  at: { attempt: Attempt; input: CheckpointInput; options: CallOptions },
): Promise<Recorded> {
  const { node, run, compiled, attemptId, warnings } = at.attempt;
  const { output } = at.input;
  const { end: anchor } = await checkpointChain(tx, node);
  const created = await childNode(anchor, {
    origin: ["checkpoint", node.runId, node.nodeId, attemptId],
    nodeKind: "checkpoint",
    state: node.state,
    context: anchor.context,
    preferences: node.preferences,
    pendingStepId: node.pendingStepId,
    edgeKind: "checkpoint",
    notesMarkdown: output.notesMarkdown ?? null,
    notesStepId: null,
  });
  const response = responseFor(deps, created, compiled, {
    workflowHash: run.workflowHash,
    warnings,
    from: node,
  });
  await describeDelegation({ ...deps, store: tx }, { node: created, compiled, response });
  response.checkpoint = { nodeId: created.nodeId };
  const { sessionId, runId } = node;
  const events = [
    ...nodeCreated(created),
    ...outputRecorded({ sessionId, runId, nodeId: created.nodeId, stepId: null }, output),
    ...observationEvent(run, { nodeId: created.nodeId, workspace: at.options.workspace }),
    {
      kind: "checkpoint_recorded" as const,
      sessionId,
      runId,
      nodeId: node.nodeId,
      attemptId,
      resultNodeId: created.nodeId,
      response: JSON.stringify(response),
    },
  ];
  return { response, events };
}
