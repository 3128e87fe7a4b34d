/**
 * `continue_workflow`: with an ack token, acknowledge the pending step and advance (replays
 * return the recorded response; an old node forks); without one, rehydrate (write nothing).
 * @module
 */
import type { Artifact, DomainEvent } from "../events.ts";
import type { EngineDeps, NodeRecord, RunRecord, StoreReader, StoreWriter } from "../ports.ts";
import { applyPreferences, type PreferencesPatch, recommendationWarnings } from "../preferences.ts";
import { type Blocker, examplePayload, normalizeBlockers, reviewAck } from "../enforce.ts";
import { observationChanged, type WorkspaceObservation } from "../workspace.ts";
import { fail, ok, type Result } from "../result.ts";
import type { Branch, Gap, StepProgress, StepResponse } from "../responses.ts";
import type { Warning } from "../workflow/catalog.ts";
import {
  advanceState,
  allSteps,
  currentStep,
  effectiveContext,
  isComplete,
  readState,
  remainingSteps,
} from "../workflow/interpreter.ts";
import { loadNode, verifyPair } from "./run_context.ts";
import {
  buildRecap,
  deriveNodeId,
  driftWarnings,
  guard,
  replayRecorded,
  responseFor,
  sessionLabel,
  tokensFor,
} from "./shared.ts";

/** Durable output of a step. */
export interface StepOutput {
  /** A short recap of what happened and what is next. */
  notesMarkdown?: string;
  /** Small structured results. */
  artifacts?: Artifact[];
}

/** Input of {@linkcode continueWorkflow}. */
export interface ContinueInput {
  /** The snapshot to continue from. */
  stateToken: string;
  /** Acknowledges the pending step; omit to rehydrate. */
  ackToken?: string;
  /** Context changes, merged over the node's context. */
  context?: Record<string, unknown>;
  /** Preference changes from here on. */
  preferences?: PreferencesPatch;
  /** What the step produced. */
  output?: StepOutput;
}

const PREVIEW_CHARS = 160;

/** Summaries of a node's existing children. */
export function branchSummaries(children: readonly NodeRecord[]): Branch[] {
  return children.map((child) => ({
    nodeId: child.nodeId,
    kind: child.nodeKind,
    pendingStepId: child.pendingStepId,
    notesPreview: child.notesMarkdown === null
      ? null
      : child.notesMarkdown.length > PREVIEW_CHARS
      ? `${child.notesMarkdown.slice(0, PREVIEW_CHARS - 1)}…`
      : child.notesMarkdown,
  }));
}

/**
 * A node's checkpoint chain: the node, then its newest checkpoint child, then that one's, and so
 * on. Checkpoints and acks attach at the chain's end (so a checkpoint never forks), and the step
 * children anywhere along it are the branches that already left this snapshot.
 */
export async function checkpointChain(
  store: StoreReader,
  node: NodeRecord,
): Promise<{ end: NodeRecord; branches: NodeRecord[] }> {
  let end = node;
  const branches: NodeRecord[] = [];
  for (;;) {
    const children = await store.getChildren(end.runId, end.nodeId);
    branches.push(...children.filter((c) => c.nodeKind === "step"));
    const checkpoints = children.filter((c) => c.nodeKind === "checkpoint");
    const next = checkpoints[checkpoints.length - 1];
    if (!next) return { end, branches };
    end = next;
  }
}

/** Options of the execution use-cases. */
export interface CallOptions {
  /** The caller's workspace, recorded as an observation when it differs from the run's last. */
  workspace?: WorkspaceObservation;
  /**
   * Told the session (`ses_…`) after this call's events committed; not called for a replay or
   * a rehydrate, which append nothing.
   */
  onAppend?: (sessionId: string) => void;
  /** Told how far the run is after this call advanced it (not on a replay or when blocked). */
  onProgress?: (progress: StepProgress) => void;
}

/** Continues a run: advance with an ack token, rehydrate without one (which writes nothing). */
export function continueWorkflow(
  deps: EngineDeps,
  input: ContinueInput,
  options: CallOptions = {},
): Promise<Result<StepResponse>> {
  return guard(() =>
    input.ackToken === undefined ? rehydrate(deps, input) : advance(deps, input, options)
  );
}

/** The observation event for a call, when the workspace changed since the run's last one. */
export function observationEvent(
  run: RunRecord,
  at: { nodeId: string; workspace: WorkspaceObservation | undefined },
): DomainEvent[] {
  const { nodeId, workspace } = at;
  if (!workspace || !observationChanged(run.observed, workspace)) return [];
  return [{
    kind: "observation_recorded",
    sessionId: run.sessionId,
    runId: run.runId,
    nodeId,
    workspace: workspace.workspace,
    gitBranch: workspace.gitBranch,
    gitHeadSha: workspace.gitHeadSha,
  }];
}

async function rehydrate(deps: EngineDeps, input: ContinueInput): Promise<Result<StepResponse>> {
  const verified = verifyPair(deps, input.stateToken);
  if (!verified.ok) return verified;
  const loaded = await loadNode(deps.store, verified.value.state);
  if (!loaded.ok) return loaded;
  const { node, run, compiled } = loaded.value;
  const warnings: Warning[] = await driftWarnings(deps, run.workflowId, run.workflowHash);
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
    response.forked = {
      existingBranches: branchSummaries(branches),
      preferredTipNodeId: tip.nodeId,
      downstreamRecap: await buildRecap(deps.store, tip, { stopAt: node }),
    };
    response.recap = await buildRecap(deps.store, tip);
  } else {
    response.recap = await buildRecap(deps.store, node);
  }
  return ok(response);
}

async function advance(
  deps: EngineDeps,
  input: ContinueInput,
  options: CallOptions,
): Promise<Result<StepResponse>> {
  const verified = verifyPair(deps, input.stateToken, {
    token: input.ackToken as string,
    kind: "ack",
  });
  if (!verified.ok) return verified;
  const ack = verified.value.attempt!;
  const recorded = await deps.store.getAttempt(ack.runId, ack.nodeId, ack.attemptId!, "ack");
  if (recorded) return replayRecorded(recorded);
  const loaded = await loadNode(deps.store, verified.value.state);
  if (!loaded.ok) return loaded;
  // Nodes are immutable, so the node read above is still right inside the transaction; only
  // its children (and the attempt, for a racing writer) must be read under the lock.
  const { node, run, compiled } = loaded.value;
  if (isComplete(compiled, node.state)) {
    return fail(
      "RUN_COMPLETE",
      "This run is already complete: there is no pending step to acknowledge. Use checkpoint_workflow to add notes, or start a new run.",
      { details: { runId: `run_${node.runId}` } },
    );
  }
  const warnings = await driftWarnings(deps, run.workflowId, run.workflowHash);
  let appended = false;
  let progress: StepProgress | undefined;
  const result = await deps.store.write(async (tx) => {
    const raced = await tx.getAttempt(ack.runId, ack.nodeId, ack.attemptId!, "ack");
    if (raced) return replayRecorded(raced);
    const response = await recordAdvance(deps, tx, {
      node,
      input,
      ack: ack.attemptId!,
      run,
      compiled,
      warnings,
      workspace: options.workspace,
      onProgress: (p) => progress = p,
    });
    appended = true;
    return ok(response);
  });
  if (appended) options.onAppend?.(sessionLabel(node.sessionId));
  if (appended && progress) options.onProgress?.(progress);
  return result;
}

type Compiled = Parameters<typeof advanceState>[0];

function gapOf(b: Blocker): Gap {
  return { severity: "critical", code: b.code, pointer: b.pointer, message: b.message };
}

async function recordAdvance(
  deps: EngineDeps,
  tx: StoreWriter,
  args: {
    node: NodeRecord;
    input: ContinueInput;
    ack: string;
    run: RunRecord;
    compiled: Compiled;
    warnings: Warning[];
    workspace?: WorkspaceObservation;
    onProgress: (progress: StepProgress) => void;
  },
): Promise<StepResponse> {
  const { node, input, compiled } = args;
  const { sessionId, runId } = node;
  const context = input.context ? { ...node.context, ...input.context } : node.context;
  const preferences = applyPreferences(node.preferences, input.preferences);
  const warnings = [...args.warnings];
  if (preferences !== node.preferences) {
    warnings.push(...recommendationWarnings(preferences, compiled.recommendedPreferences));
  }
  const step = currentStep(compiled, node.state)!;
  const artifacts = input.output?.artifacts ?? [];
  const review = reviewAck(compiled, step, {
    artifacts,
    notesMarkdown: input.output?.notesMarkdown,
    context: effectiveContext(compiled, node.state, context),
  });
  warnings.push(...review.warnings);
  const problems = normalizeBlockers(review.problems);
  const prior = readState(node.state);
  const caps = { ...(prior.caps ?? {}) };
  for (const o of review.observations) caps[o.capability] = o.status;
  for (const o of review.observations) {
    if (compiled.capabilities[o.capability] === "preferred" && o.status === "unavailable") {
      warnings.push({
        code: "PREFERRED_CAPABILITY_UNAVAILABLE",
        message:
          `\`${o.capability}\` is unavailable on this branch: the workflow goes on without it, and later steps say how to fall back.`,
      });
    }
  }
  const outputEvents = (nodeId: string): DomainEvent[] => {
    const events: DomainEvent[] = [];
    if (
      input.output && (input.output.notesMarkdown !== undefined || input.output.artifacts?.length)
    ) {
      events.push({
        kind: "output_recorded",
        sessionId,
        runId,
        nodeId,
        stepId: node.pendingStepId,
        notesMarkdown: input.output.notesMarkdown ?? null,
        artifacts: input.output.artifacts ?? [],
      });
    }
    for (const o of review.observations) {
      events.push({
        kind: "capability_observed",
        sessionId,
        runId,
        nodeId,
        stepId: node.pendingStepId,
        capability: o.capability,
        status: o.status,
        remediation: o.remediation ?? null,
      });
    }
    return events;
  };

  if (problems.length > 0 && preferences.autonomy !== "full_auto_never_stop") {
    // Blocked: the attempt is a node of its own; the run stays where it was.
    const attempt: NodeRecord = {
      ...node,
      nodeId: await deriveNodeId(["blocked", runId, node.nodeId, args.ack]),
      parentId: node.nodeId,
      nodeKind: "blocked_attempt",
      depth: node.depth + 1,
      state: { ...prior, ...(review.observations.length ? { caps } : {}) },
      context,
      preferences,
      edgeKind: null,
      notesMarkdown: input.output?.notesMarkdown ?? null,
      notesStepId: node.pendingStepId,
    };
    const response = responseFor(deps, { ...node, context, preferences }, compiled, {
      workflowHash: args.run.workflowHash,
      warnings,
    });
    response.kind = "blocked";
    response.blockers = problems;
    response.example = examplePayload(compiled, problems);
    response.blockedAttempt = { nodeId: attempt.nodeId };
    const { edgeKind: _e, notesMarkdown: _n, notesStepId: _s, ...facts } = attempt;
    await tx.append([
      { kind: "node_created", ...facts },
      ...outputEvents(attempt.nodeId),
      {
        kind: "advance_recorded",
        sessionId,
        runId,
        nodeId: node.nodeId,
        attemptId: args.ack,
        outcome: "blocked",
        resultNodeId: attempt.nodeId,
        response: JSON.stringify(response),
      },
    ]);
    return response;
  }

  const { end: parent, branches } = await checkpointChain(tx, node);
  const advanced = advanceState(
    compiled,
    { ...prior, ...(Object.keys(caps).length ? { caps } : {}) },
    { context, artifacts },
  );
  warnings.push(...advanced.notices);
  const state = advanced.state;
  const child: NodeRecord = {
    sessionId,
    runId,
    nodeId: await deriveNodeId(["ack", runId, node.nodeId, args.ack]),
    parentId: parent.nodeId,
    nodeKind: "step",
    depth: parent.depth + 1,
    state,
    context,
    preferences,
    pendingStepId: currentStep(compiled, state)?.id ?? null,
    edgeKind: "acked_step",
    notesMarkdown: input.output?.notesMarkdown ?? null,
    notesStepId: node.pendingStepId,
  };
  const response = responseFor(deps, child, compiled, {
    workflowHash: args.run.workflowHash,
    warnings,
  });
  if (branches.length > 0) {
    // Read before this advance's own child exists, so the preferred tip is the newest node of
    // the branches that were already there.
    const tip = await tx.getPreferredTip(node.runId, node.nodeId);
    response.forked = {
      existingBranches: branchSummaries(branches),
      preferredTipNodeId: tip.nodeId,
      downstreamRecap: await buildRecap(tx, tip, { stopAt: node }),
    };
  }
  const gaps: Gap[] = [
    ...problems.map(gapOf),
    ...review.agentGaps.map((g): Gap => ({
      severity: g.severity as Gap["severity"],
      code: "AGENT_DISCLOSED",
      ...(g.contextKey ? { pointer: { kind: "context_key" as const, key: g.contextKey } } : {}),
      message: g.summary,
    })),
  ];
  if (gaps.length > 0) response.gaps = gaps;
  const { edgeKind: _e, notesMarkdown: _n, notesStepId: _s, ...facts } = child;
  const events: DomainEvent[] = [
    { kind: "node_created", ...facts },
    {
      kind: "edge_created",
      sessionId,
      runId,
      fromId: parent.nodeId,
      toId: child.nodeId,
      edgeKind: "acked_step",
    },
    ...outputEvents(child.nodeId),
  ];
  for (const g of gaps) {
    events.push({
      kind: "gap_recorded",
      sessionId,
      runId,
      nodeId: child.nodeId,
      stepId: node.pendingStepId,
      severity: g.severity,
      code: g.code,
      pointer: (g.pointer as Record<string, string> | undefined) ?? null,
      message: g.message,
    });
  }
  for (const d of review.divergences) {
    events.push({
      kind: "divergence_recorded",
      sessionId,
      runId,
      nodeId: child.nodeId,
      stepId: node.pendingStepId,
      reason: d.reason,
      summary: d.summary,
      relatedStepId: d.relatedStepId ?? null,
    });
  }
  if (preferences !== node.preferences) {
    events.push({
      kind: "preference_changed",
      sessionId,
      runId,
      nodeId: child.nodeId,
      preferences,
    });
  }
  events.push(...observationEvent(args.run, { nodeId: child.nodeId, workspace: args.workspace }));
  events.push({
    kind: "advance_recorded",
    sessionId,
    runId,
    nodeId: node.nodeId,
    attemptId: args.ack,
    outcome: "advanced",
    resultNodeId: child.nodeId,
    response: JSON.stringify(response),
  });
  await tx.append(events);
  // the root is a step node, so the parent's step count is the steps acknowledged with this one
  const done = node.stepCount ?? node.depth;
  args.onProgress({
    done,
    total: done + remainingSteps(compiled, state),
    stepTitle: allSteps(compiled).find((s) => s.id === node.pendingStepId)?.title ?? null,
  });
  return response;
}
