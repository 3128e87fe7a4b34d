/**
 * The gates of a step besides its output contract, compiled: whether notes are optional, the
 * assessments the acknowledgement must carry with their follow-ups, and the context keys that
 * must be set. Resolved against the workflow (or the routine that declares them), checked for
 * what the schema cannot see, and rendered into the step's prompt (so into the hash).
 * @module
 */
import type { CompiledAssessment, CompiledNode, CompiledStep } from "./compiled.ts";
import { conditionVars } from "./conditions.ts";
import type { WorkflowIssue } from "./parse.ts";
import { placeholderNames } from "./render.ts";
import type { Assessment, WorkflowFile, WorkflowStep } from "./schema.ts";

/** A step's gates: its compiled fields, their prompt sections and the compile issues. */
export interface StepGates {
  /** Fields for the compiled step (only those the step uses, so other hashes stay as they were). */
  fields: Pick<CompiledStep, "notesOptional" | "assessments" | "consequences" | "requiredContext">;
  /** The assessment section of the prompt ("" when none). */
  assessmentText: string;
  /** The required-context section of the prompt ("" when none). */
  contextText: string;
  /** What is wrong with the declarations. */
  issues: WorkflowIssue[];
}

function knownList(ids: readonly string[]): string {
  return ids.length ? ids.map((id) => `\`${id}\``).join(", ") : "(none)";
}

function resolveRefs(
  file: WorkflowFile,
  step: WorkflowStep,
  path: string,
): { defs: Assessment[]; issues: WorkflowIssue[] } {
  const declared = file.assessments ?? [];
  const byId = new Map(declared.map((a) => [a.id, a]));
  const defs: Assessment[] = [];
  const issues: WorkflowIssue[] = [];
  for (const ref of step.assessmentRefs ?? []) {
    const def = byId.get(ref);
    if (def) defs.push(def);
    else {
      issues.push({
        path: `${path}.assessmentRefs`,
        message: `unknown assessment \`${ref}\`; this workflow's assessments: ${
          knownList([...byId.keys()].sort())
        }`,
      });
    }
  }
  return { defs, issues };
}

function consequenceIssues(step: WorkflowStep, defs: Assessment[], path: string): WorkflowIssue[] {
  const issues: WorkflowIssue[] = [];
  (step.assessmentConsequences ?? []).forEach((c, i) => {
    const at = `${path}.assessmentConsequences[${i}].when`;
    const scope = c.when.forAssessment === undefined
      ? defs
      : defs.filter((d) => d.id === c.when.forAssessment);
    if (c.when.forAssessment !== undefined && scope.length === 0) {
      issues.push({
        path: `${at}.forAssessment`,
        message: `\`${c.when.forAssessment}\` is not one of this step's assessmentRefs: ${
          knownList(step.assessmentRefs ?? [])
        }`,
      });
      return;
    }
    const levels = new Set(scope.flatMap((d) => d.dimensions.flatMap((dim) => dim.levels)));
    if (defs.length > 0 && !levels.has(c.when.anyEqualsLevel)) {
      issues.push({
        path: `${at}.anyEqualsLevel`,
        message: `no dimension it reads has the level \`${c.when.anyEqualsLevel}\`; levels: ${
          knownList([...levels])
        }`,
      });
    }
  });
  return issues;
}

function compiledAssessment(def: Assessment): CompiledAssessment {
  return {
    id: def.id,
    dimensions: def.dimensions.map((d) => ({
      id: d.id,
      levels: d.levels,
      required: d.required ?? true,
    })),
  };
}

function assessmentText(step: WorkflowStep, defs: readonly Assessment[], single: boolean): string {
  if (defs.length === 0) return "";
  const lines = [
    "## Assessment",
    `Rate every dimension below and put one \`wr.assessment\` artifact per assessment in output.artifacts, with exactly one of the listed levels per dimension${
      single ? "" : " and the assessment's id in `assessmentId`"
    }; a missing or unknown rating blocks the acknowledgement.`,
  ];
  for (const def of defs) {
    const dims = Object.fromEntries(
      def.dimensions.map((d) => [d.id, `<${d.levels.join(" | ")}>`]),
    );
    lines.push(
      `- \`${def.id}\`: ${def.purpose}`,
      ...def.dimensions.map((d) =>
        `  - \`${d.id}\` (${d.levels.join(" | ")})${
          d.required === false ? ", optional" : ""
        }: ${d.purpose}`
      ),
      `  Artifact: \`${
        JSON.stringify({ kind: "wr.assessment", assessmentId: def.id, dimensions: dims })
      }\``,
    );
  }
  for (const c of step.assessmentConsequences ?? []) {
    lines.push(
      `If any dimension${
        c.when.forAssessment ? ` of \`${c.when.forAssessment}\`` : ""
      } is \`${c.when.anyEqualsLevel}\`, the step stays pending until you follow up and acknowledge again with a new assessment: ${c.effect.guidance}`,
    );
  }
  return `\n\n${lines.join("\n")}`;
}

function contextText(keys: readonly string[] | undefined): string {
  if (!keys?.length) return "";
  return `\n\n## Context to set\nAcknowledge this step with these keys in \`context\` (unless they are set already); without them it is blocked:\n${
    keys.map((k) => `- \`${k}\``).join("\n")
  }`;
}

/** Compiles a standard step's notes rule, assessments, follow-ups and required context. */
export function compileGates(file: WorkflowFile, step: WorkflowStep, path: string): StepGates {
  const { defs, issues } = resolveRefs(file, step, path);
  issues.push(...consequenceIssues(step, defs, path));
  const fields: StepGates["fields"] = {};
  if (step.notesOptional === true) fields.notesOptional = true;
  if (defs.length > 0) fields.assessments = defs.map(compiledAssessment);
  if (step.assessmentConsequences?.length) {
    fields.consequences = step.assessmentConsequences.map((c) => ({
      anyEqualsLevel: c.when.anyEqualsLevel,
      ...(c.when.forAssessment !== undefined ? { forAssessment: c.when.forAssessment } : {}),
      guidance: c.effect.guidance,
    }));
  }
  if (step.requiredContext?.length) fields.requiredContext = [...new Set(step.requiredContext)];
  return {
    fields,
    assessmentText: assessmentText(step, defs, (step.assessmentRefs ?? []).length === 1),
    contextText: contextText(fields.requiredContext),
    issues,
  };
}

/** Every context path the compiled tree reads: condition variables and placeholders. */
function readPaths(nodes: readonly CompiledNode[], out: Set<string>): Set<string> {
  for (const n of nodes) {
    if (n.runCondition) conditionVars(n.runCondition).forEach((v) => out.add(v));
    if (n.kind === "loop") {
      if (n.loop.condition) conditionVars(n.loop.condition).forEach((v) => out.add(v));
      if (n.loop.items) out.add(n.loop.items);
      if (typeof n.loop.count === "string") out.add(n.loop.count);
      readPaths(n.body, out);
      continue;
    }
    placeholderNames(n.promptTemplate).forEach((v) => out.add(v));
    for (const f of n.fragments ?? []) {
      if (f.when) conditionVars(f.when).forEach((v) => out.add(v));
      placeholderNames(f.text).forEach((v) => out.add(v));
    }
    if (typeof n.requireConfirmation === "object") {
      conditionVars(n.requireConfirmation).forEach((v) => out.add(v));
    }
  }
  return out;
}

function requiredSteps(nodes: readonly CompiledNode[], out: CompiledStep[] = []): CompiledStep[] {
  for (const n of nodes) {
    if (n.kind === "loop") requiredSteps(n.body, out);
    else if (n.requiredContext) out.push(n);
  }
  return out;
}

/**
 * Required context keys that nothing in the workflow reads: a key must be read by a placeholder
 * or a condition (or lie on the path of one), which catches typos before a run blocks on them.
 */
export function requiredContextIssues(all: readonly CompiledNode[]): WorkflowIssue[] {
  const steps = requiredSteps(all);
  if (steps.length === 0) return [];
  const read = [...readPaths(all, new Set())];
  const isRead = (key: string) =>
    read.some((v) => v === key || v.startsWith(`${key}.`) || key.startsWith(`${v}.`));
  return steps.flatMap((s) =>
    s.requiredContext!.filter((k) => !isRead(k)).map((k) => ({
      path: "steps",
      message:
        `step \`${s.id}\` requires context \`${k}\`, which no {{placeholder}} or condition of this workflow reads`,
    }))
  );
}
