/**
 * The pending step as an agent reads it: the compiled step at a run state, rendered for the
 * context, with its gates as fields (`interpreter.ts` says which step is pending).
 * @module
 */
import type { CompiledAssessment, CompiledStep, CompiledWorkflow } from "./compiled.ts";
import { evaluateCondition } from "./conditions.ts";
import { type NotesRule, notesRules } from "./notes_rules.ts";
import { fillPlaceholders, missingPlaceholders } from "./render.ts";
import type { UserDependency } from "./schema.ts";
import { CAPABILITIES, type Capability } from "../model/vocabulary.ts";
import { currentStep, effectiveContext, loopsOf, readState, type RunState } from "./interpreter.ts";

/** The step an agent should do now, rendered for the current context. */
export interface PendingStep {
  /** Step id. */
  stepId: string;
  /** Step title. */
  title: string;
  /** Prompt with placeholders filled. */
  prompt: string;
  /** Role the agent should take, when the workflow sets one. */
  agentRole?: string;
  /** Present when the agent must confirm with the user before acknowledging. */
  requireConfirmation?: true;
  /** The output contract the acknowledgement must satisfy. */
  outputContract?: { contractRef: string; required: boolean; example: Record<string, unknown> };
  /** The innermost enclosing loop, when the step is inside one. */
  loop?: { loopId: string; iteration: number; maxIterations: number };
  /** The assessments the acknowledgement must carry. */
  assessments?: { assessmentId: string; dimensions: CompiledAssessment["dimensions"] }[];
  /** Present when notes may be left out (an output contract, or `notesOptional`). */
  notesOptional?: true;
  /** Context keys the acknowledgement must set. */
  requiredContext?: string[];
  /** Context keys only the user can supply. */
  userDependencies?: { key: string; reason: UserDependency["reason"]; message: string }[];
  /** What the notes must contain, rule by rule (those that apply in this context). */
  notesRules?: NotesRule[];
  /** Assessment levels that keep the step pending until followed up. */
  followUps?: { level: string; assessmentId?: string; guidance: string }[];
}

const FALLBACK: Record<Capability, string> = {
  delegation:
    "Delegation was observed to be unavailable on this branch: do any delegated or parallel work yourself, one part after another, and note in your notes that the parallel path was not applied.",
  web_browsing:
    "Web browsing was observed to be unavailable on this branch: rely on local sources and what the user provides, and mark any claim that needed the web as unverified.",
};

/** The pending step of a state, rendered for a context; `null` when the run is complete. */
export function pendingStep(
  compiled: CompiledWorkflow,
  state: RunState,
  context: Record<string, unknown>,
): PendingStep | null {
  return renderPending(compiled, state, context)?.pending ?? null;
}

/**
 * {@linkcode pendingStep} with the placeholders its prompt had no value for (each rendered as
 * `(not provided: name)`), in order, once each.
 */
export function renderPending(
  compiled: CompiledWorkflow,
  state: RunState,
  context: Record<string, unknown>,
): { pending: PendingStep; missing: string[] } | null {
  const s = readState(state);
  const step = currentStep(compiled, s);
  if (!step) return null;
  const ctx = effectiveContext(compiled, s, context);
  const parts = [step.promptTemplate];
  for (const f of step.fragments ?? []) {
    if (!f.when || evaluateCondition(f.when, ctx)) parts.push(f.text);
  }
  for (const cap of CAPABILITIES) {
    // A preferred capability degrades; a required one only gets here under never-stop.
    if (compiled.capabilities?.[cap] !== undefined && s.caps?.[cap] === "unavailable") {
      parts.push(`Note: ${FALLBACK[cap]}`);
    }
  }
  const confirm = step.requireConfirmation;
  const template = parts.join("\n\n");
  const pending: PendingStep = {
    stepId: step.id,
    title: step.title,
    prompt: fillPlaceholders(template, ctx),
  };
  if (typeof confirm === "boolean" ? confirm : evaluateCondition(confirm, ctx)) {
    pending.requireConfirmation = true;
  }
  if (step.agentRole !== undefined) pending.agentRole = step.agentRole;
  if (step.outputContract) {
    pending.outputContract = {
      contractRef: step.outputContract.contractRef,
      required: step.outputContract.required,
      example: compiled.contracts?.[step.outputContract.contractRef]?.example ?? {},
    };
  }
  if (step.assessments) {
    pending.assessments = step.assessments.map((a) => ({
      assessmentId: a.id,
      dimensions: a.dimensions,
    }));
  }
  if (notesOptional(step)) pending.notesOptional = true;
  Object.assign(pending, gateFields(step, ctx));
  if (s.frames.length > 0) {
    const loop = loopsOf(compiled, s.frames).at(-1)!;
    pending.loop = {
      loopId: loop.id,
      iteration: s.frames.at(-1)!.it,
      maxIterations: loop.loop.maxIterations,
    };
  }
  return { pending, missing: missingPlaceholders(template, ctx) };
}

/** The gates of a step besides its contract and assessments, as fields (only those it has). */
function gateFields(step: CompiledStep, ctx: Record<string, unknown>): Partial<PendingStep> {
  const out: Partial<PendingStep> = {};
  if (step.requiredContext?.length) out.requiredContext = step.requiredContext;
  if (step.userDependencies?.length) {
    out.userDependencies = step.userDependencies.map((d) => ({
      key: d.contextKey,
      reason: d.reason,
      message: d.message,
    }));
  }
  const rules = step.validation === undefined ? [] : notesRules(step.validation, ctx);
  if (rules.length > 0) out.notesRules = rules;
  if (step.consequences?.length) {
    out.followUps = step.consequences.map((c) => ({
      level: c.anyEqualsLevel,
      ...(c.forAssessment !== undefined ? { assessmentId: c.forAssessment } : {}),
      guidance: c.guidance,
    }));
  }
  return out;
}

/**
 * Whether an acknowledgement of `step` may leave out notes: marked so, or its output is
 * checked another way (an output contract, a DeepWork job step's declared outputs).
 */
export function notesOptional(step: CompiledStep): boolean {
  return step.notesOptional === true || step.outputContract !== undefined ||
    step.job !== undefined;
}
