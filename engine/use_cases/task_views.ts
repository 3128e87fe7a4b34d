/**
 * Runs read as tasks: one run's task (status, a message a host can show, the progress plan of
 * its preferred branch and what each completed step left), a page of them, and the answer a
 * completed task carries. Everything is read from the store at the time of asking, so a task
 * started in one process is seen from another and after a restart; nothing here keeps state.
 * @module
 */
import { runLabel, sessionLabel } from "../model/ids.ts";
import type {
  BranchStep,
  EngineDeps,
  NodeRecord,
  RunListing,
  StoreReader,
} from "../model/ports.ts";
import { StorageCorruptionError } from "../model/result.ts";
import type { StepResponse } from "../answers/responses.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { currentStep, readState } from "../workflow/interpreter.ts";
import {
  type Completion,
  type PlanExcerpt,
  planExcerpt,
  type PlanInput,
  planProgress,
  type StepResult,
  stepResults,
  type WorkflowProgress,
} from "../workflow/plan.ts";
import type { TaskStatus } from "../model/vocabulary.ts";
import { delegationHome, hasEnded } from "../run/delegations.ts";
import { responseFor } from "../answers/node_response.ts";
import { taskIdOf, taskStatus, type UserQuestion, userQuestions } from "../run/task_status.ts";

/** The newest nodes of a branch a plan reads (older acknowledgements count as done). */
export const PLAN_BRANCH_WINDOW = 64;

/** A run as a task. */
export interface TaskView {
  /** The task id: the run's `run_…` label. */
  taskId: string;
  /** The run (`run_…`). */
  runId: string;
  /** Its session (`ses_…`). */
  sessionId: string;
  /** Its workflow. */
  workflowId: string;
  /** Its status. */
  status: TaskStatus;
  /** One line a host can show. */
  statusMessage: string;
  /** Started (ISO-8601). */
  createdAt: string;
  /** Last change (ISO-8601). */
  lastUpdatedAt: string;
  /** The progress plan of the preferred branch (`null` when not asked for, or unreadable). */
  progress: WorkflowProgress | null;
  /** What each completed step the plan lists left, by step id. */
  results: Record<string, StepResult>;
  /** While `input_required`: what only the user can answer. */
  questions: UserQuestion[];
  /**
   * The plan cut to `size` steps around its current one (`planExcerpt`) and those steps'
   * results: what a call's answer carries, made without the whole plan.
   */
  excerpt(size: number): TaskExcerpt;
  /** The preferred tip. */
  tipNodeId: string | null;
  /**
   * While the run is working on a parallel step that opened child runs: how many of them have
   * ended (complete or aborted), of how many. A child's end does not change its parent's run,
   * so a view that waits on children is read afresh rather than kept.
   */
  children: { ended: number; total: number } | null;
}

/** A few steps of a task's plan and their results (`null`: no plan was asked for, or none). */
export interface TaskExcerpt {
  /** The steps around the current one. */
  progress: PlanExcerpt | null;
  /** What each completed step among them left, by step id. */
  results: Record<string, StepResult>;
}

interface Facts {
  compiled: CompiledWorkflow | null;
  tip: NodeRecord | null;
}

/** The pinned workflow and the tip; a corrupt row reads as missing (the task has failed). */
async function factsOf(store: StoreReader, listing: RunListing): Promise<Facts> {
  try {
    const [compiled, tip] = await Promise.all([
      store.getSnapshot(listing.workflowHash),
      listing.tipNodeId ? store.getNode(listing.runId, listing.tipNodeId) : null,
    ]);
    return { compiled, tip };
  } catch (error) {
    if (error instanceof StorageCorruptionError) return { compiled: null, tip: null };
    throw error;
  }
}

/**
 * Each branch step's completion, by the step before it: a kept branch grows by one step an
 * advance, so all but the newest are found here.
 */
const completionMemo = new WeakMap<
  BranchStep,
  { before: BranchStep | undefined; completion: Completion | null }
>();

/** The acknowledgements along a branch, each with the loop frames of the node it was made on. */
export function completionsOf(branch: readonly BranchStep[]): Completion[] {
  const out: Completion[] = [];
  branch.forEach((node, i) => {
    const before = branch[i - 1];
    let memo = completionMemo.get(node);
    if (!memo || memo.before !== before) {
      memo = { before, completion: completionAt(node, before) };
      completionMemo.set(node, memo);
    }
    if (memo.completion) out.push(memo.completion);
  });
  return out;
}

function completionAt(node: BranchStep, before: BranchStep | undefined): Completion | null {
  if (node.nodeKind !== "step" || node.completedStepId === null) return null;
  return {
    stepId: node.completedStepId,
    frames: before ? readState(before.state).frames : null,
    notesMarkdown: node.notesMarkdown,
    artifactKinds: node.artifacts.map((a) => a.kind),
  };
}

function statusMessage(
  status: TaskStatus,
  view: Pick<TaskView, "progress" | "questions"> & { pendingTitle: string | null },
): string {
  switch (status) {
    case "failed":
      return "The run's session failed an integrity check: it is read-only (waymark doctor looks further).";
    case "cancelled":
      return "Aborted: the run takes no more steps.";
    case "completed":
      return "Complete.";
    case "input_required":
      return `Waiting for the user: ${
        view.questions.map((q) => `${q.contextKey} (${q.message})`).join("; ")
      }`.slice(0, 500);
  }
  const steps = view.progress?.steps.filter((s) => s.status !== "skipped") ?? [];
  const at = steps.findIndex((s) => s.status === "current");
  if (at >= 0) return `Step ${at + 1} of ${steps.length}: ${steps[at]!.title}`;
  return view.pendingTitle ? `Working on: ${view.pendingTitle}` : "Working.";
}

/**
 * While the tip's pending step is a parallel step that opened children: how many have ended.
 * Reads nothing for any other step.
 */
async function childCount(
  store: Pick<StoreReader, "getStepAnchorId" | "getDelegations">,
  compiled: CompiledWorkflow,
  tip: NodeRecord,
): Promise<TaskView["children"]> {
  if (!currentStep(compiled, tip.state)?.delegations) return null;
  const home = await delegationHome(store, tip);
  const children = await store.getDelegations(home.runId, home.nodeId);
  if (children.length === 0) return null;
  return { ended: children.filter(hasEnded).length, total: children.length };
}

/** Whether a view waits on child runs still open (so it changes without its run changing). */
export function waitsOnChildren(view: Pick<TaskView, "children">): boolean {
  return view.children !== null && view.children.ended < view.children.total;
}

/** Options of {@linkcode taskView}. */
export interface TaskViewOptions {
  /** Build the plan and results too (one more read, of the tip's branch). */
  progress?: boolean;
  /**
   * Reads the tip's branch (at most {@linkcode PLAN_BRANCH_WINDOW} nodes, root first); by
   * default from the store. A caller that kept an earlier branch of the run may extend it.
   */
  readBranch?: (tip: NodeRecord) => Promise<BranchStep[]>;
  /** The pinned workflow and the preferred tip, when the caller has them (neither is read). */
  facts?: { compiled: CompiledWorkflow; tip: NodeRecord };
}

/** A value made on first use, then kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** The branch a plan follows: the tip's (at most {@linkcode PLAN_BRANCH_WINDOW} nodes). */
async function planInputOf(
  deps: Pick<EngineDeps, "store">,
  at: { listing: RunListing; compiled: CompiledWorkflow; tip: NodeRecord; blocked: boolean },
  readBranch: TaskViewOptions["readBranch"],
): Promise<PlanInput> {
  const { listing, compiled, tip } = at;
  const branch = readBranch
    ? await readBranch(tip)
    : await deps.store.getBranchSteps(tip.runId, tip.nodeId, PLAN_BRANCH_WINDOW);
  return {
    completions: completionsOf(branch),
    tip,
    blocked: at.blocked,
    goal: listing.goal ?? compiled.name,
    truncated: branch.length >= PLAN_BRANCH_WINDOW,
  };
}

/** The steps' results of a plan (or of an excerpt of it). */
function resultsOf(input: PlanInput, steps: readonly { name: string }[]) {
  return stepResults(input.completions, new Set(steps.map((s) => s.name)));
}

/**
 * A run's task; with `progress`, its plan and results too. The whole plan (and the status
 * message, which counts its steps) is made when first read: a call's answer reads only an
 * excerpt.
 */
export async function taskView(
  deps: Pick<EngineDeps, "store">,
  listing: RunListing,
  options: TaskViewOptions = {},
): Promise<TaskView> {
  const { compiled, tip } = options.facts ?? await factsOf(deps.store, listing);
  const status = taskStatus({ run: listing, compiled, tip });
  const questions = status === "input_required" && compiled && tip
    ? userQuestions(compiled, tip)
    : [];
  const input = options.progress && compiled && tip
    ? await planInputOf(deps, {
      listing,
      compiled,
      tip,
      blocked: status === "input_required",
    }, options.readBranch)
    : null;
  const children = status === "working" && compiled && tip
    ? await childCount(deps.store, compiled, tip)
    : null;
  const whole = once(() => {
    if (!input) return { progress: null, results: {} };
    const progress = planProgress(compiled!, input);
    return { progress, results: resultsOf(input, progress.steps) };
  });
  const message = once(() => {
    const said = statusMessage(status, {
      progress: whole().progress,
      questions,
      pendingTitle: compiled && tip ? currentStep(compiled, tip.state)?.title ?? null : null,
    });
    return children ? `${said} · ${children.ended} of ${children.total} child runs ended` : said;
  });
  const excerpts = new Map<number, TaskExcerpt>();
  return {
    taskId: taskIdOf(listing.runId),
    runId: runLabel(listing.runId),
    sessionId: sessionLabel(listing.sessionId),
    workflowId: listing.workflowId,
    status,
    get statusMessage() {
      return message();
    },
    createdAt: listing.createdAt,
    lastUpdatedAt: listing.updatedAt,
    get progress() {
      return whole().progress;
    },
    get results() {
      return whole().results;
    },
    questions,
    excerpt(size) {
      let made = excerpts.get(size);
      if (!made) {
        const progress = input && planExcerpt(compiled!, input, size);
        made = { progress, results: progress ? resultsOf(input!, progress.steps) : {} };
        excerpts.set(size, made);
      }
      return made;
    },
    tipNodeId: listing.tipNodeId,
    children,
  };
}

/** A page of tasks, most recently changed first, without progress; `more` when others follow. */
export async function listTasks(
  deps: Pick<EngineDeps, "store">,
  page: { offset: number; limit: number },
): Promise<{ tasks: TaskView[]; more: boolean }> {
  const runs = await deps.store.listRuns({ limit: page.limit + 1, offset: page.offset });
  const tasks = await Promise.all(runs.slice(0, page.limit).map((r) => taskView(deps, r)));
  return { tasks, more: runs.length > page.limit };
}

/**
 * What a finished run answers as a task's result: the step response at its preferred tip, with
 * fresh tokens (`isComplete` true once complete), or `null` when the run or its tip is gone.
 */
export async function tipResponse(
  deps: Pick<EngineDeps, "store" | "keyring" | "random">,
  runId: string,
): Promise<StepResponse | null> {
  const listing = await deps.store.getRunListing(runId);
  if (!listing) return null;
  const { compiled, tip } = await factsOf(deps.store, listing);
  if (!compiled || !tip) return null;
  return responseFor(deps, tip, compiled, { workflowHash: listing.workflowHash, warnings: [] });
}
