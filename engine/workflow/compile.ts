/**
 * The compiler: a validated workflow file becomes the compiled form that runs are pinned to.
 * Templates (routines) are expanded, features applied, snippets and contract packs resolved,
 * capability probes injected, so everything a run needs is inside it and its hash identifies
 * behaviour exactly.
 * @module
 */
import { hashJson } from "../hash.ts";
import { CONTRACT_PACKS, packJsonSchema } from "../contracts.ts";
import type {
  Capability,
  Condition,
  LoopConfig,
  UserDependency,
  ValidationCriteria,
  WorkflowFile,
  WorkflowStep,
} from "./schema.ts";
import type { WorkflowIssue } from "./parse.ts";
import { CAPABILITIES, type CapabilityNeed, isMember, type WorkflowKind } from "../vocabulary.ts";
import { referencedSnippets, renderPromptBlocks } from "./render.ts";
import { checkWorkflowId } from "./ids.ts";
import {
  CAPABILITY_PROBE_TEMPLATE,
  FEATURES,
  probePrompt,
  routineTemplateId,
  SNIPPETS,
} from "./library.ts";

/** Version of the compiled form; part of the hash so a format change never aliases. */
export const COMPILED_FORMAT = 2;

/** A step's output contract, resolved. */
export interface CompiledContract {
  /** The `wr.contracts.*` id. */
  contractRef: string;
  /** Whether a missing or invalid artifact blocks (or is a gap under never-stop). */
  required: boolean;
  /** The artifact kind that fulfils it. */
  artifactKind: string;
}

/** A step as runs see it. */
export interface CompiledStep {
  /** Node kind. */
  kind: "step";
  /** Step id, unique within the workflow. */
  id: string;
  /** Human title. */
  title: string;
  /** Prompt text with `{{var}}` placeholders still in it. */
  promptTemplate: string;
  /** The effective role: the step's own, else the workflow's. */
  agentRole?: string;
  /** Whether the agent must check with the user before acknowledging (or when, as a condition). */
  requireConfirmation: boolean | Condition;
  /** Run only when this holds for the context at the time the step comes up. */
  runCondition?: Condition;
  /** Text appended to the prompt when its condition holds. */
  fragments?: { when?: Condition; text: string }[];
  /** The output the step must produce. */
  outputContract?: CompiledContract;
  /** Checks on the step's notes. */
  validation?: ValidationCriteria;
  /** Context keys only the user can supply. */
  userDependencies?: UserDependency[];
  /** Set on an injected capability probe: the capability it observes. */
  probe?: Capability;
}

/** A loop as runs see it. */
export interface CompiledLoop {
  /** Node kind. */
  kind: "loop";
  /** Loop id. */
  id: string;
  /** Human title. */
  title: string;
  /** Enter only when this holds. */
  runCondition?: Condition;
  /** Loop settings, defaults filled in. */
  loop: {
    /** Loop kind. */
    type: LoopConfig["type"];
    /** while/until over context (and loop variables). */
    condition?: Condition;
    /** while/until decided by the last loop-control artifact reported in an iteration. */
    artifact?: { contractRef: string; loopId?: string };
    /** forEach: the context variable holding the array. */
    items?: string;
    /** for: the count, or the context variable holding it. */
    count?: number | string;
    /** Safety limit. */
    maxIterations: number;
    /** The iteration counter's name (from 1). */
    iterationVar: string;
    /** forEach: the current item's name. */
    itemVar: string;
    /** for/forEach: the current index's name (from 0). */
    indexVar: string;
  };
  /** The body, in order. */
  body: CompiledNode[];
}

/** A node of the compiled step tree. */
export type CompiledNode = CompiledStep | CompiledLoop;

/** A compiled workflow: the unit that is hashed, pinned and stored. */
export interface CompiledWorkflow {
  /** Compiled format version. */
  format: typeof COMPILED_FORMAT;
  /** Workflow id. */
  id: string;
  /** Workflow or routine. */
  kind: WorkflowKind;
  /** Human name. */
  name: string;
  /** What the workflow is for. */
  description: string;
  /** The author's version string. */
  version: string;
  /** Guidance shown once, at start (features' guidance included). */
  metaGuidance: string[];
  /** Most automation the author recommends. */
  recommendedPreferences?: { autonomy?: string; riskPolicy?: string };
  /** Optional capabilities and how much the workflow needs them. */
  capabilities: Partial<Record<Capability, CapabilityNeed>>;
  /** Features applied. */
  features: string[];
  /** Every contract pack the workflow uses, resolved (schema and example). */
  contracts: Record<
    string,
    { artifactKind: string; schema: Record<string, unknown>; example: Record<string, unknown> }
  >;
  /** Steps and loops in order. */
  steps: CompiledNode[];
}

/** What the compiler may reference besides the file itself. */
export interface CompileOptions {
  /** Routines by id, for `templateCall`. */
  routines?: ReadonlyMap<string, WorkflowFile>;
}

/** Whether an id names a routine (`<namespace>.routine-<name>`). */
export function isRoutineId(id: string): boolean {
  return /^[a-z][a-z0-9_-]*\.routine-/.test(id);
}

const known = (ids: Iterable<string>) => [...ids].sort().map((id) => `\`${id}\``).join(", ");

interface Ctx {
  file: WorkflowFile;
  options: CompileOptions;
  issues: WorkflowIssue[];
  contracts: Set<string>;
  stepConstraints: string[];
  routineStack: string[];
}

function contractOf(
  ctx: Ctx,
  declared: WorkflowStep["outputContract"],
  path: string,
): CompiledContract | undefined {
  if (!declared) return undefined;
  const p = CONTRACT_PACKS.get(declared.contractRef);
  if (!p) {
    ctx.issues.push({
      path: `${path}.contractRef`,
      message: `unknown contract \`${declared.contractRef}\`; known contracts: ${
        known(CONTRACT_PACKS.keys())
      }`,
    });
    return undefined;
  }
  ctx.contracts.add(p.id);
  return { contractRef: p.id, required: declared.required ?? true, artifactKind: p.artifactKind };
}

function confirmation(rule: WorkflowStep["requireConfirmation"]): boolean | Condition {
  if (rule === undefined) return false;
  if (typeof rule === "boolean") return rule;
  if ("kind" in rule && (rule.kind === "human_approval" || rule.kind === "coordinator_eval")) {
    return (rule as { condition?: Condition }).condition ?? true;
  }
  return rule as Condition;
}

function functionSection(file: WorkflowFile, refs: readonly string[] | undefined): string {
  if (!refs?.length) return "";
  const defs = new Map((file.functionDefinitions ?? []).map((d) => [d.name, d.definition]));
  const lines = refs.map((r) => {
    const name = r.replace(/\(\)$/, "");
    return `- \`${r}\`: ${defs.get(name) ?? "(no definition in this workflow)"}`;
  });
  return `\n\n## Functions\n${lines.join("\n")}`;
}

interface AssessmentDef {
  id: string;
  purpose?: string;
  dimensions?: { id: string; purpose?: string; levels?: string[] }[];
}

/**
 * WorkRail self-assessments, rendered into the prompt (guidance for the agent; waymark does not
 * enforce their consequences). Unknown assessment ids are compile errors.
 */
function assessmentSection(ctx: Ctx, step: WorkflowStep, path: string): string {
  const refs = step.assessmentRefs;
  if (!Array.isArray(refs) || refs.length === 0) return "";
  const defs = Array.isArray(ctx.file.assessments)
    ? (ctx.file.assessments as AssessmentDef[]).filter((a) => a && typeof a.id === "string")
    : [];
  const byId = new Map(defs.map((a) => [a.id, a]));
  const lines = [
    "## Self-assessment",
    "Before acknowledging, rate each dimension and give the ratings in output.notesMarkdown:",
  ];
  for (const ref of refs) {
    const def = typeof ref === "string" ? byId.get(ref) : undefined;
    if (!def) {
      ctx.issues.push({
        path: `${path}.assessmentRefs`,
        message: `unknown assessment \`${String(ref)}\`; this workflow's assessments: ${
          known(byId.keys()) || "(none)"
        }`,
      });
      continue;
    }
    lines.push(`- \`${def.id}\`${def.purpose ? `: ${def.purpose}` : ""}`);
    for (const d of def.dimensions ?? []) {
      lines.push(
        `  - \`${d.id}\` (${(d.levels ?? []).join(" | ")})${d.purpose ? `: ${d.purpose}` : ""}`,
      );
    }
  }
  const consequences = Array.isArray(step.assessmentConsequences)
    ? step.assessmentConsequences as {
      when?: { anyEqualsLevel?: string; forAssessment?: string };
      effect?: { guidance?: string };
    }[]
    : [];
  for (const c of consequences) {
    if (!c?.when?.anyEqualsLevel || !c.effect?.guidance) continue;
    lines.push(
      `If any dimension${
        c.when.forAssessment ? ` of \`${c.when.forAssessment}\`` : ""
      } is \`${c.when.anyEqualsLevel}\`, follow up before acknowledging: ${c.effect.guidance}`,
    );
  }
  return `\n\n${lines.join("\n")}`;
}

function contractSection(c: CompiledContract | undefined): string {
  if (!c) return "";
  const p = CONTRACT_PACKS.get(c.contractRef)!;
  return `\n\n## Output contract\n\`${c.contractRef}\`${
    c.required ? " (required)" : " (optional)"
  }: ${p.summary} Put one artifact of kind \`${p.artifactKind}\` in output.artifacts, for example:\n\`\`\`json\n${
    JSON.stringify(p.example)
  }\n\`\`\``;
}

function dependencySection(deps: readonly UserDependency[] | undefined): string {
  if (!deps?.length) return "";
  return `\n\n## Needs from the user\n${
    deps.map((d) =>
      `- \`${d.contextKey}\` (${d.reason}): ${d.message} Set it in \`context\` when acknowledging.`
    ).join("\n")
  }`;
}

function standardStep(ctx: Ctx, step: WorkflowStep, path: string, role?: string): CompiledStep {
  const blocks = step.promptBlocks;
  if (blocks) {
    for (const ref of referencedSnippets(blocks)) {
      if (!SNIPPETS.has(ref)) {
        ctx.issues.push({
          path: `${path}.promptBlocks`,
          message: `unknown snippet ref \`${ref}\`; known refs: ${known(SNIPPETS.keys())}`,
        });
      }
    }
  }
  const withFeatures = blocks && ctx.stepConstraints.length > 0
    ? { ...blocks, constraints: [...(blocks.constraints ?? []), ...ctx.stepConstraints] }
    : blocks;
  const base = step.prompt ?? renderPromptBlocks(withFeatures ?? {});
  const guidance = step.guidance?.length
    ? `\n\n## Guidance\n${step.guidance.map((g) => `- ${g}`).join("\n")}`
    : "";
  const contract = contractOf(ctx, step.outputContract ?? step.output, `${path}.outputContract`);
  const compiled: CompiledStep = {
    kind: "step",
    id: step.id,
    title: step.title,
    promptTemplate: base + guidance + functionSection(ctx.file, step.functionReferences) +
      assessmentSection(ctx, step, path) + dependencySection(step.userDependencies) +
      contractSection(contract),
    requireConfirmation: confirmation(step.requireConfirmation),
  };
  const effectiveRole = step.agentRole ?? role;
  if (effectiveRole !== undefined) compiled.agentRole = effectiveRole;
  if (step.runCondition !== undefined) compiled.runCondition = step.runCondition;
  if (step.promptFragments?.length) {
    compiled.fragments = step.promptFragments.map((f) =>
      f.when !== undefined ? { when: f.when, text: f.text } : { text: f.text }
    );
  }
  if (contract) compiled.outputContract = contract;
  if (step.validationCriteria !== undefined) compiled.validation = step.validationCriteria;
  if (step.userDependencies?.length) compiled.userDependencies = step.userDependencies;
  return compiled;
}

function parallelStep(ctx: Ctx, step: WorkflowStep, path: string, role?: string): CompiledStep {
  const describe = (d: NonNullable<WorkflowStep["parallelDelegations"]>[number]) => {
    const args = Object.entries(d.args ?? {}).map(([k, v]) =>
      `${k} = ${typeof v === "string" ? v : JSON.stringify(v)}`
    );
    const mapping = Object.entries(d.contextMapping ?? {}).map(([k, v]) => `${v} ← ${k}`);
    const extras = [
      d.goal ? `goal: ${d.goal}` : "",
      args.length ? `args: ${args.join(", ")}` : "",
      mapping.length ? `context: ${mapping.join(", ")}` : "",
      d.modelTier ? `model tier: ${d.modelTier}` : "",
    ].filter(Boolean);
    return `- \`${d.workflowId}\`${extras.length ? ` (${extras.join("; ")})` : ""}`;
  };
  const delegations = step.parallelDelegations ?? [];
  const always = delegations.filter((d) => d.runCondition === undefined);
  const base = [
    "Run these delegations. Use parallel subagents if your environment supports delegation; otherwise run each one yourself, one after another. Then synthesize their results yourself.",
    ...always.map(describe),
  ].join("\n");
  const compiled = standardStep(ctx, { ...step, prompt: base }, path, role);
  const conditional = delegations.filter((d) => d.runCondition !== undefined).map((d) => ({
    when: d.runCondition as Condition,
    text: describe(d),
  }));
  if (conditional.length) compiled.fragments = [...(compiled.fragments ?? []), ...conditional];
  return compiled;
}

function probeStep(
  ctx: Ctx,
  id: string,
  title: string,
  capability: Capability,
  runCondition?: Condition,
): CompiledStep {
  const contract = contractOf(
    ctx,
    { contractRef: "wr.contracts.capability_observation" },
    "capabilities",
  )!;
  const step: CompiledStep = {
    kind: "step",
    id,
    title,
    promptTemplate: probePrompt(capability),
    requireConfirmation: false,
    outputContract: contract,
    probe: capability,
  };
  if (runCondition) step.runCondition = runCondition;
  return step;
}

function substituteArgs(text: string, args: Record<string, unknown>): string {
  return text.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (whole, name: string) => {
    if (!(name in args)) return whole;
    const v = args[name];
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}

function mapSteps(nodes: CompiledNode[], fn: (s: CompiledStep) => CompiledStep): CompiledNode[] {
  return nodes.map((n) => n.kind === "step" ? fn(n) : { ...n, body: mapSteps(n.body, fn) });
}

function expandTemplate(ctx: Ctx, step: WorkflowStep, path: string, role?: string): CompiledNode[] {
  const call = step.templateCall!;
  const args = call.args ?? {};
  if (call.templateId === CAPABILITY_PROBE_TEMPLATE) {
    const capability = args.capability;
    if (!isMember(CAPABILITIES, capability)) {
      ctx.issues.push({
        path: `${path}.templateCall.args.capability`,
        message:
          "`wr.templates.capability_probe` needs `capability`: `delegation` or `web_browsing`",
      });
      return [];
    }
    return [probeStep(ctx, step.id, step.title, capability, step.runCondition)];
  }
  const routines = ctx.options.routines ?? new Map();
  const byTemplate = new Map<string, WorkflowFile>();
  for (const r of routines.values()) {
    const t = routineTemplateId(r.id);
    if (t) byTemplate.set(t, r);
  }
  const routine = byTemplate.get(call.templateId);
  if (!routine) {
    ctx.issues.push({
      path: `${path}.templateCall.templateId`,
      message: `unknown template \`${call.templateId}\`; known templates: ${
        known([CAPABILITY_PROBE_TEMPLATE, ...byTemplate.keys()])
      }`,
    });
    return [];
  }
  if (ctx.routineStack.includes(routine.id)) {
    ctx.issues.push({
      path: `${path}.templateCall.templateId`,
      message: `template cycle: ${[...ctx.routineStack, routine.id].join(" -> ")}`,
    });
    return [];
  }
  ctx.routineStack.push(routine.id);
  const inner = compileSequence(
    { ...ctx, file: routine },
    routine.steps,
    `${path}.templateCall(${routine.id})`,
    routine.agentRole ?? role,
  );
  ctx.routineStack.pop();
  const argText = Object.entries(args).map(([k, v]) =>
    `${k} = ${typeof v === "string" ? v : JSON.stringify(v)}`
  );
  const header = [
    `This step runs the routine \`${routine.id}\` (${routine.name})${
      argText.length ? ` with ${argText.join(", ")}` : ""
    }.`,
    ...(routine.metaGuidance?.length
      ? ["", "## Routine guidance", ...routine.metaGuidance.map((g) => `- ${g}`)]
      : []),
  ].join("\n") + "\n\n";
  let first = true;
  return mapSteps(inner, (s) => {
    const out: CompiledStep = {
      ...s,
      id: `${step.id}--${s.id}`,
      title: `${step.title}: ${s.title}`,
      promptTemplate: (first ? header : "") + substituteArgs(s.promptTemplate, args),
    };
    first = false;
    if (s.fragments) {
      out.fragments = s.fragments.map((f) => ({ ...f, text: substituteArgs(f.text, args) }));
    }
    if (step.runCondition) {
      out.runCondition = s.runCondition
        ? { and: [step.runCondition, s.runCondition] }
        : step.runCondition;
    }
    return out;
  }).map((n) => n.kind === "loop" ? { ...n, id: `${step.id}--${n.id}` } : n);
}

function compileLoop(
  ctx: Ctx,
  step: WorkflowStep,
  path: string,
  role: string | undefined,
  bodies: Map<string, WorkflowStep>,
): CompiledLoop | null {
  const cfg = step.loop!;
  const loop: CompiledLoop["loop"] = {
    type: cfg.type,
    maxIterations: cfg.maxIterations,
    iterationVar: cfg.iterationVar ?? "currentIteration",
    itemVar: cfg.itemVar ?? "currentItem",
    indexVar: cfg.indexVar ?? "currentIndex",
  };
  if (cfg.type === "for") loop.count = cfg.count;
  else if (cfg.type === "forEach") loop.items = cfg.items;
  else {
    const source = cfg.conditionSource;
    if (source?.kind === "artifact_contract") {
      if (source.contractRef !== "wr.contracts.loop_control") {
        ctx.issues.push({
          path: `${path}.loop.conditionSource.contractRef`,
          message: CONTRACT_PACKS.has(source.contractRef)
            ? `a loop decision comes from \`wr.contracts.loop_control\`, not \`${source.contractRef}\``
            : `unknown contract \`${source.contractRef}\`; known contracts: ${
              known(CONTRACT_PACKS.keys())
            }`,
        });
      } else ctx.contracts.add(source.contractRef);
      loop.artifact = source.loopId !== undefined
        ? { contractRef: source.contractRef, loopId: source.loopId }
        : { contractRef: source.contractRef };
    } else if (source?.kind === "context_variable") loop.condition = source.condition;
    else if (cfg.condition) loop.condition = cfg.condition;
  }
  let body: CompiledNode[];
  if (typeof step.body === "string") {
    const target = bodies.get(step.body);
    if (!target) {
      ctx.issues.push({
        path: `${path}.body`,
        message: `body \`${step.body}\` is not a top-level step id of this workflow`,
      });
      return null;
    }
    body = compileSequence(ctx, [target], `${path}.body(${step.body})`, role, bodies);
  } else body = compileSequence(ctx, step.body ?? [], `${path}.body`, role, bodies);
  const compiled: CompiledLoop = { kind: "loop", id: step.id, title: step.title, loop, body };
  if (step.runCondition !== undefined) compiled.runCondition = step.runCondition;
  return compiled;
}

function compileSequence(
  ctx: Ctx,
  steps: readonly WorkflowStep[],
  path: string,
  role: string | undefined,
  bodies: Map<string, WorkflowStep> = new Map(),
): CompiledNode[] {
  const out: CompiledNode[] = [];
  steps.forEach((step, i) => {
    const at = `${path}[${i}]`;
    if (step.type === "loop") {
      const loop = compileLoop(ctx, step, at, role, bodies);
      if (loop) out.push(loop);
    } else if (step.type === "parallel") out.push(parallelStep(ctx, step, at, role));
    else if (step.templateCall) out.push(...expandTemplate(ctx, step, at, role));
    else out.push(standardStep(ctx, step, at, role));
  });
  return out;
}

function collectIds(nodes: readonly CompiledNode[], out: string[]): string[] {
  for (const n of nodes) {
    out.push(n.id);
    if (n.kind === "loop") collectIds(n.body, out);
  }
  return out;
}

/** Compiles a validated workflow file; fails with issues for problems the schema cannot see. */
export function compileWorkflow(
  file: WorkflowFile,
  options: CompileOptions = {},
): { ok: true; compiled: CompiledWorkflow } | { ok: false; issues: WorkflowIssue[] } {
  const issues: WorkflowIssue[] = [];
  const idCheck = checkWorkflowId(file.id);
  if (idCheck.status === "invalid") issues.push({ path: "id", message: idCheck.reason });
  const seen = new Map<string, number>();
  file.steps.forEach((step, i) => {
    const first = seen.get(step.id);
    if (first !== undefined) {
      issues.push({
        path: `steps[${i}].id`,
        message:
          `duplicate step id \`${step.id}\` (first at steps[${first}]): give each step its own id`,
      });
    } else seen.set(step.id, i);
  });
  if (issues.length > 0) return { ok: false, issues };

  const metaGuidance = [...(file.metaGuidance ?? [])];
  const capabilities: CompiledWorkflow["capabilities"] = { ...(file.capabilities ?? {}) };
  const stepConstraints: string[] = [];
  const features = [...new Set(file.features ?? [])];
  features.forEach((id, i) => {
    const feature = FEATURES.get(id);
    if (!feature) {
      issues.push({
        path: `features[${i}]`,
        message: `unknown feature \`${id}\`; known features: ${known(FEATURES.keys())}`,
      });
      return;
    }
    metaGuidance.push(feature.metaGuidance);
    if (feature.stepConstraint) stepConstraints.push(feature.stepConstraint);
    if (feature.prefers) capabilities[feature.prefers] ??= "preferred";
  });

  // Top-level steps named as a loop's `body` run only inside that loop.
  const bodyRefs = new Set<string>();
  const scan = (steps: readonly WorkflowStep[]) => {
    for (const s of steps) {
      if (typeof s.body === "string") bodyRefs.add(s.body);
      else if (Array.isArray(s.body)) scan(s.body);
    }
  };
  scan(file.steps);
  const bodies = new Map(file.steps.filter((s) => bodyRefs.has(s.id)).map((s) => [s.id, s]));
  const ctx: Ctx = {
    file,
    options,
    issues,
    contracts: new Set(),
    stepConstraints,
    routineStack: [file.id],
  };
  const steps = compileSequence(
    ctx,
    file.steps.filter((s) => !bodyRefs.has(s.id)),
    "steps",
    file.agentRole,
    bodies,
  );
  const probes: CompiledStep[] = [];
  // Probes run web_browsing first: the order is inside pinned hashes.
  for (const capability of [...CAPABILITIES].reverse()) {
    if (capabilities[capability] === "required") {
      probes.push(
        probeStep(ctx, `capability-probe-${capability}`, `Check ${capability}`, capability),
      );
    }
  }
  const all = [...probes, ...steps];
  const ids = collectIds(all, []);
  const dupes = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
  for (const id of dupes) {
    issues.push({
      path: "steps",
      message:
        `step id \`${id}\` is used more than once after loops and templates are expanded: rename one`,
    });
  }
  if (all.length === 0) {
    issues.push({ path: "steps", message: "the workflow has no runnable step" });
  }
  if (issues.length > 0) return { ok: false, issues };
  const contracts: CompiledWorkflow["contracts"] = {};
  for (const ref of [...ctx.contracts].sort()) {
    const p = CONTRACT_PACKS.get(ref)!;
    contracts[ref] = {
      artifactKind: p.artifactKind,
      schema: packJsonSchema(p),
      example: p.example,
    };
  }
  const compiled: CompiledWorkflow = {
    format: COMPILED_FORMAT,
    id: file.id,
    kind: isRoutineId(file.id) ? "routine" : "workflow",
    name: file.name,
    description: file.description,
    version: file.version,
    metaGuidance,
    capabilities,
    features,
    contracts,
    steps: all,
  };
  const rec = file.recommendedPreferences;
  if (rec) {
    const autonomy = rec.autonomy ?? rec.recommendedAutonomy;
    const riskPolicy = rec.riskPolicy ?? rec.recommendedRiskPolicy;
    compiled.recommendedPreferences = {
      ...(autonomy ? { autonomy } : {}),
      ...(riskPolicy ? { riskPolicy } : {}),
    };
  }
  return { ok: true, compiled };
}

/**
 * Reads a stored compiled workflow of any format as the current one: format-1 snapshots (flat
 * steps, no kinds) still run.
 */
export function normalizeCompiled(stored: CompiledWorkflow): CompiledWorkflow {
  if ((stored as { format: number }).format !== 1) return stored;
  const old = stored as unknown as Omit<CompiledWorkflow, "steps"> & {
    steps: Omit<CompiledStep, "kind">[];
  };
  return {
    ...old,
    format: COMPILED_FORMAT,
    kind: "workflow",
    capabilities: {},
    features: [],
    contracts: {},
    steps: old.steps.map((s) => ({ kind: "step", ...s })),
  };
}

/** The `workflowHash` of a compiled workflow. */
export function workflowHash(compiled: CompiledWorkflow): Promise<string> {
  return hashJson(compiled);
}
