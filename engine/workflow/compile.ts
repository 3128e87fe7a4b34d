/**
 * The compiler: a validated workflow file becomes the compiled form that runs are pinned to.
 * Everything a run needs is inside it, so its hash identifies behaviour exactly.
 * @module
 */
import { hashJson } from "../hash.ts";
import type { Condition, WorkflowFile } from "./schema.ts";
import type { WorkflowIssue } from "./parse.ts";
import { renderPromptBlocks } from "./render.ts";
import { checkWorkflowId } from "./ids.ts";

/** Version of the compiled form; part of the hash so a format change never aliases. */
export const COMPILED_FORMAT = 1;

/** A step as runs see it. */
export interface CompiledStep {
  /** Step id, unique within the workflow. */
  id: string;
  /** Human title. */
  title: string;
  /** Prompt text with `{{var}}` placeholders still in it. */
  promptTemplate: string;
  /** The effective role: the step's own, else the workflow's. */
  agentRole?: string;
  /** Whether the agent must check with the user before acknowledging. */
  requireConfirmation: boolean;
  /** Run only when this holds for the context at the time the step comes up. */
  runCondition?: Condition;
}

/** A compiled workflow: the unit that is hashed, pinned and stored. */
export interface CompiledWorkflow {
  /** Compiled format version. */
  format: typeof COMPILED_FORMAT;
  /** Workflow id. */
  id: string;
  /** Human name. */
  name: string;
  /** What the workflow is for. */
  description: string;
  /** The author's version string. */
  version: string;
  /** Guidance shown once, at start. */
  metaGuidance: string[];
  /** Most automation the author recommends. */
  recommendedPreferences?: { autonomy?: string; riskPolicy?: string };
  /** Steps in order. */
  steps: CompiledStep[];
}

/** Compiles a validated workflow file; fails with issues for problems the schema cannot see. */
export function compileWorkflow(
  file: WorkflowFile,
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
  const steps = file.steps.map((step): CompiledStep => {
    const body = step.prompt ?? renderPromptBlocks(step.promptBlocks ?? {});
    const guidance = step.guidance?.length
      ? `\n\n## Guidance\n${step.guidance.map((g) => `- ${g}`).join("\n")}`
      : "";
    const compiled: CompiledStep = {
      id: step.id,
      title: step.title,
      promptTemplate: body + guidance,
      requireConfirmation: step.requireConfirmation ?? false,
    };
    const role = step.agentRole ?? file.agentRole;
    if (role !== undefined) compiled.agentRole = role;
    if (step.runCondition !== undefined) compiled.runCondition = step.runCondition;
    return compiled;
  });
  const compiled: CompiledWorkflow = {
    format: COMPILED_FORMAT,
    id: file.id,
    name: file.name,
    description: file.description,
    version: file.version,
    metaGuidance: file.metaGuidance ?? [],
    steps,
  };
  if (file.recommendedPreferences) compiled.recommendedPreferences = file.recommendedPreferences;
  return { ok: true, compiled };
}

/** The `workflowHash` of a compiled workflow. */
export function workflowHash(compiled: CompiledWorkflow): Promise<string> {
  return hashJson(compiled);
}
