/**
 * The interpreter: which step is pending, given a compiled workflow, a run state and context.
 * A run state is a small value stored on each node, so every decision is local to one node
 * and never needs the run's history.
 * @module
 */
import type { CompiledStep, CompiledWorkflow } from "./compile.ts";
import { evaluateCondition } from "./conditions.ts";
import { fillPlaceholders } from "./render.ts";

/**
 * Where a run stands: `pc` is the index of the pending step, or `steps.length` once complete.
 * Versioned so later control flow (loop frames) can extend it without ambiguity.
 */
export interface RunState {
  /** State format version. */
  v: 1;
  /** Index of the pending step; equal to the step count when the run is complete. */
  pc: number;
}

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
  /** Whether the agent must confirm with the user before acknowledging. */
  requireConfirmation: boolean;
}

function firstRunnable(
  compiled: CompiledWorkflow,
  from: number,
  context: Record<string, unknown>,
): number {
  let pc = from;
  while (pc < compiled.steps.length) {
    const step = compiled.steps[pc] as CompiledStep;
    if (!step.runCondition || evaluateCondition(step.runCondition, context)) break;
    pc++;
  }
  return pc;
}

/** The state at the start of a run. */
export function initialState(
  compiled: CompiledWorkflow,
  context: Record<string, unknown>,
): RunState {
  return { v: 1, pc: firstRunnable(compiled, 0, context) };
}

/** The state after the pending step of `state` is acknowledged. */
export function stateAfterAck(
  compiled: CompiledWorkflow,
  state: RunState,
  context: Record<string, unknown>,
): RunState {
  return {
    v: 1,
    pc: firstRunnable(compiled, Math.min(state.pc + 1, compiled.steps.length), context),
  };
}

/** Whether the run has no pending step left. */
export function isComplete(compiled: CompiledWorkflow, state: RunState): boolean {
  return state.pc >= compiled.steps.length;
}

/** The pending step of a state, rendered for a context; `null` when the run is complete. */
export function pendingStep(
  compiled: CompiledWorkflow,
  state: RunState,
  context: Record<string, unknown>,
): PendingStep | null {
  const step = compiled.steps[state.pc];
  if (!step) return null;
  const pending: PendingStep = {
    stepId: step.id,
    title: step.title,
    prompt: fillPlaceholders(step.promptTemplate, context),
    requireConfirmation: step.requireConfirmation,
  };
  if (step.agentRole !== undefined) pending.agentRole = step.agentRole;
  return pending;
}

/** Counts the steps at or after `pc` that could still run (an upper bound; conditions may skip). */
export function remainingSteps(compiled: CompiledWorkflow, state: RunState): number {
  return Math.max(0, compiled.steps.length - state.pc);
}
