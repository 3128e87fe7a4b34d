/**
 * One connection's view of runs as tasks: each read goes to the store (so runs started by other
 * processes are tasks too, and nothing is held per task), and the status this connection last
 * saw of each run is kept, so a client whose revision has status notifications is told when a
 * call through this connection changes it. A task's view is a function of the stored run, so
 * the last one built for a run is reused while the run's version (tip, status, last change) is
 * the same: a replay or a rehydrate then costs one small read.
 * @module
 */
import type { Server } from "npm:@modelcontextprotocol/server@2.4.0";
import type { BranchStep, EngineDeps, NodeRecord, RunListing } from "../../engine/model/ports.ts";
import type { AnsweredNode } from "../../engine/run/record_attempt.ts";
import {
  PLAN_BRANCH_WINDOW,
  type TaskView,
  taskView,
  waitsOnChildren,
} from "../../engine/use_cases/task_views.ts";
import type { TaskStatus } from "../../engine/model/vocabulary.ts";
import type { Revision } from "../revisions/mod.ts";

/** Runs whose last status a connection keeps, at most (the oldest is forgotten first). */
const MAX_TRACKED = 1_000;
/** Runs whose last task view a connection keeps, at most. */
const MAX_VIEWS = 32;

/** A connection's tasks. */
export interface TaskSurface {
  /**
   * A run's task with its progress, or `null` when there is no such run. Its status is noted;
   * when it differs from the one last noted, the client is told as its `revision` tells it.
   * `answered`: the node the call just created, so its run's tip need not be read back.
   */
  observe(runId: string, revision: Revision, answered?: AnsweredNode): Promise<TaskView | null>;
  /** Notes a run's status before a call that may change it (once per run). */
  seed(runId: string): Promise<void>;
}

/** What a run's task view depends on that can change. */
const versionOf = (r: RunListing) => `${r.tipNodeId}|${r.status}|${r.updatedAt}|${r.corrupt}`;

/** Sets `key` as the newest entry of `map`, keeping at most `max`; the value it replaced. */
function remember<V>(
  map: Map<string, V>,
  at: { key: string; value: V; max: number },
): V | undefined {
  const before = map.get(at.key);
  map.delete(at.key);
  map.set(at.key, at.value);
  if (map.size > at.max) map.delete(map.keys().next().value!);
  return before;
}

/**
 * Task views kept across the server instances of one process: a stateless HTTP replica builds a
 * server per request, so a per-connection cache would never be hit and every answer would read
 * its run's branch back (a recursive query) for its task's progress. Each view is checked
 * against the run's listing before use, so sharing it is as fresh as keeping it per connection.
 */
export interface TaskViewCache {
  /** Runs' views by run id, oldest forgotten first. */
  readonly views: Map<string, unknown>;
  /** How many runs it keeps. */
  readonly max: number;
}

/** A cache for {@linkcode createTaskSurface}'s `shared` option, keeping `max` runs' views. */
export function createTaskViewCache(max = 1_000): TaskViewCache {
  return { views: new Map(), max };
}

/** A task view kept with the branch it was built from. */
interface Known {
  version: string;
  view: TaskView;
  tipNodeId: string | null;
  branch: BranchStep[];
}

/** The branch step of a node the call just created (`completedStepId`: its parent's pending). */
function stepOf(answered: AnsweredNode, completedStepId: string | null): BranchStep {
  const { node } = answered;
  return {
    nodeId: node.nodeId,
    nodeKind: node.nodeKind,
    state: node.state,
    pendingStepId: node.pendingStepId,
    completedStepId: node.nodeKind === "step" ? completedStepId : null,
    notesMarkdown: node.notesMarkdown,
    artifacts: [...answered.artifacts],
  };
}

/**
 * Reads a tip's branch, extending the one kept for the run when the tip is its child (the
 * usual advance): one row instead of the whole window, or none when the call that made the tip
 * told it (`answered`). Tells `keep` what it read.
 */
function branchReader(
  deps: Pick<EngineDeps, "store">,
  at: { known?: Known; answered?: AnsweredNode; keep: (branch: BranchStep[]) => void },
): (tip: NodeRecord) => Promise<BranchStep[]> {
  return async (tip) => {
    const { known, answered } = at;
    let branch: BranchStep[];
    if (known && known.tipNodeId === tip.nodeId) branch = known.branch;
    else if (answered && tip.parentId === null) branch = [stepOf(answered, null)];
    else if (known?.branch.length && known.tipNodeId === tip.parentId) {
      const parent = known.branch.at(-1)!;
      const last = answered
        ? stepOf(answered, parent.pendingStepId)
        : await extension(deps, { tip, parent });
      branch = [...known.branch, last].slice(-PLAN_BRANCH_WINDOW);
    } else branch = await deps.store.getBranchSteps(tip.runId, tip.nodeId, PLAN_BRANCH_WINDOW);
    at.keep(branch);
    return branch;
  };
}

/** The tip's own branch step, read, its completed step taken from the kept parent's. */
async function extension(
  deps: Pick<EngineDeps, "store">,
  at: { tip: NodeRecord; parent: BranchStep },
): Promise<BranchStep> {
  const [last] = await deps.store.getBranchSteps(at.tip.runId, at.tip.nodeId, 1);
  const completedStepId = last!.nodeKind === "step" ? at.parent.pendingStepId : null;
  return { ...last!, completedStepId };
}

/**
 * The tasks of one connection to `server`. With `shared` (a stateless server, one per request),
 * views come from the process's cache and no status is noted before a call: the connection
 * ends with its answer, so there is no later status change to tell it.
 */
export function createTaskSurface(
  server: Server,
  deps: Pick<EngineDeps, "store">,
  shared?: TaskViewCache,
): TaskSurface {
  const seen = new Map<string, TaskStatus>();
  const views = (shared?.views ?? new Map()) as Map<string, Known>;
  const maxViews = shared?.max ?? MAX_VIEWS;
  const note = (runId: string, status: TaskStatus) =>
    remember(seen, { key: runId, value: status, max: MAX_TRACKED });
  const viewOf = async (runId: string, told?: AnsweredNode): Promise<TaskView | null> => {
    // read with the call's commit when the store did (no round trip of its own)
    const after = told?.node.runId === runId ? told.listing : undefined;
    const listing = (after && await after.catch(() => null)) ??
      await deps.store.getRunListing(runId);
    if (!listing) return null;
    const version = versionOf(listing);
    const known = views.get(runId);
    if (known?.version === version && !waitsOnChildren(known.view)) return known.view;
    // What the call told is used only when it is the tip the listing names (not raced past).
    const answered = told?.node.runId === runId && told.node.nodeId === listing.tipNodeId
      ? told
      : undefined;
    let branch: BranchStep[] = [];
    const readBranch = branchReader(deps, { known, answered, keep: (read) => branch = read });
    const facts = answered && { compiled: answered.compiled, tip: answered.node };
    const view = await taskView(deps, listing, { progress: true, readBranch, facts });
    const kept = { version, view, tipNodeId: listing.tipNodeId, branch };
    remember(views, { key: runId, value: kept, max: maxViews });
    return view;
  };
  return {
    async observe(runId, revision, answered) {
      const view = await viewOf(runId, answered);
      if (!view) return null;
      const before = note(runId, view.status);
      if (before !== undefined && before !== view.status) {
        await revision.taskStatusChanged(server, view);
      }
      return view;
    },
    async seed(runId) {
      if (shared || seen.has(runId)) return;
      const listing = await deps.store.getRunListing(runId);
      if (listing) note(runId, (await taskView(deps, listing)).status);
    },
  };
}
