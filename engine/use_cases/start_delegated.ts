/**
 * `start_workflow` with a `delegationToken`: a subagent takes up a child run a parallel step
 * opened. It answers the child's preferred tip with fresh tokens (a rehydrate: nothing is
 * written), so a second subagent given the same token carries on where the first stopped.
 * @module
 */
import { runLabel } from "../model/ids.ts";
import type { EngineDeps } from "../model/ports.ts";
import { fail, type Result } from "../model/result.ts";
import type { StepResponse } from "../answers/responses.ts";
import { mintToken, verifyToken } from "../access/tokens.ts";
import { continueWorkflow } from "./continue_workflow.ts";

/** What a delegated start carries: the token alone. */
export interface DelegatedStart {
  /** The child run's token, from its parent's `delegations`. */
  delegationToken?: string;
  /** Refused with a token: the parallel step chose the workflow. */
  workflowId?: string;
  /** Refused with a token: the parallel step set the child's context. */
  context?: Record<string, unknown>;
  /** Refused with a token: the delegation's goal is the child's. */
  goal?: string;
  /** Refused with a token: the child has its parent's preferences. */
  preferences?: unknown;
}

/** Answers the child run a delegation token names, at its preferred tip. */
export async function startDelegated(
  deps: EngineDeps,
  input: DelegatedStart,
): Promise<Result<StepResponse>> {
  const extra = (["workflowId", "context", "goal", "preferences"] as const)
    .filter((k) => input[k] !== undefined);
  if (extra.length > 0) {
    return fail(
      "INVALID_ARGUMENTS",
      `A delegationToken comes alone: its parallel step already chose the child's workflow, context, goal and preferences. Leave out ${
        extra.map((k) => `\`${k}\``).join(", ")
      }.`,
      { details: { fields: extra } },
    );
  }
  const claims = verifyToken(deps.keyring, input.delegationToken ?? "", "delegation");
  if (!claims.ok) return claims;
  const { runId, nodeId } = claims.value;
  const link = await deps.store.getDelegationLink(runId);
  if (!link) {
    return fail(
      "NODE_NOT_FOUND",
      `The child run ${
        runLabel(runId)
      } this delegationToken names is not in this database. Ask the parent agent for the list again (continue_workflow with the parent's stateToken).`,
      { details: { runId: runLabel(runId) } },
    );
  }
  const tip = await deps.store.getPreferredTip(runId, nodeId);
  const stateToken = mintToken(deps.keyring, { kind: "state", runId, nodeId: tip.nodeId });
  const answer = await continueWorkflow(deps, { stateToken });
  if (!answer.ok) return answer;
  answer.value.delegatedFrom = {
    parentRunId: runLabel(link.parentRunId),
    parentStepId: link.stepId,
    index: link.index,
  };
  return answer;
}
