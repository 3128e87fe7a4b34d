/**
 * What an acknowledgement must satisfy before a run advances: the step's output contract, its
 * validation criteria, its user-only dependencies and, on a capability probe, the observed
 * capability. Problems become blockers (guided, full_auto_stop_on_user_deps) or critical gaps
 * (full_auto_never_stop); the same closed-set reasons drive both. Pure.
 * @module
 */
import type { z } from "npm:zod@4.6.7";
import { CONTRACT_PACKS, packForArtifactKind } from "./contracts.ts";
import type { Artifact } from "./events.ts";
import { BLOCKER_CODES } from "./responses.ts";
import type { CompiledStep, CompiledWorkflow } from "./workflow/compile.ts";
import { evaluateCondition } from "./workflow/conditions.ts";
import type { ValidationCriteria } from "./workflow/schema.ts";
import type { Capability, CapabilityStatus } from "./vocabulary.ts";

/** A blocker code. */
export type BlockerCode = typeof BLOCKER_CODES[number];

/** What a blocker points at (a closed set). */
export type BlockerPointer =
  | { kind: "context_key"; key: string }
  | { kind: "output_contract"; contractRef: string }
  | { kind: "capability"; capability: Capability }
  | { kind: "workflow_step"; stepId: string };

/** One reason an acknowledgement cannot advance (or, under never-stop, a critical gap). */
export interface Blocker {
  /** Closed-set code. */
  code: BlockerCode;
  /** What it points at. */
  pointer: BlockerPointer;
  /** What is wrong (at most 512 bytes). */
  message: string;
  /** How to fix it (at most 1024 bytes). */
  suggestedFix?: string;
}

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

function ruleHolds(
  rule: Extract<ValidationCriteria, { type: string }>,
  notes: string,
): boolean {
  switch (rule.type) {
    case "contains":
      return notes.toLowerCase().includes((rule.value ?? "").toLowerCase());
    case "regex":
      try {
        return new RegExp(rule.pattern ?? "", rule.flags).test(notes);
      } catch {
        return false;
      }
    case "length": {
      const n = [...notes].length;
      return (rule.min === undefined || n >= rule.min) && (rule.max === undefined || n <= rule.max);
    }
    case "schema": {
      let value: unknown;
      try {
        value = JSON.parse(notes);
      } catch {
        return false;
      }
      const schema = rule.schema ?? {};
      if (schema.type === "object") {
        if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
        const required = Array.isArray(schema.required) ? schema.required : [];
        return required.every((k) => typeof k === "string" && k in (value as object));
      }
      return true;
    }
  }
}

function ruleMessage(rule: Extract<ValidationCriteria, { type: string }>): string {
  if (rule.message) return rule.message;
  switch (rule.type) {
    case "contains":
      return `the notes must mention \`${rule.value}\``;
    case "regex":
      return `the notes must match /${rule.pattern}/${rule.flags ?? ""}`;
    case "length":
      return `the notes must be ${rule.min ?? 0}..${rule.max ?? "∞"} characters long`;
    case "schema":
      return "the notes must be JSON matching the step's schema";
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
    return (criteria.and as ValidationCriteria[]).flatMap((c) => failedValidation(c, input));
  }
  if ("or" in criteria) {
    const all = (criteria.or as ValidationCriteria[]).map((c) => failedValidation(c, input));
    return all.some((f) => f.length === 0) ? [] : [`one of: ${all.flat().join(" | ")}`];
  }
  if ("not" in criteria) {
    return failedValidation(criteria.not as ValidationCriteria, input).length === 0
      ? ["the notes match a pattern they must not match"]
      : [];
  }
  const rule = criteria as Extract<ValidationCriteria, { type: string }>;
  if (rule.condition && !evaluateCondition(rule.condition, context)) return [];
  return ruleHolds(rule, notes) ? [] : [ruleMessage(rule)];
}

/** What an acknowledgement brought and what is wrong with it. */
export interface AckReview {
  /** Problems: blockers, or gaps under never-stop. Unordered; see {@linkcode normalizeBlockers}. */
  problems: Blocker[];
  /** Valid capability observations. */
  observations: { capability: Capability; status: CapabilityStatus; remediation?: string }[];
  /** Valid divergence markers. */
  divergences: { reason: string; summary: string; relatedStepId?: string }[];
  /** Valid gaps the agent disclosed. */
  agentGaps: { severity: string; summary: string; contextKey?: string }[];
  /** Artifacts of a known kind that failed their schema but were not required. */
  warnings: { code: string; message: string }[];
}

/** Reviews an acknowledgement of `step` against its requirements. */
export function reviewAck(
  compiled: CompiledWorkflow,
  step: CompiledStep,
  input: {
    artifacts: readonly Artifact[];
    notesMarkdown?: string;
    context: Record<string, unknown>;
  },
): AckReview {
  const review: AckReview = {
    problems: [],
    observations: [],
    divergences: [],
    agentGaps: [],
    warnings: [],
  };
  const contract = step.outputContract;
  let contractSatisfied = false;
  const contractErrors: string[] = [];
  for (const artifact of input.artifacts) {
    const p = packForArtifactKind(artifact.kind);
    if (!p) continue;
    const parsed = p.schema.safeParse(artifact);
    const isContract = contract?.artifactKind === artifact.kind;
    if (!parsed.success) {
      if (isContract) contractErrors.push(describeZod(parsed.error));
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
    if (isContract) contractSatisfied = true;
    const value = parsed.data as Record<string, unknown>;
    if (p.id === "wr.contracts.capability_observation") {
      const o: AckReview["observations"][number] = {
        capability: value.capability as Capability,
        status: value.status as CapabilityStatus,
      };
      if (typeof value.remediation === "string") o.remediation = value.remediation;
      review.observations.push(o);
    } else if (p.id === "wr.contracts.workflow_divergence") {
      const d: AckReview["divergences"][number] = {
        reason: value.reason as string,
        summary: value.summary as string,
      };
      if (typeof value.relatedStepId === "string") d.relatedStepId = value.relatedStepId;
      review.divergences.push(d);
    } else if (p.id === "wr.contracts.gaps") {
      for (const g of value.gaps as AckReview["agentGaps"]) review.agentGaps.push(g);
    }
  }
  if (contract && !contractSatisfied) {
    const p = CONTRACT_PACKS.get(contract.contractRef)!;
    const example = JSON.stringify(p.example);
    const pointer = { kind: "output_contract", contractRef: contract.contractRef } as const;
    if (contractErrors.length > 0) {
      if (contract.required) {
        review.problems.push({
          code: "INVALID_REQUIRED_OUTPUT",
          pointer,
          message: `The \`${p.artifactKind}\` artifact does not match \`${p.id}\`: ${
            contractErrors[0]
          }.`,
          suggestedFix:
            `Fix the artifact in output.artifacts and acknowledge again with the new ackToken, for example ${example}`,
        });
      }
    } else if (contract.required) {
      review.problems.push({
        code: "MISSING_REQUIRED_OUTPUT",
        pointer,
        message:
          `Step \`${step.id}\` requires an artifact of kind \`${p.artifactKind}\` (\`${p.id}\`) in output.artifacts; none was sent.`,
        suggestedFix:
          `Add it to output.artifacts and acknowledge again with the new ackToken, for example ${example}`,
      });
    }
  }
  if (step.validation !== undefined) {
    const pointer = { kind: "workflow_step", stepId: step.id } as const;
    const notes = input.notesMarkdown;
    if (notes === undefined || notes.trim() === "") {
      review.problems.push({
        code: "MISSING_REQUIRED_OUTPUT",
        pointer,
        message:
          `Step \`${step.id}\` checks its notes against validation criteria; output.notesMarkdown is missing.`,
        suggestedFix:
          "Put the step's result in output.notesMarkdown and acknowledge again with the new ackToken.",
      });
    } else {
      for (const failed of failedValidation(step.validation, { notes, context: input.context })) {
        review.problems.push({
          code: "INVALID_REQUIRED_OUTPUT",
          pointer,
          message: `Step \`${step.id}\`: ${failed}.`,
          suggestedFix:
            "Revise output.notesMarkdown so it meets the step's criteria, then acknowledge again with the new ackToken.",
        });
      }
    }
  }
  for (const dep of step.userDependencies ?? []) {
    const value = input.context[dep.contextKey];
    if (value === undefined || value === null || value === "") {
      review.problems.push({
        code: "USER_ONLY_DEPENDENCY",
        pointer: { kind: "context_key", key: dep.contextKey },
        message: `${dep.message} (${dep.reason}; only the user can provide \`${dep.contextKey}\`).`,
        suggestedFix:
          `Ask the user, then acknowledge again with context.${dep.contextKey} set. Under full_auto_never_stop this becomes a recorded gap instead.`,
      });
    }
  }
  if (step.probe) {
    const capability = step.probe;
    const observed = review.observations.find((o) => o.capability === capability);
    const required = compiled.capabilities[capability] === "required";
    if (observed && required && observed.status !== "available") {
      const unavailable = observed.status === "unavailable";
      review.problems.push({
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
      });
    }
  }
  return review;
}

/** An example acknowledgement that would clear the given blockers. */
export function examplePayload(
  compiled: CompiledWorkflow,
  blockers: readonly Blocker[],
): {
  context?: Record<string, unknown>;
  output?: { notesMarkdown?: string; artifacts?: unknown[] };
} {
  const example: {
    context?: Record<string, unknown>;
    output?: { notesMarkdown?: string; artifacts?: unknown[] };
  } = {};
  for (const b of blockers) {
    if (b.pointer.kind === "output_contract") {
      const c = compiled.contracts[b.pointer.contractRef];
      if (c) {
        example.output ??= {};
        (example.output.artifacts ??= []).push(c.example);
      }
    } else if (b.pointer.kind === "context_key") {
      (example.context ??= {})[b.pointer.key] = "<value from the user>";
    } else if (b.pointer.kind === "workflow_step") {
      (example.output ??= {}).notesMarkdown = "<the step's result, meeting its criteria>";
    } else if (b.pointer.kind === "capability") {
      example.output ??= {};
      (example.output.artifacts ??= []).push({
        kind: "wr.capability_observation",
        capability: b.pointer.capability,
        status: "available",
      });
    }
  }
  return example;
}
