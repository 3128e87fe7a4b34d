/**
 * A run's progress as a host can show it without reading the conversation (the
 * `_workflow.progress` object a task's `_meta` carries): every step of the pinned workflow in document order (loop bodies once),
 * marked `done`, `skipped`, `current` (or `blocked`) or `pending` for one branch, and what each
 * completed step left (`_workflow.result.<stepId>`). Pure.
 *
 * It is a plan, so best effort: steps before the branch's position are `done` when the branch
 * acknowledged them (in the running iteration, inside a loop) and `skipped` otherwise; steps
 * after it are `pending` unless a condition that can be judged now (outside loops not yet
 * entered) is false for the context as it is now. Later context, loop exits and rewinds change it.
 * @module
 */
import type { CompiledLoop, CompiledNode, CompiledStep, CompiledWorkflow } from "./compiled.ts";
import type { Condition } from "./schema.ts";
import { evaluateCondition } from "./conditions.ts";
import {
  currentStep,
  effectiveContext,
  type LoopFrame,
  readState,
  type RunState,
} from "./interpreter.ts";
import type { PlanStepStatus } from "../model/vocabulary.ts";

/** The version of the progress object's shape. */
export const PROGRESS_SCHEMA_VERSION = 1;

/** What the progress object says about how far to trust it. */
export const PROGRESS_NOTE =
  "Best effort: follows the run's preferred branch and its context as they are now; later context, loop exits and rewinds can change the steps ahead.";

/** One step of the plan. */
export interface PlanStep {
  /** Step id. */
  name: string;
  /** Step title. */
  title: string;
  /** Where it stands. */
  status: PlanStepStatus;
  /** Its innermost loop: the running iteration, or the last one run (0: not entered yet). */
  loop?: { loopId: string; iteration: number; maxIterations: number };
}

/** The most steps a plan lists: a longer workflow shows a window around its current step. */
export const MAX_PLAN_STEPS = 100;

/** `_workflow.progress`. */
export interface WorkflowProgress {
  /** What the run is for. */
  goal: string;
  /** Every step in document order, or a window of them (see `omitted`). */
  steps: PlanStep[];
  /** The shape's version. */
  schema_version: typeof PROGRESS_SCHEMA_VERSION;
  /** How far to trust it. */
  note: string;
  /** Steps left out before and after the window, when the workflow has more than fit. */
  omitted?: { before: number; after: number };
}

/** What a completed step left: `_workflow.result.<stepId>`. */
export interface StepResult {
  /** The start of its notes, or `null` when it left none. */
  notesPreview: string | null;
  /** The kinds of its artifacts. */
  artifacts: string[];
}

/** One acknowledgement on the branch: the step it completed and the loop frames it ran in. */
export interface Completion {
  /** The step acknowledged. */
  stepId: string;
  /** The enclosing loops' frames at that step, or `null` when not known. */
  frames: LoopFrame[] | null;
  /** Its notes. */
  notesMarkdown: string | null;
  /** Its artifacts' kinds. */
  artifactKinds: string[];
}

/** The branch a plan follows. */
export interface PlanInput {
  /** The acknowledgements along the branch, oldest first. */
  completions: readonly Completion[];
  /** The branch's tip. */
  tip: { state: RunState | { v: 1; pc: number }; context: Record<string, unknown> };
  /** The tip's step waits on the user (the task is `input_required`). */
  blocked: boolean;
  /** What the run is for. */
  goal: string;
  /** The completions are the newest of a longer branch (older steps count as done). */
  truncated: boolean;
}

interface Slot {
  step: CompiledStep;
  address: number[];
  loops: CompiledLoop[];
  guards: { condition: Condition; address: number[] }[];
}

interface Tip {
  address: number[];
  frames: LoopFrame[];
  complete: boolean;
  blocked: boolean;
  context: Record<string, unknown>;
}

const PREVIEW_CHARS = 160;

/** Slots by compiled workflow: snapshots are immutable and shared, so they are walked once. */
const slotCache = new WeakMap<CompiledWorkflow, Slot[]>();

function slotsOf(compiled: CompiledWorkflow): Slot[] {
  const cached = slotCache.get(compiled);
  if (cached) return cached;
  const out: Slot[] = [];
  const walk = (
    nodes: readonly CompiledNode[],
    address: number[],
    loops: CompiledLoop[],
    guards: Slot["guards"],
  ) => {
    nodes.forEach((node, i) => {
      const at = [...address, i];
      const g = node.runCondition
        ? [...guards, { condition: node.runCondition, address: at }]
        : guards;
      if (node.kind === "loop") walk(node.body, at, [...loops, node], g);
      else out.push({ step: node, address: at, loops, guards: g });
    });
  };
  walk(compiled.steps, [], [], []);
  slotCache.set(compiled, out);
  return out;
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return a.length - b.length;
}

const isPrefix = (prefix: readonly number[], of: readonly number[]) =>
  prefix.length <= of.length && prefix.every((v, i) => of[i] === v);

/** How many enclosing loops a slot shares with the tip (whose running iteration it is in). */
function sharedLoops(slot: Slot, tip: Tip): number {
  let s = 0;
  while (s < slot.loops.length && s < tip.frames.length && slot.address[s] === tip.address[s]) s++;
  return s;
}

function sameIterations(c: Completion, tip: Tip, shared: number): boolean {
  if (c.frames === null) return true;
  for (let j = 0; j < shared; j++) {
    if (c.frames[j]?.at !== tip.frames[j]!.at || c.frames[j]?.it !== tip.frames[j]!.it) {
      return false;
    }
  }
  return true;
}

/** Whether the conditions that can be judged now let a later step run. */
function mayRun(slot: Slot, tip: Tip, shared: number): boolean {
  return slot.guards.every((g) =>
    isPrefix(g.address, tip.address) || g.address.length - 1 > shared ||
    evaluateCondition(g.condition, tip.context)
  );
}

/** What the statuses are judged against: the tip and the acknowledgements by step. */
interface Judge {
  tip: Tip;
  byStep: Map<string, Completion[]>;
  truncated: boolean;
}

function statusOf(slot: Slot, judge: Judge): PlanStepStatus {
  const { tip } = judge;
  const order = tip.complete ? -1 : compare(slot.address, tip.address);
  if (order === 0) return tip.blocked ? "blocked" : "current";
  const shared = sharedLoops(slot, tip);
  if (order > 0) return mayRun(slot, tip, shared) ? "pending" : "skipped";
  const done = (judge.byStep.get(slot.step.id) ?? []).some((c) => sameIterations(c, tip, shared));
  return done || judge.truncated ? "done" : "skipped";
}

function loopOf(slot: Slot, judge: Judge): PlanStep["loop"] {
  const k = slot.loops.length - 1;
  const loop = slot.loops[k];
  if (!loop) return undefined;
  let iteration = 0;
  if (k < sharedLoops(slot, judge.tip)) iteration = judge.tip.frames[k]!.it;
  else {
    for (const c of judge.byStep.get(slot.step.id) ?? []) {
      iteration = Math.max(iteration, c.frames?.[k]?.it ?? 0);
    }
  }
  return { loopId: loop.id, iteration, maxIterations: loop.loop.maxIterations };
}

/** The slots to list: all of them, or {@linkcode MAX_PLAN_STEPS} around the current one. */
function windowOf(slots: readonly Slot[], tip: Tip): [number, number] {
  if (slots.length <= MAX_PLAN_STEPS) return [0, slots.length];
  const current = tip.complete ? slots.length : firstAtOrAfter(slots, tip.address);
  const from = Math.max(0, Math.min(current - MAX_PLAN_STEPS / 4, slots.length - MAX_PLAN_STEPS));
  return [from, from + MAX_PLAN_STEPS];
}

/**
 * The first slot at or after `address` (slots are walked in address order, so a binary search:
 * a scan from the start cost each call of a long workflow time in proportion to its position).
 */
function firstAtOrAfter(slots: readonly Slot[], address: readonly number[]): number {
  let [lo, hi] = [0, slots.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compare(slots[mid]!.address, address) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function tipOf(compiled: CompiledWorkflow, at: PlanInput): Tip {
  const state = readState(at.tip.state);
  return {
    address: [...state.frames.map((f) => f.at), state.pc],
    frames: state.frames,
    complete: currentStep(compiled, state) === null,
    blocked: at.blocked,
    context: effectiveContext(compiled, state, at.tip.context),
  };
}

/** The statuses are judged against the branch's tip and its acknowledgements. */
function judgeOf(compiled: CompiledWorkflow, at: PlanInput): Judge {
  const byStep = new Map<string, Completion[]>();
  for (const c of at.completions) byStep.set(c.stepId, [...byStep.get(c.stepId) ?? [], c]);
  return { tip: tipOf(compiled, at), byStep, truncated: at.truncated };
}

/** The plan's steps of `slots[from..to)`. */
function planSteps(slots: readonly Slot[], judge: Judge, [from, to]: [number, number]): PlanStep[] {
  return slots.slice(from, to).map((slot): PlanStep => {
    const step: PlanStep = {
      name: slot.step.id,
      title: slot.step.title,
      status: statusOf(slot, judge),
    };
    const loop = loopOf(slot, judge);
    if (loop) step.loop = loop;
    return step;
  });
}

/** The progress plan of a branch. */
export function planProgress(compiled: CompiledWorkflow, at: PlanInput): WorkflowProgress {
  const judge = judgeOf(compiled, at);
  const slots = slotsOf(compiled);
  const [from, to] = windowOf(slots, judge.tip);
  const progress: WorkflowProgress = {
    goal: at.goal,
    steps: planSteps(slots, judge, [from, to]),
    schema_version: PROGRESS_SCHEMA_VERSION,
    note: PROGRESS_NOTE,
  };
  if (to - from < slots.length) progress.omitted = { before: from, after: slots.length - to };
  return progress;
}

/** The plan without its note, as a call's answer carries it. */
export type PlanExcerpt = Omit<WorkflowProgress, "note">;

/**
 * At most `size` steps of {@linkcode planProgress}'s plan, around its current step (two before
 * it), without its note, with `omitted` counting the steps before and after them: the same as
 * cutting the whole plan, but only these steps are judged, so it costs the same however many
 * steps the plan lists.
 */
export function planExcerpt(
  compiled: CompiledWorkflow,
  at: PlanInput,
  size: number,
): PlanExcerpt {
  const judge = judgeOf(compiled, at);
  const slots = slotsOf(compiled);
  const [from, to] = excerptOf(slots, judge.tip, size);
  const before = from;
  const after = slots.length - to;
  return {
    goal: at.goal,
    schema_version: PROGRESS_SCHEMA_VERSION,
    steps: planSteps(slots, judge, [from, to]),
    ...(before + after > 0 ? { omitted: { before, after } } : {}),
  };
}

/**
 * The slots of a `size`-step excerpt of the plan's window: from two before its current step (the
 * tip's: a pending tip is always at a step, which the window holds), kept inside the window; its
 * last steps once the run is complete.
 */
function excerptOf(slots: readonly Slot[], tip: Tip, size: number): [number, number] {
  const [from, to] = windowOf(slots, tip);
  const length = to - from;
  let start = 0;
  if (length > size) {
    const current = tip.complete ? length : firstAtOrAfter(slots, tip.address) - from;
    start = Math.max(0, Math.min(current - 2, length - size));
  }
  return [from + start, from + Math.min(length, start + size)];
}

/**
 * What each completed step left, by step id (a step run more than once: its latest); with
 * `only`, just those steps.
 */
export function stepResults(
  completions: readonly Completion[],
  only?: ReadonlySet<string>,
): Record<string, StepResult> {
  const out: Record<string, StepResult> = {};
  for (const c of completions) {
    if (only && !only.has(c.stepId)) continue;
    const notes = c.notesMarkdown;
    out[c.stepId] = {
      notesPreview: notes === null
        ? null
        : notes.length > PREVIEW_CHARS
        ? `${notes.slice(0, PREVIEW_CHARS - 1)}…`
        : notes,
      artifacts: [...c.artifactKinds],
    };
  }
  return out;
}
