/**
 * The viewer's data: what each page and JSON endpoint shows, assembled from the read-only
 * queries, the lane layout and the engine's interpreter (the pending step's prompt is rendered
 * from the pinned compiled workflow, exactly as the agent received it). The HTML pages and the
 * JSON API are both built from these values.
 * @module
 */
import type { CompiledStep, CompiledWorkflow } from "../engine/workflow/compiled.ts";
import { allSteps, type RunState } from "../engine/workflow/interpreter.ts";
import { pendingStep } from "../engine/workflow/pending.ts";
import { parseRunLabel, parseSessionLabel, runLabel, sessionLabel } from "../engine/model/ids.ts";
import type { DelegationDigest } from "../engine/model/events.ts";
import { synthesisSection } from "../engine/answers/delegation_views.ts";
import { type Layout, layoutRun } from "./layout.ts";
import {
  type BranchEntry,
  type ChildGroup,
  getBranch,
  getChildRuns,
  getCompiled,
  getNodeDetail,
  getReviewPasses,
  getRunNodes,
  getSession,
  getSessionNotes,
  getStepFootprints,
  getTimeline,
  type GraphNodeRow,
  type NodeDetailRow,
  type ReviewPassRow,
  type RunSummary,
  type SessionDetail,
  type SessionNote,
  type StepFootprint,
  type TimelineNode,
  type ViewerDb,
} from "./queries.ts";

/** A pinned workflow with a step index. */
export interface Pinned {
  /** The compiled workflow. */
  compiled: CompiledWorkflow;
  /** Every step, depth first (loop bodies once), with its innermost loop. */
  list: (CompiledStep & { loopId?: string })[];
  /** Steps by id. */
  steps: Map<string, CompiledStep & { loopId?: string }>;
}

const PINNED_CACHE_SIZE = 16;
const pinnedCache = new Map<string, Pinned>();

/**
 * A pinned workflow by hash. Snapshots are content-addressed and immutable, so a small cache
 * shared across requests is always right (a 10,000-step snapshot costs tens of ms to parse).
 */
export async function loadPinned(db: ViewerDb, hash: string): Promise<Pinned | null> {
  const cached = pinnedCache.get(hash);
  if (cached) {
    pinnedCache.delete(hash);
    pinnedCache.set(hash, cached);
    return cached;
  }
  const compiled = await getCompiled(db, hash);
  if (!compiled) return null;
  const list = allSteps(compiled);
  const pinned = { compiled, list, steps: new Map(list.map((s) => [s.id, s])) };
  pinnedCache.set(hash, pinned);
  if (pinnedCache.size > PINNED_CACHE_SIZE) {
    pinnedCache.delete(pinnedCache.keys().next().value!);
  }
  return pinned;
}

/** A session id from a URL: `ses_<hex>` or bare hex (anything else names no session). */
export function parseSessionId(text: string): string | null {
  return parseSessionLabel(text);
}

/** A run id from a URL: `run_<hex>` or bare hex (anything else names no run). */
export function parseRunId(text: string): string | null {
  return parseRunLabel(text);
}

/** Node ids are hex. */
export function parseNodeId(text: string): string | null {
  return /^[0-9a-f]{1,64}$/.test(text) ? text : null;
}

/** Paths of the viewer's pages. */
export const paths = {
  sessions: (): string => "/",
  session: (sessionId: string): string => `/sessions/${sessionLabel(sessionId)}`,
  run: (sessionId: string, runId: string): string =>
    `/sessions/${sessionLabel(sessionId)}/runs/${runLabel(runId)}`,
  node: (sessionId: string, runId: string, nodeId: string): string =>
    `/sessions/${sessionLabel(sessionId)}/runs/${runLabel(runId)}/nodes/${nodeId}`,
  exportMd: (sessionId: string): string => `/sessions/${sessionLabel(sessionId)}/export.md`,
  bundle: (sessionId: string): string => `/api/sessions/${sessionLabel(sessionId)}/bundle`,
  sessionEvents: (sessionId: string): string => `/api/sessions/${sessionLabel(sessionId)}/events`,
  workflow: (hash: string): string => `/workflows/${hash}`,
};

/** How a node reads in the graph and lists. */
export interface NodeLabel {
  /** Headline: the completed step's title, "Checkpoint", "Started", "Blocked: …". */
  title: string;
  /** The step id the headline names, when there is one. */
  stepId: string | null;
}

function stepTitle(pinned: Pinned | null, stepId: string | null): string {
  if (stepId === null) return "(no step)";
  return pinned?.steps.get(stepId)?.title ?? stepId;
}

/** The label of a node. */
export function labelFor(
  node: Pick<GraphNodeRow, "kind" | "parentId" | "parentPendingStepId" | "pendingStepId">,
  pinned: Pinned | null,
): NodeLabel {
  if (node.kind === "checkpoint") return { title: "Checkpoint", stepId: null };
  if (node.kind === "blocked_attempt") {
    return {
      title: `Blocked: ${stepTitle(pinned, node.parentPendingStepId)}`,
      stepId: node.parentPendingStepId,
    };
  }
  if (node.parentId === null) return { title: "Started", stepId: null };
  return { title: stepTitle(pinned, node.parentPendingStepId), stepId: node.parentPendingStepId };
}

/** One node of a run graph, placed and labelled. */
export interface GraphNode extends GraphNodeRow {
  /** Row (creation order). */
  row: number;
  /** Lane. */
  lane: number;
  /** Branch index (0 is preferred). */
  branch: number;
  /** On the preferred branch. */
  preferred: boolean;
  /** Parent cut off by the node cap. */
  cut: boolean;
  /** The label. */
  label: NodeLabel;
}

/** A run's graph, laid out. */
export interface RunGraph {
  /** The run. */
  run: RunSummary;
  /** The pinned workflow's id, name, version and step count. */
  workflow: { id: string; name: string; version: string; stepCount: number } | null;
  /** The preferred tip (the run's newest node: where the agent carries on by default). */
  preferredTipId: string | null;
  /** Nodes in row order (depth first: side branches under their fork point). */
  nodes: GraphNode[];
  /** Edges. */
  edges: Layout["edges"];
  /** Branches, preferred first. */
  branches: Layout["branches"];
  /** Lanes used. */
  laneCount: number;
  /** Whether older nodes were left out. */
  truncated: boolean;
}

/** Builds a run's graph. */
export async function loadRunGraph(db: ViewerDb, run: RunSummary): Promise<RunGraph> {
  const [{ nodes, truncated }, pinned] = await Promise.all([
    getRunNodes(db, run.runId),
    loadPinned(db, run.workflowHash),
  ]);
  const preferredTipId = run.lastNodeId;
  const layout = layoutRun(
    nodes.map((n) => ({ id: n.nodeId, parentId: n.parentId })),
    preferredTipId,
  );
  return {
    run,
    workflow: pinned
      ? {
        id: pinned.compiled.id,
        name: pinned.compiled.name,
        version: pinned.compiled.version,
        stepCount: pinned.list.length,
      }
      : null,
    preferredTipId,
    nodes: nodes.map((n, i) => {
      const placed = layout.nodes[i]!;
      return {
        ...n,
        row: placed.row,
        lane: placed.lane,
        branch: placed.branch,
        preferred: placed.preferred,
        cut: placed.cut,
        label: labelFor(n, pinned),
      };
    }).sort((a, b) => a.row - b.row),
    edges: layout.edges,
    branches: layout.branches,
    laneCount: layout.laneCount,
    truncated,
  };
}

/** The step a node is waiting on, rendered for its context by the engine's interpreter. */
export interface PendingView {
  /** Step id. */
  stepId: string;
  /** Title. */
  title: string;
  /** Prompt with placeholders filled (Markdown). */
  prompt: string;
  /** Role. */
  agentRole?: string;
  /** Present when the agent must confirm with the user first. */
  requireConfirmation?: true;
}

/** A node, fully. */
export interface NodeView extends NodeDetailRow {
  /** The label. */
  label: NodeLabel;
  /** The pending step (`null` once complete, or when the snapshot is missing). */
  pending: PendingView | null;
  /** Whether this is the run's preferred tip. */
  isPreferredTip: boolean;
  /** Titles of the steps its children are waiting on, by child. */
  childLabels: Record<string, NodeLabel>;
}

/** One node with its pending step, or `null`. */
export async function loadNode(
  db: ViewerDb,
  run: Pick<RunSummary, "runId" | "workflowHash" | "lastNodeId">,
  nodeId: string,
): Promise<NodeView | null> {
  const [detail, pinned] = await Promise.all([
    getNodeDetail(db, { runId: run.runId, nodeId }),
    loadPinned(db, run.workflowHash),
  ]);
  if (!detail) return null;
  let pending: PendingView | null = null;
  if (pinned && detail.state) {
    pending = pendingStep(pinned.compiled, detail.state as RunState, detail.context);
  }
  const collected = detail.events.find((e) => e.kind === "delegations_collected");
  if (pending && collected && pinned?.steps.get(pending.stepId)?.synthesisOf !== undefined) {
    // the synthesis step's prompt as the agent received it: with the children's results
    pending.prompt += synthesisSection(collected.children as DelegationDigest[]);
  }
  const childLabels: Record<string, NodeLabel> = {};
  for (const child of detail.children) {
    childLabels[child.nodeId] = labelFor({
      kind: child.kind,
      parentId: detail.nodeId,
      parentPendingStepId: detail.pendingStepId,
      pendingStepId: child.pendingStepId,
    }, pinned);
  }
  return {
    ...detail,
    label: labelFor(detail, pinned),
    pending,
    isPreferredTip: run.lastNodeId === nodeId,
    childLabels,
  };
}

/** The branch from the root to a node, each entry labelled. */
export interface BranchView {
  /** Entries, root first. */
  entries: (BranchEntry & { label: NodeLabel })[];
  /** Older entries not shown. */
  omitted: number;
}

/** The branch leading to a node. */
export async function loadBranch(
  db: ViewerDb,
  run: Pick<RunSummary, "runId" | "workflowHash">,
  nodeId: string,
): Promise<BranchView> {
  const [branch, pinned] = await Promise.all([
    getBranch(db, { runId: run.runId, nodeId }),
    loadPinned(db, run.workflowHash),
  ]);
  return {
    omitted: branch.omitted,
    entries: branch.entries.map((e) => ({
      ...e,
      label: labelFor({
        kind: e.kind,
        parentId: e.depth === 0 ? null : "(parent)",
        parentPendingStepId: e.completedStepId,
        pendingStepId: e.pendingStepId,
      }, pinned),
    })),
  };
}

/** A session's timeline: a lane per run. */
export interface TimelineView {
  /** Lanes, in the sidebar's order. */
  lanes: { runId: string; workflowId: string; title: string; index: number }[];
  /** Dots. */
  nodes: TimelineNode[];
  /** Earliest and latest time. */
  from: string;
  /** Latest time. */
  to: string;
  /** Whether older nodes were left out. */
  truncated: boolean;
}

/**
 * Builds the timeline of a session. With one run whose graph is already loaded whole, the
 * graph's nodes are the timeline's, and the second read is skipped.
 */
export async function loadTimeline(
  db: ViewerDb,
  detail: SessionDetail,
  graph: RunGraph | null = null,
): Promise<TimelineView> {
  const { nodes, truncated } = graph && !graph.truncated && detail.runs.length === 1 &&
      !detail.runsTruncated
    ? {
      truncated: false,
      nodes: graph.nodes.map((n) => ({
        runId: graph.run.runId,
        nodeId: n.nodeId,
        kind: n.kind,
        createdAt: n.createdAt,
      })),
    }
    : await getTimeline(db, detail.session.sessionId);
  const times = nodes.map((n) => n.createdAt);
  return {
    lanes: detail.runs.map((r, index) => ({
      runId: r.runId,
      workflowId: r.workflowId,
      title: r.title,
      index,
    })),
    nodes,
    from: times[0] ?? detail.session.createdAt,
    to: times[times.length - 1] ?? detail.session.updatedAt,
    truncated,
  };
}

/** Everything a session page shows. */
export interface SessionView {
  /** The session and its runs. */
  detail: SessionDetail;
  /** The run shown (one at a time). */
  graph: RunGraph | null;
  /** The focused node (a deep link, or the preferred tip). */
  node: NodeView | null;
  /** The branch leading to the focused node. */
  branch: BranchView | null;
  /** The pinned workflow of the run shown. */
  pinned: Pinned | null;
  /** The timeline. */
  timeline: TimelineView;
  /** Checkpoint notes of the session, newest first. */
  notes: SessionNote[];
  /** Review passes recorded in the session (a workspace's reviews session), newest first. */
  passes: ReviewPassRow[];
  /** The child runs the shown run's parallel steps opened, by node and step. */
  children: { groups: ChildGroup[]; truncated: boolean };
  /** Each step's footprint on the branch leading to the focused node, root first. */
  footprints: StepFootprint[];
  /** The version the live updater compares. */
  version: string;
}

/** Why a session page cannot be built. */
export type SessionViewMiss = "session" | "run" | "node";

/** Builds a session page: the chosen run (default: the latest) and node (default: its tip). */
export async function loadSessionView(
  db: ViewerDb,
  sessionId: string,
  runId: string | null,
  nodeId: string | null,
): Promise<SessionView | SessionViewMiss> {
  const detail = await getSession(db, sessionId);
  if (!detail) return "session";
  const run = runId === null
    ? detail.runs[detail.runs.length - 1] ?? null
    : detail.runs.find((r) => r.runId === runId) ?? null;
  if (runId !== null && !run) return "run";
  const focus = nodeId ?? run?.lastNodeId ?? null;
  const [graph, node, branch, pinned, notes, children, passes, footprints] = await Promise.all([
    run ? loadRunGraph(db, run) : null,
    run && focus ? loadNode(db, run, focus) : null,
    run && focus ? loadBranch(db, run, focus) : null,
    run ? loadPinned(db, run.workflowHash) : null,
    getSessionNotes(db, sessionId),
    run ? getChildRuns(db, run.runId) : { groups: [], truncated: false },
    getReviewPasses(db, sessionId),
    run && focus ? getStepFootprints(db, { runId: run.runId, nodeId: focus }) : [],
  ]);
  const timeline = await loadTimeline(db, detail, graph);
  if (nodeId !== null && !node) return "node";
  return {
    detail,
    graph,
    node,
    branch,
    pinned,
    timeline,
    notes,
    children,
    passes,
    footprints,
    version: `${detail.session.eventCount}@${detail.session.updatedAt}`,
  };
}
