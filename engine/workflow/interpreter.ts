/**
 * The interpreter: which step is pending, given a compiled workflow, a run state and context.
 * A run state is a small value stored on each node (a position and one frame per enclosing
 * loop), so every decision is local to one node and never needs the run's history.
 * @module
 */
import type { CompiledLoop, CompiledNode, CompiledStep, CompiledWorkflow } from "./compiled.ts";
import { evaluateCondition, readVar } from "./conditions.ts";
import type { Capability, CapabilityStatus } from "../model/vocabulary.ts";
import { InvariantViolationError } from "../model/result.ts";

/** An enclosing loop: where it sits in its parent sequence and which iteration is running. */
export interface LoopFrame {
  /** Index of the loop node in its parent sequence. */
  at: number;
  /** The running iteration, from 1. */
  it: number;
  /** The loop-control decision reported so far in this iteration (artifact-driven loops). */
  d?: "continue" | "stop";
}

/**
 * Where a run stands: `pc` indexes the innermost sequence (the top-level steps, or the body of
 * the innermost loop in `frames`). Complete when there are no frames and `pc` is past the end.
 */
export interface RunState {
  /** State format version (v1 states, `{v: 1, pc}`, are read as v2 with no frames). */
  v: 2;
  /** Index of the pending node in the innermost sequence. */
  pc: number;
  /** Enclosing loops, outermost first. */
  frames: LoopFrame[];
  /** Capability observations made on this branch. */
  caps?: Partial<Record<Capability, CapabilityStatus>>;
  /** The latest recorded level of each assessment dimension on this branch. */
  assessments?: RecordedLevels;
}

/** Recorded assessment levels: assessment id → dimension id → level. */
export type RecordedLevels = Record<string, Record<string, string>>;

/** The context path under which recorded assessments are visible: `assessments.<id>.<dimension>`. */
export const ASSESSMENTS_CONTEXT_KEY = "assessments";

/** A fact worth telling the agent that came out of a state transition. */
export interface Notice {
  /** Machine-readable code. */
  code: string;
  /** What happened. */
  message: string;
}

/** Loop-control decisions available at an acknowledgement (from its artifacts). */
export interface AckFacts {
  /** The artifacts acknowledged with the step. */
  artifacts?: readonly Record<string, unknown>[];
}

/** Reads a stored state of any version as the current one. */
export function readState(state: RunState | { v: 1; pc: number }): RunState {
  if (state.v === 1) return { v: 2, pc: state.pc, frames: [] };
  return state;
}

function sequenceOf(compiled: CompiledWorkflow, frames: readonly LoopFrame[]): CompiledNode[] {
  let seq = compiled.steps;
  for (const f of frames) seq = (seq[f.at] as CompiledLoop).body;
  return seq;
}

/** The loops enclosing a state's position, outermost first. */
export function loopsOf(compiled: CompiledWorkflow, frames: readonly LoopFrame[]): CompiledLoop[] {
  const loops: CompiledLoop[] = [];
  let seq = compiled.steps;
  for (const f of frames) {
    const loop = seq[f.at] as CompiledLoop;
    loops.push(loop);
    seq = loop.body;
  }
  return loops;
}

function itemsOf(loop: CompiledLoop, context: Record<string, unknown>): unknown[] {
  const items = loop.loop.items ? readVar(context, loop.loop.items) : undefined;
  return Array.isArray(items) ? items : [];
}

function countOf(loop: CompiledLoop, context: Record<string, unknown>): number {
  const c = loop.loop.count;
  const n = typeof c === "number" ? c : c !== undefined ? readVar(context, c) : 0;
  return typeof n === "number" && Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0;
}

/**
 * Context plus the branch's recorded assessments (under `assessments`, over any context value of
 * that name) and the variables of the enclosing loops (inner loops win).
 */
export function effectiveContext(
  compiled: CompiledWorkflow,
  state: RunState,
  context: Record<string, unknown>,
): Record<string, unknown> {
  const s = readState(state);
  if (s.frames.length === 0 && !s.assessments) return context;
  const out: Record<string, unknown> = { ...context };
  if (s.assessments) out[ASSESSMENTS_CONTEXT_KEY] = s.assessments;
  const loops = loopsOf(compiled, s.frames);
  s.frames.forEach((f, i) => {
    const loop = loops[i]!;
    out[loop.loop.iterationVar] = f.it;
    if (loop.loop.type === "forEach") {
      out[loop.loop.indexVar] = f.it - 1;
      out[loop.loop.itemVar] = itemsOf(loop, out)[f.it - 1];
    } else if (loop.loop.type === "for") out[loop.loop.indexVar] = f.it - 1;
  });
  return out;
}

function loopDecision(
  loop: CompiledLoop,
  artifacts: AckFacts["artifacts"],
): "continue" | "stop" | null {
  const source = loop.loop.artifact;
  if (!source) return null;
  for (const a of artifacts ?? []) {
    if (a.kind !== "wr.loop_control") continue;
    if (source.loopId && typeof a.loopId === "string" && a.loopId !== source.loopId) continue;
    if (a.decision === "continue" || a.decision === "stop") return a.decision;
  }
  return null;
}

function wantsIteration(
  loop: CompiledLoop,
  next: number,
  context: Record<string, unknown>,
  decision: "continue" | "stop" | null,
): boolean {
  const cfg = loop.loop;
  switch (cfg.type) {
    case "for":
      return next <= countOf(loop, context);
    case "forEach":
      return next <= itemsOf(loop, context).length;
    case "while":
    case "until": {
      if (cfg.artifact) return next === 1 || decision === "continue";
      const holds = cfg.condition ? evaluateCondition(cfg.condition, context) : false;
      if (cfg.type === "while") return holds;
      return next === 1 || !holds;
    }
  }
}

const SETTLE_LIMIT = 100_000;

/**
 * Moves from a position to the next runnable step: skips steps whose runCondition fails, enters
 * loops that want an iteration, and at the end of a body runs the next iteration or leaves.
 */
function settle(
  compiled: CompiledWorkflow,
  start: RunState,
  context: Record<string, unknown>,
): { state: RunState; notices: Notice[] } {
  const frames = start.frames.map((f) => ({ ...f }));
  let pc = start.pc;
  const notices: Notice[] = [];
  for (let guard = 0; guard < SETTLE_LIMIT; guard++) {
    const seq = sequenceOf(compiled, frames);
    const here = (): RunState => {
      const s: RunState = { v: 2, pc, frames: frames.map((f) => ({ ...f })) };
      if (start.caps) s.caps = start.caps;
      if (start.assessments) s.assessments = start.assessments;
      return s;
    };
    if (pc < seq.length) {
      const node = seq[pc]!;
      const ctx = effectiveContext(compiled, here(), context);
      if (node.runCondition && !evaluateCondition(node.runCondition, ctx)) {
        pc++;
        continue;
      }
      if (node.kind === "step") return { state: here(), notices };
      if (wantsIteration(node, 1, { ...ctx, ...iterationVars(node, 1, ctx) }, null)) {
        frames.push({ at: pc, it: 1 });
        pc = 0;
      } else pc++;
      continue;
    }
    const frame = frames.pop();
    if (!frame) return { state: here(), notices };
    const parentSeq = sequenceOf(compiled, frames);
    const loop = parentSeq[frame.at] as CompiledLoop;
    const inner = effectiveContext(
      compiled,
      { v: 2, pc: 0, frames: [...frames, frame], assessments: start.assessments },
      context,
    );
    const decision = frame.d ?? null;
    const wants = wantsIteration(loop, frame.it + 1, inner, decision);
    if (wants && frame.it >= loop.loop.maxIterations) {
      notices.push({
        code: "LOOP_MAX_ITERATIONS",
        message:
          `Loop \`${loop.id}\` stopped at its maxIterations (${loop.loop.maxIterations}) although its condition asked for another iteration.`,
      });
      pc = frame.at + 1;
    } else if (wants) {
      frames.push({ at: frame.at, it: frame.it + 1 });
      pc = 0;
    } else pc = frame.at + 1;
  }
  throw new InvariantViolationError("The interpreter did not settle: a loop makes no progress", {
    invariant: "interpreter_settles",
    workflowId: compiled.id,
  });
}

function iterationVars(
  loop: CompiledLoop,
  it: number,
  context: Record<string, unknown>,
): Record<string, unknown> {
  const vars: Record<string, unknown> = { [loop.loop.iterationVar]: it };
  if (loop.loop.type === "forEach") {
    vars[loop.loop.indexVar] = it - 1;
    vars[loop.loop.itemVar] = itemsOf(loop, context)[it - 1];
  }
  return vars;
}

/** The state at the start of a run. */
export function initialState(
  compiled: CompiledWorkflow,
  context: Record<string, unknown>,
): RunState {
  return settle(compiled, { v: 2, pc: 0, frames: [] }, context).state;
}

/** The state after the pending step of `state` is acknowledged, with any notices. */
export function advanceState(
  compiled: CompiledWorkflow,
  state: RunState,
  options: AckFacts & { context: Record<string, unknown> },
): { state: RunState; notices: Notice[] } {
  const { context, ...facts } = options;
  const s = readState(state);
  // A loop-control artifact is kept on the innermost artifact-driven loop it names (or the
  // innermost one), and decides that loop when its body ends.
  const frames = s.frames.map((f) => ({ ...f }));
  const loops = loopsOf(compiled, frames);
  for (let i = frames.length - 1; i >= 0; i--) {
    const decision = loopDecision(loops[i]!, facts.artifacts);
    if (decision) {
      frames[i]!.d = decision;
      break;
    }
  }
  return settle(compiled, { ...s, frames, pc: s.pc + 1 }, context);
}

/**
 * Why a stored state cannot be a position in `compiled` (a frame that is not at a loop, a
 * position past the end of its sequence), or `null` when it is one.
 */
export function stateProblem(compiled: CompiledWorkflow, state: RunState): string | null {
  const s = readState(state);
  let seq = compiled.steps;
  for (const [i, f] of s.frames.entries()) {
    const node = seq[f.at];
    if (node?.kind !== "loop") return `frame ${i} is at position ${f.at}, which is not a loop`;
    seq = node.body;
  }
  if (!Number.isInteger(s.pc) || s.pc < 0 || s.pc > seq.length) {
    return `position ${s.pc} is outside a sequence of ${seq.length} node(s)`;
  }
  return s.frames.length > 0 && s.pc === seq.length ? "a loop frame at the end of its body" : null;
}

/** The compiled step a state points at, or `null` when the run is complete. */
export function currentStep(compiled: CompiledWorkflow, state: RunState): CompiledStep | null {
  const s = readState(state);
  const node = sequenceOf(compiled, s.frames)[s.pc];
  return node && node.kind === "step" ? node : null;
}

/** Whether the run has no pending step left. */
export function isComplete(compiled: CompiledWorkflow, state: RunState): boolean {
  return currentStep(compiled, state) === null;
}

function countSteps(nodes: readonly CompiledNode[]): number {
  return nodes.reduce((n, node) => n + (node.kind === "step" ? 1 : countSteps(node.body)), 0);
}

/** Counts the steps of a workflow (each loop body counted once). */
export function stepCount(compiled: CompiledWorkflow): number {
  return countSteps(compiled.steps);
}

/** Every step of a workflow, depth first (loop bodies included once), with its innermost loop. */
export function allSteps(
  compiled: CompiledWorkflow,
): (CompiledStep & { loopId?: string })[] {
  const out: (CompiledStep & { loopId?: string })[] = [];
  const walk = (nodes: readonly CompiledNode[], loopId?: string) => {
    for (const n of nodes) {
      if (n.kind === "loop") walk(n.body, n.id);
      else out.push(loopId === undefined ? n : { ...n, loopId });
    }
  };
  walk(compiled.steps);
  return out;
}

/**
 * The steps still ahead of a state, for progress: the pending step and every later one in
 * document order (loop bodies once; conditions and loop exits may skip some, so it is an
 * estimate).
 */
export function remainingSteps(compiled: CompiledWorkflow, state: RunState): number {
  const step = currentStep(compiled, state);
  if (!step) return 0;
  const { positions, total } = stepPositions(compiled);
  const at = positions.get(step.id);
  return at === undefined ? 0 : total - at;
}

// Each compiled workflow's step order, walked once (a long workflow has thousands of steps and
// progress is asked on every advance).
const positionsOf = new WeakMap<
  CompiledWorkflow,
  { positions: Map<string, number>; total: number }
>();

function stepPositions(
  compiled: CompiledWorkflow,
): { positions: Map<string, number>; total: number } {
  let kept = positionsOf.get(compiled);
  if (!kept) {
    const steps = allSteps(compiled);
    const positions = new Map<string, number>();
    steps.forEach((s, i) => positions.has(s.id) || positions.set(s.id, i));
    kept = { positions, total: steps.length };
    positionsOf.set(compiled, kept);
  }
  return kept;
}
