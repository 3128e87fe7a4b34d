/**
 * Nodes a call creates and the events that record them: one place builds a new node's record
 * and its `node_created`/`edge_created` events, its output, and the workspace observation.
 * @module
 */
import { deriveNodeId } from "../model/ids.ts";
import type { Artifact, DomainEvent } from "../model/events.ts";
import type { NodeRecord, RunRecord } from "../model/ports.ts";
import { observationChanged, type WorkspaceObservation } from "../model/workspace.ts";
import type { Preferences } from "../model/preferences.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { currentStep, initialState } from "../workflow/interpreter.ts";

/** Durable output of a step. */
export interface StepOutput {
  /** A short recap of what happened and what is next. */
  notesMarkdown?: string;
  /** Small structured results. */
  artifacts?: Artifact[];
}

/** What a new node does not inherit from its parent. */
export type NewNode = Pick<
  NodeRecord,
  | "nodeKind"
  | "state"
  | "context"
  | "preferences"
  | "pendingStepId"
  | "edgeKind"
  | "notesMarkdown"
  | "notesStepId"
>;

/**
 * A new node under `parent`: same session and run, one deeper, its id derived from `origin`
 * (so racing writers agree on it), and its step count carried on when the parent has one.
 */
export async function childNode(
  parent: NodeRecord,
  child: NewNode & { origin: readonly string[] },
): Promise<NodeRecord> {
  const { origin, ...fields } = child;
  const stepCount = parent.stepCount === undefined
    ? {}
    : { stepCount: parent.stepCount + (child.nodeKind === "step" ? 1 : 0) };
  return {
    sessionId: parent.sessionId,
    runId: parent.runId,
    nodeId: await deriveNodeId(origin),
    parentId: parent.nodeId,
    depth: parent.depth + 1,
    ...fields,
    ...stepCount,
  };
}

/** `node_created` for a node, then `edge_created` from its parent when it hangs on an edge. */
export function nodeCreated(node: NodeRecord): DomainEvent[] {
  const { sessionId, runId, nodeId, parentId, edgeKind } = node;
  const created: DomainEvent = {
    kind: "node_created",
    sessionId,
    runId,
    nodeId,
    parentId,
    nodeKind: node.nodeKind,
    depth: node.depth,
    state: node.state,
    context: node.context,
    preferences: node.preferences,
    pendingStepId: node.pendingStepId,
  };
  if (edgeKind === null || parentId === null) return [created];
  return [created, {
    kind: "edge_created",
    sessionId,
    runId,
    fromId: parentId,
    toId: nodeId,
    edgeKind,
  }];
}

/** `output_recorded` at a node, when the output holds notes or artifacts. */
export function outputRecorded(
  at: Pick<NodeRecord, "sessionId" | "runId" | "nodeId"> & { stepId: string | null },
  output: StepOutput | undefined,
): DomainEvent[] {
  if (!output || (output.notesMarkdown === undefined && !output.artifacts?.length)) return [];
  return [{
    kind: "output_recorded",
    ...at,
    notesMarkdown: output.notesMarkdown ?? null,
    artifacts: output.artifacts ?? [],
  }];
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

/**
 * The root node of a new run (`waymark`'s start and DeepWork's alike): the workflow's first
 * position for `context`, its id derived from the run's.
 */
export async function rootNode(
  compiled: CompiledWorkflow,
  at: {
    sessionId: string;
    runId: string;
    context: Record<string, unknown>;
    preferences: Preferences;
  },
): Promise<NodeRecord> {
  const state = initialState(compiled, at.context);
  return {
    sessionId: at.sessionId,
    runId: at.runId,
    nodeId: await deriveNodeId(["root", at.runId]),
    parentId: null,
    nodeKind: "step",
    depth: 0,
    state,
    context: at.context,
    preferences: at.preferences,
    pendingStepId: currentStep(compiled, state)?.id ?? null,
    edgeKind: null,
    notesMarkdown: null,
    notesStepId: null,
  };
}

/**
 * A call's record with `event` put just before its attempt's event, and the attempt's recorded
 * response rewritten from `recorded.response` (changed since the attempt was decided), so a
 * replay returns the answer as sent.
 */
export function beforeAttempt<R extends { response: unknown; events: DomainEvent[] }>(
  recorded: R,
  event: DomainEvent,
): R {
  const text = JSON.stringify(recorded.response);
  const events = recorded.events.flatMap((e): DomainEvent[] =>
    e.kind === "advance_recorded" || e.kind === "checkpoint_recorded"
      ? [event, { ...e, response: text }]
      : [e]
  );
  return { ...recorded, events };
}
