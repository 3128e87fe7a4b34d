/**
 * `workflows try`, the pure part: plans the paths of a compiled workflow, walks each in memory
 * with the scripted agent ({@linkcode walkPath}), and reports what an author would otherwise
 * learn from a real model. The report is stable JSON (sorted, no clock, no hashes of runs) and
 * renders as text for people.
 * @module
 */
import type { CompiledNode, CompiledWorkflow } from "../workflow/compiled.ts";
import { allSteps } from "../workflow/interpreter.ts";
import type { Condition } from "../workflow/schema.ts";
import { assignments, loopVariables, type PathChoice, planPaths } from "./paths.ts";
import { type Finding, type Visit, walkPath, type WalkSession } from "./walk.ts";

export type { Finding, FindingKind } from "./walk.ts";

/** Bounds of one `try`. */
export const TRY_LIMITS = { paths: 64, stepBudget: 400 } as const;

/** At most this many extra paths aimed at steps a sample missed. */
const TARGETED_PATHS = 16;

/** One step of the report. */
export interface StepReport {
  /** Step id. */
  stepId: string;
  /** Whether some walked path reached it. */
  reached: boolean;
  /** The largest rendered prompt over the paths, in UTF-8 bytes (0 when never reached). */
  promptBytes: number;
  /** For a step never reached: the condition (or loop) that hid it. */
  hiddenBy?: string;
}

/** What `workflows try` reports. */
export interface TryReport {
  /** The workflow tried. */
  workflowId: string;
  /** Its `workflowHash`, when the caller knows it. */
  workflowHash?: string;
  /** The path space: how many paths, how many walked, and whether they were a sample. */
  paths: {
    total: number;
    walked: number;
    sampled: boolean;
    /** Of those walked, paths built to reach a step the sample missed. */
    targeted: number;
    /** When sampled: each path walked (its index, the value of each key, each loop's policy). */
    list?: PathChoice[];
    dimensions: string[];
  };
  /** The step budget per path. */
  stepBudget: number;
  /** Every step, in document order. */
  steps: StepReport[];
  /** Child workflows walked through parallel steps. */
  children: string[];
  /** Problems, sorted, each once (with the first path it showed on). */
  problems: Finding[];
  /** Whether there is no problem. */
  ok: boolean;
}

/** How a `try` is run. */
export interface TryOptions {
  /** Finds a delegated workflow, compiled. */
  resolve?: (workflowId: string) => CompiledWorkflow | null;
  /** At most this many paths (default {@linkcode TRY_LIMITS}). */
  maxPaths?: number;
  /** At most this many acknowledgements per path. */
  stepBudget?: number;
  /** Problems found before the walk (load errors, a changed base), reported with the rest. */
  known?: Finding[];
  /** The workflow's hash, for the report. */
  workflowHash?: string;
}

function hiding(nodes: readonly CompiledNode[], id: string, outer?: string): string | null {
  for (const n of nodes) {
    const here = n.runCondition ? `runCondition ${JSON.stringify(n.runCondition)}` : outer;
    if (n.kind === "step" && n.id === id) return here ?? null;
    if (n.kind === "loop") {
      const found = hiding(n.body, id, here ?? `loop \`${n.id}\` never ran an iteration`);
      if (found !== null) return found;
    }
  }
  return null;
}

/** Every condition on the way to a step (its loops' and its own), outermost first. */
function conditionsTo(nodes: readonly CompiledNode[], id: string): Condition[] | null {
  for (const n of nodes) {
    const own = n.runCondition ? [n.runCondition] : [];
    if (n.kind === "step" && n.id === id) return own;
    if (n.kind === "loop") {
      const inner = conditionsTo(n.body, id);
      if (inner) return [...own, ...inner];
    }
  }
  return null;
}

/**
 * After a sample, one more path per step it missed: the first path with the values that make
 * every condition on the way to that step hold (at most `TARGETED_PATHS`). Returns them.
 */
function walkTargeted(
  session: WalkSession,
  compiled: CompiledWorkflow,
  paths: readonly PathChoice[],
): PathChoice[] {
  const skip = loopVariables(compiled);
  const walked: PathChoice[] = [];
  for (const step of allSteps(compiled)) {
    if (walked.length >= TARGETED_PATHS) break;
    const reached = session.visits.some((v) =>
      v.workflowId === compiled.id && v.stepId === step.id
    );
    if (reached) continue;
    const values = { ...paths[0]!.values };
    for (const c of conditionsTo(compiled.steps, step.id) ?? []) {
      for (const [k, v] of Object.entries(assignments(c, true))) {
        if (!skip.has(k.split(".")[0]!)) values[k] = v;
      }
    }
    const path = { index: paths.length + walked.length, values, loops: paths[0]!.loops };
    walkPath(session, compiled, { path });
    walked.push(path);
  }
  return walked;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function findingKey(f: Finding): string {
  return [f.kind, f.workflowId, f.stepId ?? "", f.loopId ?? "", f.message].join("\u0000");
}

function dedupe(findings: readonly Finding[]): Finding[] {
  const first = new Map<string, Finding>();
  for (const f of findings) if (!first.has(findingKey(f))) first.set(findingKey(f), f);
  return [...first.values()].sort((a, b) => cmp(findingKey(a), findingKey(b)));
}

function stepReports(compiled: CompiledWorkflow, visits: readonly Visit[]): StepReport[] {
  const bytes = new Map<string, number>();
  for (const v of visits) {
    if (v.workflowId !== compiled.id) continue;
    bytes.set(v.stepId, Math.max(bytes.get(v.stepId) ?? 0, v.promptBytes));
  }
  return allSteps(compiled).map((s) => {
    const reached = bytes.has(s.id);
    const out: StepReport = { stepId: s.id, reached, promptBytes: bytes.get(s.id) ?? 0 };
    if (!reached) {
      out.hiddenBy = hiding(compiled.steps, s.id) ?? "an earlier step that never let the run past";
    }
    return out;
  });
}

/** Tries a compiled workflow over its paths with the scripted agent, and reports. */
export function tryWorkflow(compiled: CompiledWorkflow, options: TryOptions = {}): TryReport {
  const plan = planPaths(compiled, options.maxPaths ?? TRY_LIMITS.paths);
  const session: WalkSession = {
    resolve: options.resolve ?? (() => null),
    stepBudget: options.stepBudget ?? TRY_LIMITS.stepBudget,
    probed: new Set(),
    findings: [...(options.known ?? [])],
    visits: [],
  };
  for (const path of plan.paths) walkPath(session, compiled, { path });
  const targeted = plan.sampled ? walkTargeted(session, compiled, plan.paths) : [];
  const steps = stepReports(compiled, session.visits);
  for (const s of steps) {
    if (s.reached) continue;
    session.findings.push({
      kind: "unreached_step",
      workflowId: compiled.id,
      stepId: s.stepId,
      message: `never reached on the walked paths; hidden by ${s.hiddenBy}`,
    });
  }
  const problems = dedupe(session.findings);
  const children = [...new Set(session.visits.map((v) => v.workflowId))]
    .filter((id) => id !== compiled.id).sort(cmp);
  return {
    workflowId: compiled.id,
    ...(options.workflowHash ? { workflowHash: options.workflowHash } : {}),
    paths: {
      total: plan.total,
      walked: plan.paths.length + targeted.length,
      sampled: plan.sampled,
      targeted: targeted.length,
      ...(plan.sampled ? { list: [...plan.paths, ...targeted] } : {}),
      dimensions: plan.dimensions.map((d) => `${d.key} (${d.options.length})`),
    },
    stepBudget: session.stepBudget,
    steps,
    children,
    problems,
    ok: problems.length === 0,
  };
}

/** A report as text for people: the paths, each step's size and reach, then every problem. */
export function renderTryReport(report: TryReport): string {
  const p = report.paths;
  const lines = [
    `${report.workflowId}: ${report.ok ? "ok" : `${report.problems.length} problem(s)`}`,
    `paths: walked ${p.walked} of ${p.total}${
      p.sampled
        ? " (a sample: every option of every dimension at least once; --json lists them)"
        : ""
    }${
      p.targeted ? `, ${p.targeted} of them aimed at steps the sample missed` : ""
    }; step budget ${report.stepBudget} per path`,
  ];
  if (p.dimensions.length) lines.push(`dimensions: ${p.dimensions.join(", ")}`);
  if (report.children.length) lines.push(`child runs: ${report.children.join(", ")}`);
  lines.push("steps:");
  for (const s of report.steps) {
    lines.push(
      s.reached ? `  ${s.stepId}: ${s.promptBytes} bytes` : `  ${s.stepId}: never reached`,
    );
  }
  if (report.problems.length) lines.push("problems:");
  for (const f of report.problems) {
    const where = [
      f.workflowId !== report.workflowId ? f.workflowId : "",
      f.stepId ? `step ${f.stepId}` : "",
      f.loopId ? `loop ${f.loopId}` : "",
      f.path !== undefined ? `path ${f.path}` : "",
    ].filter(Boolean).join(", ");
    lines.push(`  [${f.kind}]${where ? ` (${where})` : ""}: ${f.message}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The report of a workflow that could not be tried: what stopped it, as problems. */
export function failedTry(workflowId: string, problems: Finding[]): TryReport {
  return {
    workflowId,
    paths: { total: 0, walked: 0, sampled: false, targeted: 0, dimensions: [] },
    stepBudget: TRY_LIMITS.stepBudget,
    steps: [],
    children: [],
    problems: dedupe(problems),
    ok: false,
  };
}
