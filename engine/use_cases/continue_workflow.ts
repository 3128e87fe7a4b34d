/**
 * `continue_workflow`: with an ack token, acknowledge the pending step and advance (replays
 * return the recorded response; an old node forks); without one, rehydrate (write nothing).
 * @module
 */
import { runBudgetWarnings } from "../cost/record_usage.ts";
import { examplePayload, normalizeBlockers } from "../gates/enforce.ts";
import { runLabel } from "../model/ids.ts";
import { checkContext, checkOutput } from "../model/limits.ts";
import type { EngineDeps, StoreWriter } from "../model/ports.ts";
import { fail, ok, type Result } from "../model/result.ts";
import type { StepResponse } from "../answers/responses.ts";
import type { Warning } from "../workflow/catalog.ts";
import { advanceState, currentStep, isComplete } from "../workflow/interpreter.ts";
import {
  type AckAssessment,
  type Acknowledgement,
  advancedEvents,
  assessAck,
  blockedEvents,
  gapsOf,
  stateWithFindings,
  stepProgress,
} from "../run/advance.ts";
import { checkpointChain, forkSummary } from "../run/branches.ts";
import { driftWarnings } from "../run/drift.ts";
import { guard } from "../run/error_guard.ts";
import { childNode } from "../run/node_events.ts";
import { responseFor, tokensFor } from "../answers/node_response.ts";
import { buildRecap } from "../answers/recap.ts";
import { arrive } from "../run/arrive.ts";
import {
  delegatedIds,
  type Delegates,
  delegationHome,
  hasEnded,
  loadDelegates,
} from "../run/delegations.ts";
import { describeDelegation, openBlocker } from "../answers/delegation_views.ts";
import {
  type Attempt,
  type CallOptions,
  recordAttempt,
  type Recorded,
} from "../run/record_attempt.ts";
import { loadNode, verifyPair } from "../run/run_context.ts";
import { compareWorkspace, snapshotFolder } from "../run/snapshot_step.ts";
import {
  runsCommand,
  type Verified,
  verifyAttempt,
  withEvidence,
} from "../verification/verify_attempt.ts";

/** Input of {@linkcode continueWorkflow}. */
export interface ContinueInput extends Acknowledgement {
  /** The snapshot to continue from. */
  stateToken: string;
  /** Acknowledges the pending step; omit to rehydrate. */
  ackToken?: string;
}

/** Continues a run: advance with an ack token, rehydrate without one (which writes nothing). */
export function continueWorkflow(
  deps: EngineDeps,
  input: ContinueInput,
  options: CallOptions = {},
): Promise<Result<StepResponse>> {
  return guard(() => {
    if (input.ackToken === undefined) return rehydrate(deps, input, options);
    const checked = checkContext(input.context);
    if (!checked.ok) return Promise.resolve(checked);
    const sized = checkOutput(input.output);
    if (!sized.ok) return Promise.resolve(sized);
    let delegates: Delegates = new Map();
    let verified: Verified | null = null;
    return recordAttempt(deps, {
      stateToken: input.stateToken,
      token: input.ackToken,
      kind: "ack",
      payload: { context: input.context, output: input.output, preferences: input.preferences },
      refuse: refuseComplete,
      outside: (attempt) =>
        delegatedIds(attempt.compiled).size > 0 || runsCommand(attempt.compiled, attempt.node),
      prepare: async (attempt) => {
        const loaded = await loadDelegates(deps, attempt.compiled);
        if (!loaded.ok) return loaded;
        delegates = loaded.value;
        verified = await verifyAttempt(deps, attempt, options);
      },
      decide: async (tx, attempt) => {
        // An acknowledgement attaches after the node's last checkpoint and reads its context
        // (answers the user gave through the client live there; see `user_input.ts`).
        const chain = await checkpointChain(tx, attempt.node);
        const assessed = assessAck({ ...attempt.node, context: chain.end.context }, {
          compiled: attempt.compiled,
          ack: input,
          warnings: [...attempt.warnings, ...(verified?.warnings ?? [])],
          problems: verified?.problems,
        });
        const { assessment, open } = await gateOnChildren(tx, { attempt, assessment: assessed });
        const recorded = assessment.blocks
          ? await recordBlocked(deps, tx, { attempt, assessment, open })
          : await recordAdvanced(deps, tx, { attempt, assessment, options, chain, delegates });
        return withEvidence(recorded, { verified, attempt });
      },
    }, options);
  });
}

async function rehydrate(
  deps: EngineDeps,
  input: ContinueInput,
  options: CallOptions,
): Promise<Result<StepResponse>> {
  const verified = verifyPair(deps, input.stateToken);
  if (!verified.ok) return verified;
  const loaded = await loadNode(deps.store, verified.value.state);
  if (!loaded.ok) return loaded;
  const { node, run, compiled } = loaded.value;
  const warnings: Warning[] = await driftWarnings(deps, run.workflowId, run.workflowHash);
  warnings.push(...await runBudgetWarnings(deps, { runId: run.runId, compiled }));
  if (input.context || input.output || input.preferences) {
    warnings.push({
      code: "IGNORED_WITHOUT_ACK",
      message:
        "context, output and preferences are only recorded with an ackToken; this rehydrate wrote nothing.",
    });
  }
  const response = responseFor(deps, node, compiled, {
    workflowHash: run.workflowHash,
    warnings,
  });
  await describeDelegation(deps, { node, compiled, response, tips: true });
  const { branches } = await checkpointChain(deps.store, node);
  if (branches.length > 0) {
    const tip = await deps.store.getPreferredTip(node.runId, node.nodeId);
    const tipComplete = isComplete(compiled, tip.state);
    response.tip = {
      nodeId: tip.nodeId,
      ...(tokensFor(deps, tip, tipComplete)),
      pendingStepId: tip.pendingStepId,
      isComplete: tipComplete,
    };
    response.forked = await forkSummary(deps.store, { node, branches, tip });
    response.recap = await buildRecap(deps.store, tip);
  } else {
    response.recap = await buildRecap(deps.store, node);
  }
  await compareWorkspace(deps, response, {
    node,
    stateToken: input.stateToken,
    workspace: snapshotFolder(options),
  });
  return ok(response);
}

function refuseComplete({ node, compiled }: Attempt): Result<never> | null {
  if (!isComplete(compiled, node.state)) return null;
  return fail(
    "RUN_COMPLETE",
    "This run is already complete: there is no pending step to acknowledge. Use checkpoint_workflow to add notes, or start a new run.",
    { details: { runId: runLabel(node.runId) } },
  );
}

/**
 * A parallel step is not acknowledged while any of its child runs is open: the acknowledgement
 * blocks (whatever the autonomy), naming them.
 */
async function gateOnChildren(
  tx: StoreWriter,
  at: { attempt: Attempt; assessment: AckAssessment },
): Promise<{ assessment: AckAssessment; open: boolean }> {
  const a = at.assessment;
  if (!a.step.delegations) return { assessment: a, open: false };
  const home = await delegationHome(tx, at.attempt.node);
  const open = (await tx.getDelegations(home.runId, home.nodeId)).filter((c) => !hasEnded(c));
  if (open.length === 0) return { assessment: a, open: false };
  const problems = normalizeBlockers([...a.problems, openBlocker(a.step, open)]);
  return { assessment: { ...a, problems, blocks: true }, open: true };
}

/** Blocked: the attempt is a node of its own; the run stays where it was. */
async function recordBlocked(
  deps: EngineDeps,
  tx: StoreWriter,
  { attempt, assessment: a, open }: { attempt: Attempt; assessment: AckAssessment; open: boolean },
): Promise<Recorded> {
  const { node, compiled, attemptId } = attempt;
  const created = await childNode(node, {
    origin: ["blocked", node.runId, node.nodeId, attemptId],
    nodeKind: "blocked_attempt",
    state: { ...a.prior, ...(a.review.observations.length ? { caps: a.caps } : {}) },
    context: a.context,
    preferences: a.preferences,
    pendingStepId: node.pendingStepId,
    edgeKind: null,
    notesMarkdown: a.ack.output?.notesMarkdown ?? null,
    notesStepId: node.pendingStepId,
  });
  const response = responseFor(
    deps,
    { ...node, context: a.context, preferences: a.preferences },
    compiled,
    { workflowHash: attempt.run.workflowHash, warnings: a.warnings, from: node },
  );
  if (open) {
    await describeDelegation({ ...deps, store: tx }, { node, compiled, response, tips: true });
  }
  response.kind = "blocked";
  response.blockers = a.problems;
  response.example = examplePayload(compiled, a.problems, a.step);
  response.blockedAttempt = { nodeId: created.nodeId };
  return { response, events: blockedEvents(a, { node, created, attemptId, response }) };
}

/** Advanced: a new step node at the end of the node's checkpoint chain (a fork if it has steps). */
async function recordAdvanced(
  deps: EngineDeps,
  tx: StoreWriter,
  at: {
    attempt: Attempt;
    assessment: AckAssessment;
    options: CallOptions;
    chain: Awaited<ReturnType<typeof checkpointChain>>;
    delegates: Delegates;
  },
): Promise<Recorded> {
  const { attempt, assessment: a } = at;
  const { node, run, compiled, attemptId } = attempt;
  const { end: parent, branches } = at.chain;
  const advanced = advanceState(compiled, stateWithFindings(a), {
    context: a.context,
    artifacts: a.ack.output?.artifacts ?? [],
  });
  const warnings = [...a.warnings, ...advanced.notices];
  const created = await childNode(parent, {
    origin: ["ack", node.runId, node.nodeId, attemptId],
    nodeKind: "step",
    state: advanced.state,
    context: a.context,
    preferences: a.preferences,
    pendingStepId: currentStep(compiled, advanced.state)?.id ?? null,
    edgeKind: "acked_step",
    notesMarkdown: a.ack.output?.notesMarkdown ?? null,
    notesStepId: node.pendingStepId,
  });
  const response = responseFor(deps, created, compiled, {
    workflowHash: run.workflowHash,
    warnings,
    from: node,
  });
  if (branches.length > 0) {
    // Read before this advance's own child exists, so the preferred tip is the newest node of
    // the branches that were already there.
    const tip = await tx.getPreferredTip(node.runId, node.nodeId);
    response.forked = await forkSummary(tx, { node, branches, tip });
  }
  const gaps = gapsOf(a);
  if (gaps.length > 0) response.gaps = gaps;
  const arrived = await arrive({ ...deps, store: tx }, {
    acked: node,
    created,
    compiled,
    response,
    delegates: at.delegates,
  });
  const events = advancedEvents(a, {
    node,
    created,
    attemptId,
    response,
    gaps,
    run,
    workspace: at.options.workspace,
  });
  return {
    response,
    events: [...events, ...arrived],
    progress: stepProgress(compiled, { child: created, completed: a.step }),
    answered: { node: created, compiled, artifacts: a.ack.output?.artifacts ?? [] },
  };
}
