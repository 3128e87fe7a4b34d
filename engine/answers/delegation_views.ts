/**
 * What answers say about delegation: the child runs of a pending parallel step (with tokens and a
 * ready-made task for a subagent), the blocker while some are open, and the results handed to
 * the synthesis step. Reads only; the writes are in `delegations.ts`.
 * @module
 */
import type { DelegationDigest } from "../model/events.ts";
import { runLabel } from "../model/ids.ts";
import type { DelegatedRun, EngineDeps, NodeRecord, StoreReader } from "../model/ports.ts";
import type { Blocker, StepResponse } from "./responses.ts";
import { mintToken } from "../access/tokens.ts";
import type { CompiledStep, CompiledWorkflow } from "../workflow/compiled.ts";
import { currentStep } from "../workflow/interpreter.ts";
import { delegationHome, delegationStatusOf, hasEnded } from "../run/delegations.ts";
import { tokensFor } from "./node_response.ts";

type View = NonNullable<StepResponse["delegations"]>[number];
type Deps = Pick<EngineDeps, "keyring" | "random">;

/** The task text a host hands a subagent for one child run. */
export function delegationInstruction(token: string, goal: string | null): string {
  return `Call the waymark tool start_workflow with {"delegationToken":"${token}"}, then do each pending step and acknowledge it with continue_workflow (stateToken and ackToken exactly as returned, a recap in output.notesMarkdown) until isComplete is true.${
    goal ? ` Goal: ${goal}.` : ""
  } Your last step's notes and artifacts are handed back to the parent run.`;
}

/** The views of a parallel step's children; `tips` adds current tokens of the open ones. */
export async function delegationViews(
  deps: Deps,
  children: readonly DelegatedRun[],
  at: {
    step: CompiledStep;
    tips?: Pick<StoreReader, "getNode">;
  },
): Promise<View[]> {
  const views: View[] = [];
  for (const c of children) {
    const delegationToken = mintToken(deps.keyring, {
      kind: "delegation",
      runId: c.runId,
      nodeId: c.rootNodeId,
    });
    const view: View = {
      index: c.index,
      workflowId: c.workflowId,
      goal: c.goal,
      runId: runLabel(c.runId),
      status: delegationStatusOf(c.status),
      delegationToken,
      instruction: delegationInstruction(delegationToken, c.goal),
    };
    const tier = at.step.delegations?.[c.index]?.modelTier;
    if (tier) view.modelTier = tier;
    if (at.tips && !hasEnded(c) && c.tipNodeId) {
      const tip = await tipOf(deps, at.tips, c);
      if (tip) view.tip = tip;
    }
    views.push(view);
  }
  return views;
}

/** An open child's tip with fresh tokens (open: no branch of it reached the end). */
async function tipOf(
  deps: Deps,
  reader: Pick<StoreReader, "getNode">,
  child: DelegatedRun,
): Promise<View["tip"] | null> {
  const node = await reader.getNode(child.runId, child.tipNodeId!);
  if (!node) return null;
  return {
    nodeId: node.nodeId,
    ...tokensFor(deps, node, false),
    pendingStepId: node.pendingStepId,
    isComplete: false,
  };
}

/** The blocker of a parallel step acknowledged while children are open. */
export function openBlocker(step: CompiledStep, open: readonly DelegatedRun[]): Blocker {
  const names = open.map((c) => `${runLabel(c.runId)} (${c.workflowId})`).join(", ");
  return {
    code: "DELEGATIONS_OPEN",
    pointer: { kind: "workflow_step", stepId: step.id },
    message: `${open.length} child run(s) of step \`${step.id}\` are still open: ${names}.`,
    suggestedFix:
      "Wait for the subagents to finish their child runs, or drive each open child yourself with the tokens in `delegations[].tip`, or abandon one with abort_workflow and an explanation; then acknowledge this step again with the new ackToken.",
  };
}

/** The section a synthesis step's prompt ends with: each child's results, bounded. */
export function synthesisSection(digest: readonly DelegationDigest[]): string {
  if (digest.length === 0) {
    return "\n\n## Results of the delegations\nNo child run was opened for the previous step: synthesize from the work you did there.";
  }
  const parts = digest.map((d, i) => {
    const head = `### ${i + 1}. \`${d.workflowId}\` (${d.status}, ${runLabel(d.runId)})${
      d.goal ? `: ${d.goal}` : ""
    }`;
    const notes = d.notesMarkdown ? d.notesMarkdown : "(no notes)";
    const artifacts = d.artifacts.length ? `\nArtifacts: ${JSON.stringify(d.artifacts)}` : "";
    const cut = d.truncated ? "\n(cut to its budget: the full output is in the child run)" : "";
    return `${head}\n${d.status === "aborted" ? `Aborted: ${notes}` : notes}${artifacts}${cut}`;
  });
  return `\n\n## Results of the delegations\n${parts.join("\n\n")}`;
}

/** The digest recorded for the synthesis step pending at `node`, or `[]`. */
export async function recordedDigest(
  reader: Pick<StoreReader, "getStepAnchorId" | "getNodeEvents">,
  node: NodeRecord,
): Promise<DelegationDigest[]> {
  const home = await delegationHome(reader, node);
  const events = await reader.getNodeEvents(home.runId, home.nodeId);
  const found = events.find((e) => e.kind === "delegations_collected");
  return found?.kind === "delegations_collected" ? found.children : [];
}

/**
 * Adds to an answer about `node` what delegation says there: the children of a pending parallel
 * step (with tips when `tips`), or the results for a pending synthesis step. Reads nothing for
 * any other step.
 */
export async function describeDelegation(
  deps: Deps & { store: StoreReader },
  at: { node: NodeRecord; compiled: CompiledWorkflow; response: StepResponse; tips?: boolean },
): Promise<void> {
  const step = currentStep(at.compiled, at.node.state);
  if (!step || !at.response.pending) return;
  const reader = deps.store;
  if (step.synthesisOf !== undefined) {
    at.response.pending.prompt += synthesisSection(await recordedDigest(reader, at.node));
    return;
  }
  if (!step.delegations) return;
  const home = await delegationHome(reader, at.node);
  const children = await reader.getDelegations(home.runId, home.nodeId);
  if (children.length === 0) return;
  at.response.delegations = await delegationViews(deps, children, {
    step,
    ...(at.tips ? { tips: reader } : {}),
  });
}
