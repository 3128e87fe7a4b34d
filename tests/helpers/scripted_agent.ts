/**
 * A scripted agent for driving workflows to completion in-process: it answers each pending step
 * with what the step asks for (the contract's artifact, notes meeting validation criteria,
 * passing assessments, loop decisions: continue once, then stop) and picks context values that
 * make chosen conditions true.
 * @module
 */
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import type {
  CompiledLoop,
  CompiledNode,
  CompiledStep,
  CompiledWorkflow,
} from "../../engine/workflow/compiled.ts";
import { readState } from "../../engine/workflow/interpreter.ts";
import type { Condition, ValidationCriteria } from "../../engine/workflow/schema.ts";
import { placeOf } from "./answers.ts";

/** Sets `a.b.c` in a context object. */
export function setVar(context: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let target = context;
  for (const part of parts.slice(0, -1)) {
    const next = target[part];
    if (next === null || typeof next !== "object" || Array.isArray(next)) target[part] = {};
    target = target[part] as Record<string, unknown>;
  }
  target[parts.at(-1)!] = value;
}

/** Context assignments that make a condition hold (or fail, with `want = false`). */
export function assignments(condition: Condition, want = true): Record<string, unknown> {
  if ("and" in condition) {
    return want
      ? Object.assign({}, ...condition.and.map((c) => assignments(c, true)))
      : assignments(condition.and[0]!, false);
  }
  if ("or" in condition) {
    return want
      ? assignments(condition.or[0]!, true)
      : Object.assign({}, ...condition.or.map((c) => assignments(c, false)));
  }
  if ("not" in condition) return assignments(condition.not, !want);
  const c = condition;
  let value: unknown;
  if ("equals" in c) value = want ? c.equals : `not-${JSON.stringify(c.equals)}`;
  else if ("not_equals" in c) {
    value = want
      ? (typeof c.not_equals === "number" ? c.not_equals + 1 : `not-${String(c.not_equals)}`)
      : c.not_equals;
  } else if (c.gt !== undefined) value = want ? c.gt + 1 : c.gt;
  else if (c.gte !== undefined) value = want ? c.gte : c.gte - 1;
  else if (c.lt !== undefined) value = want ? c.lt - 1 : c.lt;
  else if (c.lte !== undefined) value = want ? c.lte : c.lte + 1;
  else if (c.in !== undefined) value = want ? c.in[0] : "none-of-these";
  else if ("contains" in c) value = want ? [c.contains] : [];
  return { [c.var]: value };
}

function collectRules(criteria: ValidationCriteria, out: ValidationCriteria[]): void {
  if (Array.isArray(criteria)) criteria.forEach((c) => collectRules(c, out));
  else if ("and" in criteria) {
    (criteria.and as ValidationCriteria[]).forEach((c) => collectRules(c, out));
  } else if ("or" in criteria) collectRules((criteria.or as ValidationCriteria[])[0]!, out);
  else if ("not" in criteria) return;
  else out.push(criteria);
}

/** Notes that meet a step's validation criteria (or a plain recap). */
export function notesFor(step: CompiledStep): string {
  const base = `Did ${step.title}.`;
  if (!step.validation) return base;
  const rules: ValidationCriteria[] = [];
  collectRules(step.validation, rules);
  let text = base;
  let min = 0;
  let max = Infinity;
  for (const r of rules as Extract<ValidationCriteria, { type: string }>[]) {
    if (r.type === "contains" && r.value) text += ` ${r.value}.`;
    if (r.type === "length") {
      min = Math.max(min, r.min ?? 0);
      max = Math.min(max, r.max ?? Infinity);
    }
  }
  while (text.length < min) text += " More detail.";
  if (text.length > max) text = text.slice(0, max);
  return text;
}

/** Levels that fire one of the step's follow-ups for an assessment. */
function triggerLevels(step: CompiledStep, assessmentId: string): Set<string> {
  return new Set(
    (step.consequences ?? []).filter((c) =>
      c.forAssessment === undefined || c.forAssessment === assessmentId
    ).map((c) => c.anyEqualsLevel),
  );
}

/**
 * The `wr.assessment` artifacts of a step with every dimension rated; `fire` picks, for that
 * consequence, its level on the first dimension that has it (a follow-up path), and every other
 * dimension gets a level that fires nothing (a passing assessment).
 */
export function assessmentsFor(
  step: CompiledStep,
  fire?: { anyEqualsLevel: string; forAssessment?: string },
): Record<string, unknown>[] {
  let fired = false;
  return (step.assessments ?? []).map((a) => {
    const quiet = triggerLevels(step, a.id);
    const dimensions = Object.fromEntries(a.dimensions.map((d) => {
      const canFire = fire && !fired && d.levels.includes(fire.anyEqualsLevel) &&
        (fire.forAssessment === undefined || fire.forAssessment === a.id);
      if (canFire) {
        fired = true;
        return [d.id, fire.anyEqualsLevel];
      }
      return [d.id, d.levels.find((l) => !quiet.has(l)) ?? d.levels[0]!];
    }));
    return { kind: "wr.assessment", assessmentId: a.id, dimensions };
  });
}

/** Finds a step by id in the compiled tree. */
export function findStep(nodes: readonly CompiledNode[], id: string): CompiledStep | null {
  for (const n of nodes) {
    if (n.kind === "step" && n.id === id) return n;
    if (n.kind === "loop") {
      const found = findStep(n.body, id);
      if (found) return found;
    }
  }
  return null;
}

function enclosingLoops(compiled: CompiledWorkflow, frames: { at: number; it: number }[]) {
  const out: { loop: CompiledLoop; it: number }[] = [];
  let seq = compiled.steps;
  for (const f of frames) {
    const loop = seq[f.at] as CompiledLoop;
    out.push({ loop, it: f.it });
    seq = loop.body;
  }
  return out;
}

/** Every forEach/for input a workflow reads, with a two-element value. */
export function loopInputs(
  nodes: readonly CompiledNode[],
  out: Record<string, unknown> = {},
): Record<string, unknown> {
  for (const n of nodes) {
    if (n.kind !== "loop") continue;
    if (n.loop.type === "forEach" && n.loop.items) {
      setVar(out, n.loop.items, [{ name: "first", id: 1 }, { name: "second", id: 2 }]);
    }
    if (n.loop.type === "for" && typeof n.loop.count === "string") setVar(out, n.loop.count, 2);
    if (n.loop.type === "while" && n.loop.condition) {
      for (const [k, v] of Object.entries(assignments(n.loop.condition, true))) setVar(out, k, v);
    }
    loopInputs(n.body, out);
  }
  return out;
}

/** One scripted run: every pending step id seen, every prompt, and the final response. */
export interface ScriptedRun {
  /** Pending step ids in order. */
  steps: string[];
  /** Rendered prompts in order. */
  prompts: string[];
  /** The last response. */
  last: StepResponse;
  /** Child runs of parallel steps it drove to completion on the way. */
  children: number;
}

/** One turn of the scripted agent, before it sends its passing acknowledgement. */
export interface Turn {
  /** The response whose step is pending. */
  response: StepResponse;
  /** The compiled step. */
  step: CompiledStep;
  /** The passing acknowledgement it is about to send. */
  ack: {
    context: Record<string, unknown>;
    output: { notesMarkdown: string; artifacts: unknown[] };
  };
}

/** What drives one run: its workflow, the turn hook, the ack budget. */
interface DriveOptions {
  workflowId: string;
  compiled: CompiledWorkflow;
  maxAcks?: number;
  onTurn?: (turn: Turn) => Promise<StepResponse | void>;
}

/** Drives a workflow to completion with the scripted agent. */
export async function driveToCompletion(
  deps: EngineDeps,
  options: {
    workflowId: string;
    compiled: CompiledWorkflow;
    context: Record<string, unknown>;
    maxAcks?: number;
    /**
     * Called before each passing acknowledgement; may make attempts of its own and return the
     * response to acknowledge from instead (a blocked attempt's, with its fresh ackToken).
     */
    onTurn?: (turn: Turn) => Promise<StepResponse | void>;
  },
): Promise<ScriptedRun> {
  const { workflowId, context: startContext } = options;
  const started = await startWorkflow(deps, {
    workflowId,
    context: startContext,
  });
  if (!started.ok) throw new Error(`start ${workflowId}: ${JSON.stringify(started.error)}`);
  return await driveFrom(deps, started.value, options);
}

/**
 * Drives each open child run a parallel step lists (the serial fallback: one agent does them
 * all), each with the scripted agent; returns how many it drove.
 */
async function driveChildren(deps: EngineDeps, response: StepResponse): Promise<number> {
  let driven = 0;
  for (const child of response.delegations ?? []) {
    if (child.status !== "open") continue;
    const started = await startWorkflow(deps, { delegationToken: child.delegationToken });
    if (!started.ok) throw new Error(`start child: ${JSON.stringify(started.error)}`);
    const run = await deps.store.getRun(placeOf(started.value).runId.replace(/^run_/, ""));
    const compiled = run && await deps.store.getSnapshot(run.workflowHash);
    if (!compiled) throw new Error(`child ${child.runId} has no pinned workflow`);
    await driveFrom(deps, started.value, { workflowId: child.workflowId, compiled });
    driven++;
  }
  return driven;
}

async function driveFrom(
  deps: EngineDeps,
  first: StepResponse,
  options: DriveOptions,
): Promise<ScriptedRun> {
  const { workflowId, compiled } = options;
  let response = first;
  const run: ScriptedRun = { steps: [], prompts: [], last: response, children: 0 };
  for (let i = 0; i < (options.maxAcks ?? 400) && response.pending; i++) {
    const pending = response.pending;
    run.steps.push(pending.stepId);
    run.prompts.push(pending.prompt);
    run.children += await driveChildren(deps, response);
    const step = findStep(compiled.steps, pending.stepId)!;
    const node = await deps.store.getNode(
      placeOf(response).runId.replace(/^run_/, ""),
      placeOf(response).nodeId,
    );
    const frames = readState(node!.state).frames;
    const context: Record<string, unknown> = {};
    for (const { loop, it } of enclosingLoops(compiled, frames)) {
      const cond = loop.loop.condition;
      if (!cond) continue;
      const more = it < 2;
      const want = loop.loop.type === "while" ? more : !more;
      for (const [k, v] of Object.entries(assignments(cond, want))) setVar(context, k, v);
    }
    const artifacts: Record<string, unknown>[] = assessmentsFor(step);
    if (pending.outputContract) {
      const example = { ...pending.outputContract.example };
      if (example.kind === "wr.loop_control") {
        const innermost = frames.length > 0 ? frames.at(-1)!.it : 2;
        example.decision = innermost < 2 ? "continue" : "stop";
      }
      if (example.kind === "wr.capability_observation" && step.probe) {
        example.capability = step.probe;
      }
      artifacts.push(example);
    }
    const output = { notesMarkdown: notesFor(step), artifacts };
    const from = await options.onTurn?.({ response, step, ack: { context, output } }) ?? response;
    const next = await continueWorkflow(deps, {
      stateToken: from.stateToken,
      ackToken: from.ackToken!,
      context,
      output: output as never,
    });
    if (!next.ok) {
      throw new Error(`${workflowId} at ${pending.stepId}: ${JSON.stringify(next.error)}`);
    }
    if (next.value.kind !== "ok") {
      throw new Error(
        `${workflowId} blocked at ${pending.stepId}: ${JSON.stringify(next.value.blockers)}`,
      );
    }
    response = next.value;
  }
  run.last = response;
  return run;
}
