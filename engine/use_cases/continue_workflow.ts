/**
 * `continue_workflow`: with an ack token, acknowledge the pending step and advance (replays
 * return the recorded response; an old node forks); without one, rehydrate (write nothing).
 * @module
 */
import type { Artifact, DomainEvent } from "../events.ts";
import type { EngineDeps, NodeRecord, RunRecord, StoreReader, StoreWriter } from "../ports.ts";
import { observationChanged, type WorkspaceObservation } from "../workspace.ts";
import { applyPreferences, type PreferencesPatch } from "../preferences.ts";
import { fail, ok, type Result } from "../result.ts";
import type { Branch, StepResponse } from "../responses.ts";
import type { Warning } from "../workflow/catalog.ts";
import { isComplete, stateAfterAck } from "../workflow/interpreter.ts";
import { loadNode, verifyPair } from "./run_context.ts";
import {
  buildRecap,
  deriveNodeId,
  driftWarnings,
  guard,
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
  const verified = await verifyPair(deps, input.stateToken);
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
  const response = await responseFor(deps, node, compiled, {
    workflowHash: run.workflowHash,
    warnings,
  });
  const { branches } = await checkpointChain(deps.store, node);
  if (branches.length > 0) {
    const tip = await deps.store.getPreferredTip(node.runId, node.nodeId);
    const tipComplete = isComplete(compiled, tip.state);
    response.tip = {
      nodeId: tip.nodeId,
      ...(await tokensFor(deps, tip, tipComplete)),
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

function replay(recorded: { response: string }): Result<StepResponse> {
  return ok(JSON.parse(recorded.response) as StepResponse);
}

async function advance(
  deps: EngineDeps,
  input: ContinueInput,
  options: CallOptions,
): Promise<Result<StepResponse>> {
  const verified = await verifyPair(deps, input.stateToken, {
    token: input.ackToken as string,
    kind: "ack",
  });
  if (!verified.ok) return verified;
  const ack = verified.value.attempt!;
  const recorded = await deps.store.getAttempt(ack.runId, ack.nodeId, ack.attemptId!, "ack");
  if (recorded) return replay(recorded);
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
  const result = await deps.store.write(async (tx) => {
    const raced = await tx.getAttempt(ack.runId, ack.nodeId, ack.attemptId!, "ack");
    if (raced) return replay(raced);
    const response = await recordAdvance(deps, tx, {
      node,
      input,
      ack: ack.attemptId!,
      run,
      compiled,
      warnings,
      workspace: options.workspace,
    });
    appended = true;
    return ok(response);
  });
  if (appended) options.onAppend?.(sessionLabel(node.sessionId));
  return result;
}

async function recordAdvance(
  deps: EngineDeps,
  tx: StoreWriter,
  args: {
    node: NodeRecord;
    input: ContinueInput;
    ack: string;
    run: RunRecord;
    compiled: Parameters<typeof stateAfterAck>[0];
    warnings: Warning[];
    workspace?: WorkspaceObservation;
  },
): Promise<StepResponse> {
  const { node, input, compiled } = args;
  const { end: parent, branches } = await checkpointChain(tx, node);
  const context = input.context ? { ...node.context, ...input.context } : node.context;
  const preferences = applyPreferences(node.preferences, input.preferences);
  const state = stateAfterAck(compiled, node.state, context);
  const child: NodeRecord = {
    sessionId: node.sessionId,
    runId: node.runId,
    nodeId: await deriveNodeId(["ack", node.runId, node.nodeId, args.ack]),
    parentId: parent.nodeId,
    nodeKind: "step",
    depth: parent.depth + 1,
    state,
    context,
    preferences,
    pendingStepId: compiled.steps[state.pc]?.id ?? null,
    edgeKind: "acked_step",
    notesMarkdown: input.output?.notesMarkdown ?? null,
    notesStepId: node.pendingStepId,
  };
  const response = await responseFor(deps, child, compiled, {
    workflowHash: args.run.workflowHash,
    warnings: args.warnings,
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
  const { sessionId, runId } = node;
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
  ];
  if (
    input.output && (input.output.notesMarkdown !== undefined || input.output.artifacts?.length)
  ) {
    events.push({
      kind: "output_recorded",
      sessionId,
      runId,
      nodeId: child.nodeId,
      stepId: node.pendingStepId,
      notesMarkdown: input.output.notesMarkdown ?? null,
      artifacts: input.output.artifacts ?? [],
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
  return response;
}
