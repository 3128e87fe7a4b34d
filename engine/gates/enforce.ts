/**
 * What an acknowledgement must satisfy before a run advances: the step's output contract, its
 * notes, assessments and follow-ups (`assessments.ts`), validation criteria, user-only
 * dependencies, required context and, on a capability probe, the observed capability. Problems
 * become blockers (guided, full_auto_stop_on_user_deps) or critical gaps (full_auto_never_stop);
 * the same closed-set reasons drive both. Pure.
 *
 * This module is where the acknowledgement rules are read from; each rule's parts live in:
 *
 * - `workflow/gates.ts`: a step's gates as compiled (optional notes, assessments and their
 *   follow-ups, required context keys), checked when the workflow loads;
 * - `contracts.ts`: the output contract packs and their artifact schemas;
 * - `assessments.ts`: assessments and follow-ups checked on what the ack brings;
 * - `linear_regex.ts`, `json_schema_check.ts`: validation rules' patterns and schemas;
 * - `run/advance.ts`: what a checked ack makes of the node (blocked or advanced, gaps);
 * - `run/record_attempt.ts`: the one write path (tokens, replay, drift, the transaction).
 * @module
 */
import type { z } from "npm:zod@4.6.7";
import { CONTRACT_PACKS, packForArtifactKind } from "./contracts.ts";
import type { Artifact } from "../model/events.ts";
import type { Blocker, BlockerPointer } from "../answers/responses.ts";
import {
  ASSESSMENT_CONTRACT_REF,
  assessmentExample,
  type RecordedAssessment,
  reviewAssessments,
} from "./assessments.ts";
import type { CompiledContract, CompiledStep, CompiledWorkflow } from "../workflow/compiled.ts";
import { evaluateCondition, readVar } from "../workflow/conditions.ts";
import { notesOptional } from "../workflow/pending.ts";
import { ruleMessage } from "../workflow/notes_rules.ts";
import type { UserDependency, ValidationCriteria, ValidationRule } from "../workflow/schema.ts";
import { jsonSchemaProblems } from "./json_schema_check.ts";
import { linearPattern } from "./linear_regex.ts";
import { outputsProblem, type SubmittedOutputs } from "../deepwork/outputs.ts";
import type { Capability, CapabilityStatus } from "../model/vocabulary.ts";

/** Bounds of a blocked response. */
export const BLOCKER_LIMITS = { count: 10, messageBytes: 512, suggestedFixBytes: 1024 } as const;

/** Cuts text to at most `bytes` UTF-8 bytes, on a character boundary, marking the cut. */
export function truncateBytes(text: string, bytes: number): string {
  const encoder = new TextEncoder();
  if (encoder.encode(text).length <= bytes) return text;
  let out = "";
  let used = 0;
  const budget = bytes - 3; // "…" is 3 bytes
  for (const ch of text) {
    const size = encoder.encode(ch).length;
    if (used + size > budget) break;
    out += ch;
    used += size;
  }
  return `${out}…`;
}

function pointerKey(p: BlockerPointer): string {
  switch (p.kind) {
    case "context_key":
      return `${p.kind}\u0000${p.key}`;
    case "output_contract":
      return `${p.kind}\u0000${p.contractRef}`;
    case "capability":
      return `${p.kind}\u0000${p.capability}`;
    case "workflow_step":
      return `${p.kind}\u0000${p.stepId}`;
    case "context_budget":
      return p.kind;
    case "assessment_dimension":
      return `${p.kind}\u0000${p.assessmentId}\u0000${p.dimensionId}`;
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Orders blockers by (code, pointer kind, pointer field, message), drops exact duplicates, keeps
 * at most 10 and bounds each text.
 */
export function normalizeBlockers(blockers: readonly Blocker[]): Blocker[] {
  const seen = new Set<string>();
  const sorted = [...blockers].sort((a, b) =>
    cmp(a.code, b.code) || cmp(pointerKey(a.pointer), pointerKey(b.pointer)) ||
    cmp(a.message, b.message)
  ).filter((b) => {
    const key = `${b.code}\u0000${pointerKey(b.pointer)}\u0000${b.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return sorted.slice(0, BLOCKER_LIMITS.count).map((b) => {
    const out: Blocker = {
      code: b.code,
      pointer: b.pointer,
      message: truncateBytes(b.message, BLOCKER_LIMITS.messageBytes),
    };
    if (b.suggestedFix !== undefined) {
      out.suggestedFix = truncateBytes(b.suggestedFix, BLOCKER_LIMITS.suggestedFixBytes);
    }
    return out;
  });
}

function describeZod(error: z.ZodError): string {
  return error.issues.slice(0, 3).map((i) =>
    `${i.path.length ? i.path.join(".") : "(artifact)"}: ${i.message}`
  ).join("; ");
}

function schemaProblem(schema: Record<string, unknown>, notes: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(notes);
  } catch {
    return "the notes must be JSON matching the step's schema; they are not valid JSON";
  }
  const problems = jsonSchemaProblems(schema, value);
  return problems.length === 0
    ? null
    : `the notes must be JSON matching the step's schema: ${problems.join("; ")}`;
}

/** Why a rule fails on the notes, in the rule's own words when it has them; `null` when it holds. */
function ruleProblem(rule: ValidationRule, notes: string): string | null {
  switch (rule.type) {
    case "contains":
      return notes.toLowerCase().includes(rule.value.toLowerCase()) ? null : ruleMessage(rule);
    case "regex": {
      // Linear time whatever the pattern: a snapshot may carry one no loader ever checked.
      const pattern = linearPattern(rule.pattern, rule.flags);
      if (!pattern.ok) {
        return `the step's pattern /${rule.pattern}/${
          rule.flags ?? ""
        } cannot be evaluated (${pattern.reason}); the workflow must be fixed`;
      }
      return pattern.test(notes) ? null : ruleMessage(rule);
    }
    case "length": {
      const n = [...notes].length;
      const holds = (rule.min === undefined || n >= rule.min) &&
        (rule.max === undefined || n <= rule.max);
      return holds ? null : ruleMessage(rule);
    }
    case "schema": {
      const problem = schemaProblem(rule.schema, notes);
      return problem === null ? null : rule.message ?? problem;
    }
  }
}

/** The failed rules of validation criteria over notes (an empty list when they hold). */
export function failedValidation(
  criteria: ValidationCriteria,
  input: { notes: string; context: Record<string, unknown> },
): string[] {
  const { notes, context } = input;
  if (Array.isArray(criteria)) return criteria.flatMap((c) => failedValidation(c, input));
  if ("and" in criteria) {
    return criteria.and.flatMap((c) => failedValidation(c, input));
  }
  if ("or" in criteria) {
    const all = criteria.or.map((c) => failedValidation(c, input));
    return all.some((f) => f.length === 0) ? [] : [`one of: ${all.flat().join(" | ")}`];
  }
  if ("not" in criteria) {
    return failedValidation(criteria.not, input).length === 0
      ? ["the notes match a pattern they must not match"]
      : [];
  }
  if (criteria.condition && !evaluateCondition(criteria.condition, context)) return [];
  const problem = ruleProblem(criteria, notes);
  return problem === null ? [] : [problem];
}

/** What an acknowledgement brought and what is wrong with it. */
export interface AckReview {
  /** Problems: blockers, or gaps under never-stop. Unordered; see {@linkcode normalizeBlockers}. */
  problems: Blocker[];
  /** The step's assessments that passed their checks. */
  assessments: RecordedAssessment[];
  /** Valid capability observations. */
  observations: { capability: Capability; status: CapabilityStatus; remediation?: string }[];
  /** Valid divergence markers. */
  divergences: { reason: string; summary: string; relatedStepId?: string }[];
  /** Valid gaps the agent disclosed. */
  agentGaps: { severity: string; summary: string; contextKey?: string }[];
  /** Artifacts of a known kind that failed their schema but were not required. */
  warnings: { code: string; message: string }[];
}

/** What an acknowledgement brings besides notes. */
interface AckInput {
  artifacts: readonly Artifact[];
  notesMarkdown?: string;
  context: Record<string, unknown>;
}

/** Records a valid artifact of a pack that carries observations, divergences or gaps. */
function recordArtifact(review: AckReview, packId: string, value: Record<string, unknown>): void {
  if (packId === "wr.contracts.capability_observation") {
    const o: AckReview["observations"][number] = {
      capability: value.capability as Capability,
      status: value.status as CapabilityStatus,
    };
    if (typeof value.remediation === "string") o.remediation = value.remediation;
    review.observations.push(o);
  } else if (packId === "wr.contracts.workflow_divergence") {
    const d: AckReview["divergences"][number] = {
      reason: value.reason as string,
      summary: value.summary as string,
    };
    if (typeof value.relatedStepId === "string") d.relatedStepId = value.relatedStepId;
    review.divergences.push(d);
  } else if (packId === "wr.contracts.gaps") {
    for (const g of value.gaps as AckReview["agentGaps"]) review.agentGaps.push(g);
  }
}

/**
 * Reads the artifacts of known kinds into the review; returns whether the step's contract was
 * met and, when it was not, why its artifacts failed.
 */
function reviewArtifacts(
  review: AckReview,
  contract: CompiledContract | undefined,
  artifacts: readonly Artifact[],
): { satisfied: boolean; errors: string[] } {
  let satisfied = false;
  const errors: string[] = [];
  for (const artifact of artifacts) {
    const p = packForArtifactKind(artifact.kind);
    if (!p) continue;
    const parsed = p.schema.safeParse(artifact);
    const isContract = contract?.artifactKind === artifact.kind;
    if (!parsed.success) {
      if (isContract) errors.push(describeZod(parsed.error));
      else {
        review.warnings.push({
          code: "INVALID_ARTIFACT_IGNORED",
          message: `An artifact of kind \`${artifact.kind}\` does not match \`${p.id}\` (${
            describeZod(parsed.error)
          }) and was not recorded as such.`,
        });
      }
      continue;
    }
    if (isContract) satisfied = true;
    recordArtifact(review, p.id, parsed.data as Record<string, unknown>);
  }
  return { satisfied, errors };
}

function contractProblems(
  step: CompiledStep,
  contract: CompiledContract,
  errors: readonly string[],
): Blocker[] {
  if (!contract.required) return [];
  const p = CONTRACT_PACKS.get(contract.contractRef)!;
  const example = JSON.stringify(p.example);
  const pointer = { kind: "output_contract", contractRef: contract.contractRef } as const;
  if (errors.length > 0) {
    return [{
      code: "INVALID_REQUIRED_OUTPUT",
      pointer,
      message: `The \`${p.artifactKind}\` artifact does not match \`${p.id}\`: ${errors[0]}.`,
      suggestedFix:
        `Fix the artifact in output.artifacts and acknowledge again with the new ackToken, for example ${example}`,
    }];
  }
  return [{
    code: "MISSING_REQUIRED_OUTPUT",
    pointer,
    message:
      `Step \`${step.id}\` requires an artifact of kind \`${p.artifactKind}\` (\`${p.id}\`) in output.artifacts; none was sent.`,
    suggestedFix:
      `Add it to output.artifacts and acknowledge again with the new ackToken, for example ${example}`,
  }];
}

/** Notes that are absent or blank say nothing. */
function hasNotes(input: AckInput): input is AckInput & { notesMarkdown: string } {
  return input.notesMarkdown !== undefined && input.notesMarkdown.trim() !== "";
}

function notesProblems(step: CompiledStep): Blocker[] {
  return [{
    code: "MISSING_REQUIRED_NOTES",
    pointer: { kind: "workflow_step", stepId: step.id },
    message:
      `Step \`${step.id}\` requires notes on the work (output.notesMarkdown); none were sent.`,
    suggestedFix:
      "Add output.notesMarkdown: what you did, the decisions you made and why, what you produced (files, commands, numbers) and what is next; then acknowledge again with the new ackToken.",
  }];
}

function contextKeyProblems(keys: readonly string[], context: Record<string, unknown>): Blocker[] {
  return keys.filter((key) => {
    const value = readVar(context, key);
    return value === undefined || value === null || value === "";
  }).map((key) => ({
    code: "MISSING_CONTEXT_KEY",
    pointer: { kind: "context_key", key },
    message: `This step requires context \`${key}\`, and it is not set.`,
    suggestedFix:
      `Set context.${key} in the next continue_workflow call (with the new ackToken); later steps read it.`,
  }));
}

function validationProblems(
  step: CompiledStep,
  criteria: ValidationCriteria,
  input: AckInput,
): Blocker[] {
  const pointer = { kind: "workflow_step", stepId: step.id } as const;
  const notes = input.notesMarkdown;
  if (notes === undefined || notes.trim() === "") {
    // A step that requires notes is blocked by MISSING_REQUIRED_NOTES already.
    if (!notesOptional(step)) return [];
    return [{
      code: "MISSING_REQUIRED_OUTPUT",
      pointer,
      message:
        `Step \`${step.id}\` checks its notes against validation criteria; output.notesMarkdown is missing.`,
      suggestedFix:
        "Put the step's result in output.notesMarkdown and acknowledge again with the new ackToken.",
    }];
  }
  return failedValidation(criteria, { notes, context: input.context }).map((failed) => ({
    code: "INVALID_REQUIRED_OUTPUT",
    pointer,
    message: `Step \`${step.id}\`: ${failed}.`,
    suggestedFix:
      "Revise output.notesMarkdown so it meets the step's criteria, then acknowledge again with the new ackToken.",
  }));
}

/** The user-only dependencies whose context keys are unset (missing, `null` or empty). */
export function missingUserDependencies(
  deps: readonly UserDependency[],
  context: Record<string, unknown>,
): UserDependency[] {
  return deps.filter((dep) => {
    const value = context[dep.contextKey];
    return value === undefined || value === null || value === "";
  });
}

function dependencyProblems(
  deps: readonly UserDependency[],
  context: Record<string, unknown>,
): Blocker[] {
  return missingUserDependencies(deps, context).map((dep) => ({
    code: "USER_ONLY_DEPENDENCY",
    pointer: { kind: "context_key", key: dep.contextKey },
    message: `${dep.message} (${dep.reason}; only the user can provide \`${dep.contextKey}\`).`,
    suggestedFix:
      `Ask the user, then acknowledge again with context.${dep.contextKey} set. Under full_auto_never_stop this becomes a recorded gap instead.`,
  }));
}

function probeProblems(
  compiled: CompiledWorkflow,
  capability: Capability,
  observations: AckReview["observations"],
): Blocker[] {
  const observed = observations.find((o) => o.capability === capability);
  const required = compiled.capabilities[capability] === "required";
  if (!observed || !required || observed.status === "available") return [];
  const unavailable = observed.status === "unavailable";
  return [{
    code: unavailable ? "REQUIRED_CAPABILITY_UNAVAILABLE" : "REQUIRED_CAPABILITY_UNKNOWN",
    pointer: { kind: "capability", capability },
    message: unavailable
      ? `This workflow requires \`${capability}\`, and the probe found it unavailable.${
        observed.remediation ? ` ${observed.remediation}` : ""
      }`
      : `This workflow requires \`${capability}\`, and the probe could not tell whether it works.`,
    suggestedFix: capability === "web_browsing"
      ? "Install or enable a web-browsing tool (for example a fetch or browser MCP server) and probe again, or provide the needed source material yourself; to go on without it, set preferences.autonomy to full_auto_never_stop (recorded as a critical gap)."
      : "Enable subagents/delegation in your client and probe again; to go on without it, set preferences.autonomy to full_auto_never_stop (recorded as a critical gap).",
  }];
}

/**
 * A job step's `wr.job_outputs` artifact checked by the same structural rules as DeepWork's
 * `finished_step` (files are checked by that profile only).
 */
function jobOutputProblems(step: CompiledStep, artifacts: readonly Artifact[]): Blocker[] {
  const contract = step.outputContract;
  const artifact = artifacts.find((a) => a.kind === contract?.artifactKind);
  if (!artifact || !contract) return [];
  const outputs = artifact.outputs as SubmittedOutputs;
  const problem = outputsProblem(step.job?.outputs ?? [], outputs, step.id);
  if (!problem) return [];
  return [{
    code: "INVALID_REQUIRED_OUTPUT",
    pointer: { kind: "output_contract", contractRef: contract.contractRef },
    message: problem,
    suggestedFix:
      "Fix `outputs` in the wr.job_outputs artifact (names and value types as the step declares) and acknowledge again with the new ackToken.",
  }];
}

/** Reviews an acknowledgement of `step` against its requirements. */
export function reviewAck(
  compiled: CompiledWorkflow,
  step: CompiledStep,
  input: AckInput,
): AckReview {
  const assessed = reviewAssessments(step, input.artifacts);
  const review: AckReview = {
    problems: [...assessed.problems],
    assessments: assessed.recorded,
    observations: [],
    divergences: [],
    agentGaps: [],
    warnings: [],
  };
  const contract = step.outputContract;
  const artifacts = reviewArtifacts(review, contract, input.artifacts);
  if (contract && !artifacts.satisfied) {
    review.problems.push(...contractProblems(step, contract, artifacts.errors));
  } else if (contract && step.job) {
    review.problems.push(...jobOutputProblems(step, input.artifacts));
  }
  if (!notesOptional(step) && !hasNotes(input)) review.problems.push(...notesProblems(step));
  if (step.validation !== undefined) {
    review.problems.push(...validationProblems(step, step.validation, input));
  }
  review.problems.push(...dependencyProblems(step.userDependencies ?? [], input.context));
  review.problems.push(...contextKeyProblems(step.requiredContext ?? [], input.context));
  if (step.probe) {
    review.problems.push(...probeProblems(compiled, step.probe, review.observations));
  }
  return review;
}

/** An example acknowledgement that would clear the given blockers of an acknowledgement of `step`. */
export function examplePayload(
  compiled: CompiledWorkflow,
  blockers: readonly Blocker[],
  step: CompiledStep,
): {
  context?: Record<string, unknown>;
  output?: { notesMarkdown?: string; artifacts?: unknown[] };
} {
  const example: {
    context?: Record<string, unknown>;
    output?: { notesMarkdown?: string; artifacts?: unknown[] };
  } = {};
  let assessed = false;
  for (const b of blockers) {
    const p = b.pointer;
    if (
      p.kind === "assessment_dimension" ||
      (p.kind === "output_contract" && p.contractRef === ASSESSMENT_CONTRACT_REF)
    ) {
      if (assessed) continue;
      assessed = true;
      example.output ??= {};
      (example.output.artifacts ??= []).push(...(step.assessments ?? []).map(assessmentExample));
    } else if (p.kind === "output_contract") {
      const c = compiled.contracts[p.contractRef];
      if (c) {
        example.output ??= {};
        (example.output.artifacts ??= []).push(c.example);
      }
    } else if (p.kind === "context_key") {
      (example.context ??= {})[p.key] = b.code === "USER_ONLY_DEPENDENCY"
        ? "<value from the user>"
        : "<value>";
    } else if (p.kind === "workflow_step") {
      (example.output ??= {}).notesMarkdown = "<the step's result, meeting its criteria>";
    } else if (p.kind === "capability") {
      example.output ??= {};
      (example.output.artifacts ??= []).push({
        kind: "wr.capability_observation",
        capability: p.capability,
        status: "available",
      });
    }
  }
  return example;
}
