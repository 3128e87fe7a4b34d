/**
 * The paths `workflows try` walks: every context value a condition names (each branch of each
 * `runCondition`, fragment, confirmation, rule and delegation condition) and, for each loop the
 * agent or the user controls, whether it exits at once, runs twice or runs to its bound. A path
 * picks one option of each; their product is walked whole when small, else a deterministic
 * sample that still takes every option at least once. Pure.
 * @module
 */
import type { CompiledLoop, CompiledNode, CompiledWorkflow } from "../workflow/compiled.ts";
import { allSteps } from "../workflow/interpreter.ts";
import type { Condition, ValidationCriteria } from "../workflow/schema.ts";
import { canonicalJson } from "../common/hash.ts";

/** How a loop the agent controls is driven on a path. */
export type LoopPolicy = "exit" | "twice" | "bound";

/** One dimension of the path space: a context variable's values, or a loop's policies. */
export interface Dimension {
  /** `var:<path>` or `loop:<id>`. */
  key: string;
  /** The options, in a stable order. */
  options: unknown[];
}

/** One path: an option for every dimension. */
export interface PathChoice {
  /** Its index among the walked paths. */
  index: number;
  /** Context variable → the value it takes on this path. */
  values: Record<string, unknown>;
  /** Loop id → how it is driven. */
  loops: Record<string, LoopPolicy>;
}

/** The paths to walk and how many there are in all. */
export interface PathPlan {
  /** Every dimension. */
  dimensions: Dimension[];
  /** The number of paths in the full product. */
  total: number;
  /** The paths walked. */
  paths: PathChoice[];
  /** Whether `paths` is a sample of a larger product. */
  sampled: boolean;
}

/** A loop runs to its bound on a path only when that costs at most this many steps. */
export const BOUND_WALK_STEPS = 60;

function comparisons(c: Condition, out: Condition[]): void {
  if ("and" in c) c.and.forEach((x) => comparisons(x, out));
  else if ("or" in c) c.or.forEach((x) => comparisons(x, out));
  else if ("not" in c) comparisons(c.not, out);
  else out.push(c);
}

function ruleConditions(v: ValidationCriteria, out: Condition[]): void {
  if (Array.isArray(v)) return v.forEach((x) => ruleConditions(x, out));
  if ("and" in v) return (v.and as ValidationCriteria[]).forEach((x) => ruleConditions(x, out));
  if ("or" in v) return (v.or as ValidationCriteria[]).forEach((x) => ruleConditions(x, out));
  if ("not" in v) return ruleConditions(v.not as ValidationCriteria, out);
  if (v.condition) out.push(v.condition);
}

/** Every condition of the tree that is not a loop's own (those are the loop policies). */
export function branchConditions(nodes: readonly CompiledNode[]): Condition[] {
  const out: Condition[] = [];
  for (const n of nodes) {
    if (n.runCondition) out.push(n.runCondition);
    if (n.kind === "loop") {
      out.push(...branchConditions(n.body));
      continue;
    }
    for (const f of n.fragments ?? []) if (f.when) out.push(f.when);
    if (typeof n.requireConfirmation === "object") out.push(n.requireConfirmation);
    for (const d of n.delegations ?? []) if (d.runCondition) out.push(d.runCondition);
    if (n.validation !== undefined) ruleConditions(n.validation, out);
  }
  return out;
}

/** A value that makes one comparison hold (`want`) or fail. */
export function valueFor(c: Condition, want: boolean): unknown {
  if (!("var" in c)) return undefined;
  if ("equals" in c) return want ? c.equals : `not ${JSON.stringify(c.equals)}`;
  if ("not_equals" in c) {
    if (!want) return c.not_equals;
    return typeof c.not_equals === "number" ? c.not_equals + 1 : `not ${String(c.not_equals)}`;
  }
  if (c.gt !== undefined) return want ? c.gt + 1 : c.gt;
  if (c.gte !== undefined) return want ? c.gte : c.gte - 1;
  if (c.lt !== undefined) return want ? c.lt - 1 : c.lt;
  if (c.lte !== undefined) return want ? c.lte : c.lte + 1;
  if (c.in !== undefined) return want ? c.in[0] : "none of these";
  if ("contains" in c) return want ? [c.contains] : [];
  return undefined;
}

/** Context assignments that make a condition hold (or fail). */
export function assignments(c: Condition, want: boolean): Record<string, unknown> {
  if ("and" in c) {
    return want
      ? Object.assign({}, ...c.and.map((x) => assignments(x, true)))
      : assignments(c.and[0]!, false);
  }
  if ("or" in c) {
    return want
      ? assignments(c.or[0]!, true)
      : Object.assign({}, ...c.or.map((x) => assignments(x, false)));
  }
  if ("not" in c) return assignments(c.not, !want);
  return { [c.var]: valueFor(c, want) };
}

function loopsOf(nodes: readonly CompiledNode[], out: CompiledLoop[] = []): CompiledLoop[] {
  for (const n of nodes) {
    if (n.kind === "loop") {
      out.push(n);
      loopsOf(n.body, out);
    }
  }
  return out;
}

/** Every loop of the tree, depth first. */
export function loopsIn(compiled: CompiledWorkflow): CompiledLoop[] {
  return loopsOf(compiled.steps);
}

/** The names loops give their variables (set by the interpreter, never by the agent). */
export function loopVariables(compiled: CompiledWorkflow): Set<string> {
  const names = new Set<string>();
  for (const l of loopsIn(compiled)) {
    names.add(l.loop.iterationVar).add(l.loop.itemVar).add(l.loop.indexVar);
  }
  return names;
}

function bodySteps(loop: CompiledLoop): number {
  return loop.body.reduce((n, b) => n + (b.kind === "step" ? 1 : bodySteps(b)), 0);
}

/** Whether the agent or user decides how often a loop runs (a fixed `count` is the author's). */
export function controllable(loop: CompiledLoop): boolean {
  return typeof loop.loop.count !== "number";
}

function loopPolicies(loop: CompiledLoop): LoopPolicy[] {
  if (!controllable(loop)) return ["exit"];
  const bound = loop.loop.maxIterations * Math.max(1, bodySteps(loop)) <= BOUND_WALK_STEPS &&
    loop.loop.maxIterations > 2;
  return bound ? ["exit", "twice", "bound"] : ["exit", "twice"];
}

/** The dimensions of a workflow's path space, in a stable order. */
export function dimensions(compiled: CompiledWorkflow): Dimension[] {
  const skip = loopVariables(compiled);
  const byVar = new Map<string, Map<string, unknown>>();
  const cmps: Condition[] = [];
  branchConditions(compiled.steps).forEach((c) => comparisons(c, cmps));
  for (const c of cmps) {
    if (!("var" in c) || skip.has(c.var.split(".")[0]!)) continue;
    const values = byVar.get(c.var) ?? new Map<string, unknown>();
    for (const want of [true, false]) {
      const v = valueFor(c, want);
      values.set(canonicalJson(v ?? null), v);
    }
    byVar.set(c.var, values);
  }
  const vars = [...byVar.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, values]) => ({ key: `var:${name}`, options: [...values.values()] }));
  const loops = loopsIn(compiled).map((l) => ({ key: `loop:${l.id}`, options: loopPolicies(l) }));
  return [...vars, ...loops];
}

function choiceAt(dims: readonly Dimension[], picks: readonly number[], index: number): PathChoice {
  const path: PathChoice = { index, values: {}, loops: {} };
  dims.forEach((d, i) => {
    const option = d.options[picks[i]!]!;
    if (d.key.startsWith("var:")) path.values[d.key.slice(4)] = option;
    else path.loops[d.key.slice(5)] = option as LoopPolicy;
  });
  return path;
}

/**
 * The paths to walk: the whole product when it has at most `limit` paths; otherwise, path `v`
 * takes option `v` (modulo) of every dimension, so each option is taken at least once, and the
 * rest of the budget goes to mixed-radix picks spread evenly over the product.
 */
export function planPaths(compiled: CompiledWorkflow, limit: number): PathPlan {
  const dims = dimensions(compiled);
  const sizes = dims.map((d) => d.options.length);
  const total = sizes.reduce((n, s) => n * s, 1);
  const picks: number[][] = [];
  const seen = new Set<string>();
  const add = (p: number[]) => {
    const key = p.join(",");
    if (!seen.has(key) && picks.length < limit) {
      seen.add(key);
      picks.push(p);
    }
  };
  const mixed = (n: number) => {
    const p: number[] = [];
    for (const s of sizes) {
      p.push(n % s);
      n = Math.floor(n / s);
    }
    return p;
  };
  if (total <= limit) {
    for (let n = 0; n < total; n++) add(mixed(n));
  } else {
    const widest = Math.max(...sizes);
    for (let v = 0; v < widest; v++) add(sizes.map((s) => v % s));
    const stride = Math.max(1, Math.floor(total / limit));
    for (let n = 0; n < total && picks.length < limit; n += stride) add(mixed(n));
  }
  return {
    dimensions: dims,
    total,
    paths: picks.map((p, i) => choiceAt(dims, p, i)),
    sampled: total > picks.length,
  };
}

/** The keys some step asks for (`requiredContext` or a user-only dependency): set at that step. */
export function keysSetBySteps(compiled: CompiledWorkflow): Set<string> {
  const keys = new Set<string>();
  for (const s of allSteps(compiled)) {
    s.requiredContext?.forEach((k) => keys.add(k));
    s.userDependencies?.forEach((d) => keys.add(d.contextKey));
  }
  return keys;
}

/**
 * Sets `a.b.c` in a context object; `x.length` set to a number sets `x` to a text of that
 * length (so an optional input guarded by `x.length` is filled, or empty).
 */
export function setVar(context: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  if (parts.length > 1 && parts.at(-1) === "length" && typeof value === "number") {
    return setVar(context, parts.slice(0, -1).join("."), "x".repeat(Math.max(0, value)));
  }
  let target = context;
  for (const part of parts.slice(0, -1)) {
    const next = target[part];
    target[part] = next !== null && typeof next === "object" && !Array.isArray(next)
      ? { ...next }
      : {};
    target = target[part] as Record<string, unknown>;
  }
  target[parts.at(-1)!] = value;
}

/** How many iterations a policy asks of a loop it drives. */
export function iterationsWanted(policy: LoopPolicy | undefined, max: number): number {
  return policy === "bound" ? max : policy === "twice" ? 2 : 1;
}

/** The inputs loops read on a path: `forEach` items and `for` counts sized by its policies. */
export function loopInputs(compiled: CompiledWorkflow, path: PathChoice): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const l of loopsIn(compiled)) {
    const n = iterationsWanted(path.loops[l.id], l.loop.maxIterations);
    if (l.loop.type === "forEach" && l.loop.items) {
      out[l.loop.items] = Array.from(
        { length: n },
        (_, i) => ({ name: `item ${i + 1}`, id: i + 1 }),
      );
    }
    if (l.loop.type === "for" && typeof l.loop.count === "string") out[l.loop.count] = n;
    if (l.loop.type === "while" && l.loop.condition) {
      Object.assign(out, assignments(l.loop.condition, true));
    }
  }
  return out;
}
