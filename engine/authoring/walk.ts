/**
 * One path of `workflows try`, walked in memory: the interpreter and the acknowledgement rules
 * the server uses (`reviewAck`), with no store, no tokens and no clock. At each step the agent
 * answers from `pending`; the first time a step comes up it is also sent a wrong answer, and the
 * blocked answer's fix is applied as written to see whether it passes. Parallel steps walk each
 * delegation that opens as a child run. Pure.
 * @module
 */
import { examplePayload, normalizeBlockers, reviewAck } from "../gates/enforce.ts";
import type { Artifact } from "../model/events.ts";
import type { Blocker } from "../answers/responses.ts";
import type { CompiledLoop, CompiledStep, CompiledWorkflow } from "../workflow/compiled.ts";
import { evaluateCondition } from "../workflow/conditions.ts";
import {
  advanceState,
  allSteps,
  currentStep,
  effectiveContext,
  initialState,
  readState,
  type RunState,
} from "../workflow/interpreter.ts";
import { type PendingStep, renderPending } from "../workflow/pending.ts";
import { type Answer, answerPending, applyFix, type BlockedAnswer, type Choices } from "./agent.ts";
import {
  assignments,
  iterationsWanted,
  keysSetBySteps,
  loopInputs,
  loopVariables,
  type PathChoice,
  planPaths,
  setVar,
} from "./paths.ts";

/** What `try` can find. */
export type FindingKind =
  | "unreached_step"
  | "impassable_gate"
  | "loop_cannot_exit"
  | "fix_does_not_work"
  | "unset_placeholder"
  | "unresolved_reference"
  | "step_budget"
  | "load_error"
  | "base_changed";

/** One problem found on a path. */
export interface Finding {
  /** What kind of problem. */
  kind: FindingKind;
  /** The workflow it is in (a child run's, for a delegation). */
  workflowId: string;
  /** The step it is at, when it is at one. */
  stepId?: string;
  /** The loop it is about, when it is about one. */
  loopId?: string;
  /** What is wrong, in words. */
  message: string;
  /** The first path it was found on. */
  path?: number;
}

/** A step the walk reached, with its rendered prompt's size. */
export interface Visit {
  /** The workflow (a child's for a delegation). */
  workflowId: string;
  /** Step id. */
  stepId: string;
  /** The rendered prompt's size in UTF-8 bytes. */
  promptBytes: number;
}

/** What is shared by every path of one `try`. */
export interface WalkSession {
  /** Finds a delegated workflow, compiled; `null` when nothing provides it. */
  resolve(workflowId: string): CompiledWorkflow | null;
  /** The acknowledgements one path may make before it is stopped. */
  stepBudget: number;
  /** `workflowId\u0000stepId` of steps already sent a wrong answer. */
  probed: Set<string>;
  /** Everything found. */
  findings: Finding[];
  /** Every step reached. */
  visits: Visit[];
}

const MAX_FIX_ROUNDS = 6;
const MAX_CHILD_DEPTH = 2;
const encoder = new TextEncoder();

interface Walker {
  session: WalkSession;
  compiled: CompiledWorkflow;
  path: PathChoice;
  values: Record<string, unknown>;
  chain: string[];
  acks: number;
}

function enclosingLoops(compiled: CompiledWorkflow, state: RunState) {
  const out: { loop: CompiledLoop; it: number }[] = [];
  let seq = compiled.steps;
  for (const f of readState(state).frames) {
    const loop = seq[f.at] as CompiledLoop;
    out.push({ loop, it: f.it });
    seq = loop.body;
  }
  return out;
}

function choicesOf(w: Walker): Choices {
  return {
    valueOf: (key) => key in w.values ? { value: w.values[key] } : null,
    loopDecision: (loopId, it) => {
      const max = Infinity;
      return it < iterationsWanted(w.path.loops[loopId], max) ? "continue" : "stop";
    },
  };
}

function review(w: Walker, at: { state: RunState; context: Record<string, unknown> }, a: Answer) {
  const step = currentStep(w.compiled, at.state)!;
  const context = merged(at.context, a.context);
  const r = reviewAck(w.compiled, step, {
    artifacts: a.artifacts as Artifact[],
    notesMarkdown: a.notesMarkdown,
    context: effectiveContext(w.compiled, at.state, context),
  });
  return { review: r, blockers: normalizeBlockers(r.problems), step };
}

function merged(context: Record<string, unknown>, add: Record<string, unknown>) {
  const out = structuredClone(context);
  for (const [k, v] of Object.entries(add)) setVar(out, k, v);
  return out;
}

function blockedOf(w: Walker, step: CompiledStep, blockers: Blocker[]): BlockedAnswer {
  return { blockers, example: examplePayload(w.compiled, blockers, step) };
}

/** Applies blocked answers' fixes round after round; the blockers left (none: the fix works). */
function repair(
  w: Walker,
  at: { state: RunState; context: Record<string, unknown>; pending: PendingStep },
  first: Answer,
): { answer: Answer; blockers: Blocker[] } {
  let answer = first;
  let { blockers, step } = review(w, at, answer);
  for (let round = 0; round < MAX_FIX_ROUNDS && blockers.length > 0; round++) {
    answer = applyFix(at.pending, answer, blockedOf(w, step, blockers));
    blockers = review(w, at, answer).blockers;
  }
  return { answer, blockers };
}

function describe(blockers: readonly Blocker[]): string {
  return blockers.map((b) => `${b.code}: ${b.message} Fix: ${b.suggestedFix}`).join(" / ");
}

function probeStep(
  w: Walker,
  at: { state: RunState; context: Record<string, unknown>; pending: PendingStep },
  good: Answer,
): void {
  const key = `${w.compiled.id}\u0000${at.pending.stepId}`;
  if (w.session.probed.has(key)) return;
  w.session.probed.add(key);
  if (review(w, at, good).blockers.length > 0) return; // reported as impassable
  const wrong: Answer[] = [{ context: {}, artifacts: [] }];
  if (at.pending.followUps?.length) {
    const level = at.pending.followUps[0]!.level;
    wrong.push({
      ...good,
      artifacts: good.artifacts.map((a) =>
        a.kind !== "wr.assessment" ? a : {
          ...a,
          dimensions: Object.fromEntries(
            Object.keys(a.dimensions as object).map((d, i) => [
              d,
              i === 0 ? level : (a.dimensions as Record<string, string>)[d],
            ]),
          ),
        }
      ),
    });
  }
  for (const answer of wrong) {
    const first = review(w, at, answer).blockers;
    const fixed = repair(w, at, answer);
    if (fixed.blockers.length === 0) continue;
    w.session.findings.push({
      kind: "fix_does_not_work",
      workflowId: w.compiled.id,
      stepId: at.pending.stepId,
      message: `a wrong answer was blocked with ${
        first.map((b) => b.code).join(", ")
      }; the fix, applied as written, is still blocked: ${describe(fixed.blockers)}`,
      path: w.path.index,
    });
  }
}

/** Context the agent sets inside loops it drives: the loop's condition, per the path's policy. */
function loopContext(w: Walker, state: RunState): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const loopVars = loopVariables(w.compiled);
  for (const { loop, it } of enclosingLoops(w.compiled, state)) {
    const cond = loop.loop.condition;
    if (!cond) continue;
    const more = it < iterationsWanted(w.path.loops[loop.id], loop.loop.maxIterations);
    const want = loop.loop.type === "while" ? more : !more;
    for (const [k, v] of Object.entries(assignments(cond, want))) {
      if (!loopVars.has(k.split(".")[0]!)) out[k] = v;
    }
  }
  return out;
}

function walkChildren(w: Walker, step: CompiledStep, context: Record<string, unknown>): void {
  for (const d of step.delegations ?? []) {
    if (d.runCondition && !evaluateCondition(d.runCondition, context)) continue;
    const child = w.session.resolve(d.workflowId);
    if (!child) {
      w.session.findings.push({
        kind: "unresolved_reference",
        workflowId: w.compiled.id,
        stepId: step.id,
        message: `parallel step delegates to \`${d.workflowId}\`, which no source provides`,
        path: w.path.index,
      });
      continue;
    }
    if (w.chain.length > MAX_CHILD_DEPTH || w.chain.includes(child.id)) continue;
    const start: Record<string, unknown> = { ...(d.args ?? {}) };
    for (const [from, to] of Object.entries(d.contextMapping ?? {})) start[to] = context[from];
    const childPath = planPaths(child, 1).paths[0]!;
    walkPath(w.session, child, {
      path: { ...childPath, index: w.path.index },
      start,
      chain: [...w.chain, child.id],
    });
  }
}

/**
 * The context a path starts with: the values no step asks for, and a DeepWork job's user inputs
 * (those no step produces), given as the user would give them.
 */
function startContext(compiled: CompiledWorkflow, path: PathChoice) {
  const values = { ...path.values, ...loopInputs(compiled, path) };
  const atSteps = keysSetBySteps(compiled);
  const context: Record<string, unknown> = {};
  for (const step of allSteps(compiled)) {
    for (const input of step.job?.inputs ?? []) {
      if (input.fromStep === undefined) context[input.name] = `the user's ${input.name}`;
    }
  }
  for (const [k, v] of Object.entries(values)) if (!atSteps.has(k)) setVar(context, k, v);
  return { values, context };
}

/** Walks one path of a workflow (a child run's when `chain` has its parents). */
export function walkPath(
  session: WalkSession,
  compiled: CompiledWorkflow,
  options: { path: PathChoice; start?: Record<string, unknown>; chain?: string[] },
): void {
  const { values, context: planned } = startContext(compiled, options.path);
  const w: Walker = {
    session,
    compiled,
    path: options.path,
    values,
    chain: options.chain ?? [compiled.id],
    acks: 0,
  };
  let context = { ...planned, ...(options.start ?? {}) };
  let state = initialState(compiled, context);
  for (let step = currentStep(compiled, state); step; step = currentStep(compiled, state)) {
    if (w.acks++ >= session.stepBudget) {
      session.findings.push({
        kind: "step_budget",
        workflowId: compiled.id,
        stepId: step.id,
        message:
          `the walk did not end within ${session.stepBudget} acknowledgements; it was at \`${step.id}\``,
        path: options.path.index,
      });
      return;
    }
    const next = walkStep(w, { state, context, step });
    state = next.state;
    context = next.context;
  }
}

function walkStep(
  w: Walker,
  at: { state: RunState; context: Record<string, unknown>; step: CompiledStep },
): { state: RunState; context: Record<string, unknown> } {
  const { compiled, session } = w;
  const rendered = renderPending(compiled, at.state, at.context)!;
  const pending = rendered.pending;
  session.visits.push({
    workflowId: compiled.id,
    stepId: pending.stepId,
    promptBytes: encoder.encode(pending.prompt).length,
  });
  for (const name of rendered.missing) {
    session.findings.push({
      kind: "unset_placeholder",
      workflowId: compiled.id,
      stepId: pending.stepId,
      message: `\`{{${name}}}\` renders unset`,
      path: w.path.index,
    });
  }
  const effective = effectiveContext(compiled, at.state, at.context);
  walkChildren(w, at.step, effective);
  const here = { state: at.state, context: at.context, pending };
  const good = answerPending(pending, { choices: choicesOf(w), context: effective });
  Object.assign(good.context, loopContext(w, at.state));
  probeStep(w, here, good);
  const { answer, blockers } = repair(w, here, good);
  if (blockers.length > 0) {
    session.findings.push({
      kind: "impassable_gate",
      workflowId: compiled.id,
      stepId: pending.stepId,
      message: `no answer from pending or from its blocked answers passes: ${describe(blockers)}`,
      path: w.path.index,
    });
  }
  return advance(w, at, answer);
}

function advance(
  w: Walker,
  at: { state: RunState; context: Record<string, unknown> },
  answer: Answer,
): { state: RunState; context: Record<string, unknown> } {
  const context = merged(at.context, answer.context);
  const { review: r } = review(w, at, answer);
  const prior = readState(at.state);
  const assessments = { ...(prior.assessments ?? {}) };
  for (const a of r.assessments) assessments[a.assessmentId] = a.dimensions;
  const caps = { ...(prior.caps ?? {}) };
  for (const o of r.observations) caps[o.capability] = o.status;
  const from: RunState = {
    ...prior,
    ...(Object.keys(caps).length ? { caps } : {}),
    ...(Object.keys(assessments).length ? { assessments } : {}),
  };
  const next = advanceState(w.compiled, from, {
    context,
    artifacts: answer.artifacts as Artifact[],
  });
  for (const n of next.notices) {
    const loopId = /^Loop `([^`]+)`/.exec(n.message)?.[1];
    if (n.code !== "LOOP_MAX_ITERATIONS" || !loopId || w.path.loops[loopId] === "bound") continue;
    w.session.findings.push({
      kind: "loop_cannot_exit",
      workflowId: w.compiled.id,
      loopId,
      message: `loop \`${loopId}\` ran to its maxIterations although the path tried to leave it ${
        w.path.loops[loopId] === "twice" ? "after two iterations" : "after one iteration"
      }`,
      path: w.path.index,
    });
  }
  return { state: next.state, context };
}
