/**
 * The compiler: a validated workflow file becomes the compiled form that runs are pinned to.
 * Templates (routines) are expanded, features applied, snippets and contract packs resolved,
 * capability probes injected, so everything a run needs is inside it and its hash identifies
 * behaviour exactly.
 * @module
 */
import { CONTRACT_PACKS, packJsonSchema } from "../gates/contracts.ts";
import type { Condition, WorkflowFile, WorkflowStep } from "./schema.ts";
import type { WorkflowIssue } from "./parse.ts";
import { CAPABILITIES, type Capability, isMember } from "../model/vocabulary.ts";
import {
  COMPILED_FORMAT,
  type CompiledContract,
  type CompiledLoop,
  type CompiledNode,
  type CompiledStep,
  type CompiledWorkflow,
} from "./compiled.ts";
import { referencedSnippets, renderPromptBlocks } from "./render.ts";
import { compileGates, requiredContextIssues } from "./gates.ts";
import {
  contractSection,
  DELEGATION_PREAMBLE,
  delegationLine,
  dependencySection,
  functionSection,
  guidanceSection,
  knownIds,
  routineHeader,
  substituteArgs,
  SYNTHESIS_PROMPT,
} from "./prompt_sections.ts";
import { headerIssues, loopBodies, treeIssues } from "./workflow_checks.ts";
import { compileVerify, verifySection } from "./verify_block.ts";
import {
  CAPABILITY_PROBE_TEMPLATE,
  FEATURES,
  probePrompt,
  routineTemplateId,
  SNIPPETS,
} from "./library.ts";

/** What the compiler may reference besides the file itself. */
export interface CompileOptions {
  /** Routines by id, for `templateCall`. */
  routines?: ReadonlyMap<string, WorkflowFile>;
}

/** Whether an id names a routine (`<namespace>.routine-<name>`). */
export function isRoutineId(id: string): boolean {
  return /^[a-z][a-z0-9_-]*\.routine-/.test(id);
}

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
        knownIds(CONTRACT_PACKS.keys())
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

function standardStep(ctx: Ctx, step: WorkflowStep, path: string, role?: string): CompiledStep {
  const blocks = step.promptBlocks;
  if (blocks) {
    for (const ref of referencedSnippets(blocks)) {
      if (!SNIPPETS.has(ref)) {
        ctx.issues.push({
          path: `${path}.promptBlocks`,
          message: `unknown snippet ref \`${ref}\`; known refs: ${knownIds(SNIPPETS.keys())}`,
        });
      }
    }
  }
  const withFeatures = blocks && ctx.stepConstraints.length > 0
    ? { ...blocks, constraints: [...(blocks.constraints ?? []), ...ctx.stepConstraints] }
    : blocks;
  const base = step.prompt ?? renderPromptBlocks(withFeatures ?? {});
  const contract = contractOf(ctx, step.outputContract ?? step.output, `${path}.outputContract`);
  const gates = compileGates(ctx.file, step, path);
  ctx.issues.push(...gates.issues);
  const verify = compileVerify(step, path);
  ctx.issues.push(...verify.issues);
  const compiled: CompiledStep = {
    kind: "step",
    id: step.id,
    title: step.title,
    promptTemplate: base + guidanceSection(step.guidance) +
      functionSection(ctx.file, step.functionReferences) + gates.assessmentText +
      dependencySection(step.userDependencies) + gates.contextText + contractSection(contract) +
      verifySection(verify.verify),
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
  if (verify.verify) compiled.verify = verify.verify;
  return Object.assign(compiled, gates.fields);
}

function parallelStep(ctx: Ctx, step: WorkflowStep, path: string, role?: string): CompiledStep[] {
  const delegations = step.parallelDelegations ?? [];
  const always = delegations.filter((d) => d.runCondition === undefined);
  const base = [DELEGATION_PREAMBLE, ...always.map(delegationLine)].join("\n");
  const compiled = standardStep(ctx, { ...step, prompt: base, notesOptional: true }, path, role);
  const conditional = delegations.filter((d) => d.runCondition !== undefined).map((d) => ({
    when: d.runCondition as Condition,
    text: delegationLine(d),
  }));
  if (conditional.length) compiled.fragments = [...(compiled.fragments ?? []), ...conditional];
  compiled.delegations = delegations.map(({ workflowId, ...rest }) => ({ workflowId, ...rest }));
  const synthesis = standardStep(
    ctx,
    {
      id: `${step.id}-synthesis`,
      title: `${step.title}: synthesis`,
      prompt: step.synthesis?.prompt ?? SYNTHESIS_PROMPT,
      ...(step.synthesis?.outputContract ? { outputContract: step.synthesis.outputContract } : {}),
      ...(step.runCondition !== undefined ? { runCondition: step.runCondition } : {}),
      requireConfirmation: false,
    },
    `${path}.synthesis`,
    role,
  );
  synthesis.synthesisOf = step.id;
  return [compiled, synthesis];
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
        knownIds([CAPABILITY_PROBE_TEMPLATE, ...byTemplate.keys()])
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
  const header = routineHeader(routine, args);
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
              knownIds(CONTRACT_PACKS.keys())
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
    } else if (step.type === "parallel") out.push(...parallelStep(ctx, step, at, role));
    else if (step.templateCall) out.push(...expandTemplate(ctx, step, at, role));
    else out.push(standardStep(ctx, step, at, role));
  });
  return out;
}

/** The file's features applied: guidance, step constraints and preferred capabilities. */
function applyFeatures(file: WorkflowFile, issues: WorkflowIssue[]) {
  const metaGuidance = [...(file.metaGuidance ?? [])];
  const capabilities: CompiledWorkflow["capabilities"] = { ...(file.capabilities ?? {}) };
  const stepConstraints: string[] = [];
  const features = [...new Set(file.features ?? [])];
  features.forEach((id, i) => {
    const feature = FEATURES.get(id);
    if (!feature) {
      issues.push({
        path: `features[${i}]`,
        message: `unknown feature \`${id}\`; known features: ${knownIds(FEATURES.keys())}`,
      });
      return;
    }
    metaGuidance.push(feature.metaGuidance);
    if (feature.stepConstraint) stepConstraints.push(feature.stepConstraint);
    if (feature.prefers) capabilities[feature.prefers] ??= "preferred";
  });
  return { metaGuidance, capabilities, stepConstraints, features };
}

/** The contract packs a workflow uses, resolved, in id order. */
function resolveContracts(refs: ReadonlySet<string>): CompiledWorkflow["contracts"] {
  const contracts: CompiledWorkflow["contracts"] = {};
  for (const ref of [...refs].sort()) {
    const p = CONTRACT_PACKS.get(ref)!;
    contracts[ref] = {
      artifactKind: p.artifactKind,
      schema: packJsonSchema(p),
      example: p.example,
    };
  }
  return contracts;
}

function recommendedOf(file: WorkflowFile): CompiledWorkflow["recommendedPreferences"] {
  const rec = file.recommendedPreferences;
  if (!rec) return undefined;
  const autonomy = rec.autonomy ?? rec.recommendedAutonomy;
  const riskPolicy = rec.riskPolicy ?? rec.recommendedRiskPolicy;
  return { ...(autonomy ? { autonomy } : {}), ...(riskPolicy ? { riskPolicy } : {}) };
}

/** Compiles a validated workflow file; fails with issues for problems the schema cannot see. */
export function compileWorkflow(
  file: WorkflowFile,
  options: CompileOptions = {},
): { ok: true; compiled: CompiledWorkflow } | { ok: false; issues: WorkflowIssue[] } {
  const issues = headerIssues(file);
  if (issues.length > 0) return { ok: false, issues };
  const { metaGuidance, capabilities, stepConstraints, features } = applyFeatures(file, issues);
  const bodies = loopBodies(file);
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
    file.steps.filter((s) => !bodies.has(s.id)),
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
  issues.push(...treeIssues(all), ...requiredContextIssues(all));
  if (issues.length > 0) return { ok: false, issues };
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
    contracts: resolveContracts(ctx.contracts),
    steps: all,
  };
  const recommended = recommendedOf(file);
  if (recommended) compiled.recommendedPreferences = recommended;
  if (file.tokenBudget !== undefined) compiled.tokenBudget = file.tokenBudget;
  return { ok: true, compiled };
}
