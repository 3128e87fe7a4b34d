/**
 * `checkpoint_workflow`: durable notes at a node without advancing. Idempotent per checkpoint
 * token; never forks (it attaches after the node's last checkpoint).
 * @module
 */
import type { DomainEvent } from "../events.ts";
import type { EngineDeps, NodeRecord } from "../ports.ts";
import { fail, ok, type Result } from "../result.ts";
import type { StepResponse } from "../responses.ts";
import {
  type CallOptions,
  checkpointChain,
  observationEvent,
  type StepOutput,
} from "./continue_workflow.ts";
import { loadNode, verifyPair } from "./run_context.ts";
import {
  deriveNodeId,
  driftWarnings,
  guard,
  replayRecorded,
  responseFor,
  sessionLabel,
} from "./shared.ts";

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
  return guard(async () => {
    if (!input.output.notesMarkdown && !input.output.artifacts?.length) {
      return fail(
        "INVALID_ARGUMENTS",
        "A checkpoint needs output.notesMarkdown or at least one output.artifacts entry: say what was done and what is next.",
        { details: { path: "output" } },
      );
    }
    const verified = verifyPair(deps, input.stateToken, {
      token: input.checkpointToken,
      kind: "checkpoint",
    });
    if (!verified.ok) return verified;
    const claims = verified.value.attempt!;
    const attemptId = claims.attemptId!;
    const recorded = await deps.store.getAttempt(
      claims.runId,
      claims.nodeId,
      attemptId,
      "checkpoint",
    );
    if (recorded) return replayRecorded(recorded);
    const loaded = await loadNode(deps.store, verified.value.state);
    if (!loaded.ok) return loaded;
    const { node, run, compiled } = loaded.value;
    const warnings = await driftWarnings(deps, run.workflowId, run.workflowHash);
    let appended = false;
    const result = await deps.store.write(async (tx) => {
      const raced = await tx.getAttempt(claims.runId, claims.nodeId, attemptId, "checkpoint");
      if (raced) return replayRecorded(raced);
      const { end: anchor } = await checkpointChain(tx, node);
      const checkpoint: NodeRecord = {
        ...node,
        nodeId: await deriveNodeId(["checkpoint", node.runId, node.nodeId, attemptId]),
        parentId: anchor.nodeId,
        nodeKind: "checkpoint",
        depth: anchor.depth + 1,
        edgeKind: "checkpoint",
        notesMarkdown: input.output.notesMarkdown ?? null,
        notesStepId: null,
      };
      const response = responseFor(deps, checkpoint, compiled, {
        workflowHash: run.workflowHash,
        warnings,
      });
      response.checkpoint = { nodeId: checkpoint.nodeId };
      const { sessionId, runId } = node;
      const { edgeKind: _e, notesMarkdown: _n, notesStepId: _s, ...facts } = checkpoint;
      const events: DomainEvent[] = [
        { kind: "node_created", ...facts },
        {
          kind: "edge_created",
          sessionId,
          runId,
          fromId: anchor.nodeId,
          toId: checkpoint.nodeId,
          edgeKind: "checkpoint",
        },
        {
          kind: "output_recorded",
          sessionId,
          runId,
          nodeId: checkpoint.nodeId,
          stepId: null,
          notesMarkdown: input.output.notesMarkdown ?? null,
          artifacts: input.output.artifacts ?? [],
        },
        ...observationEvent(run, { nodeId: checkpoint.nodeId, workspace: options.workspace }),
        {
          kind: "checkpoint_recorded",
          sessionId,
          runId,
          nodeId: node.nodeId,
          attemptId,
          resultNodeId: checkpoint.nodeId,
          response: JSON.stringify(response),
        },
      ];
      await tx.append(events);
      appended = true;
      return ok(response);
    });
    if (appended) options.onAppend?.(sessionLabel(node.sessionId));
    return result;
  });
}
