/**
 * A run seen as an MCP task, as pure functions: its task id (the run's own `run_…` label, so
 * a host can match a task to `session.runId` in any answer), its status, a pure function of
 * the run, and the questions only the user can answer at its tip.
 *
 * Status: `failed` when the session is corrupt (or its pinned workflow is gone), `cancelled`
 * once aborted, `completed` once some branch reached the end (a run's status never goes back),
 * `input_required` while the tip's pending step lacks a user-only dependency the engine would
 * block on (not under `full_auto_never_stop`, which never blocks), `working` otherwise.
 * @module
 */
import { missingUserDependencies } from "../gates/enforce.ts";
import { parseRunLabel, runLabel } from "../model/ids.ts";
import type { NodeRecord, RunListing } from "../model/ports.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { currentStep, effectiveContext } from "../workflow/interpreter.ts";
import type { UserDependency } from "../workflow/schema.ts";
import type { TaskStatus } from "../model/vocabulary.ts";

/** The task id of a run: its `run_…` label. */
export function taskIdOf(runId: string): string {
  return runLabel(runId);
}

/** The run (hex) a task id names, or `null` when it names none. */
export function runIdOfTask(taskId: string): string | null {
  return parseRunLabel(taskId);
}

/** A question only the user can answer: a missing user-only dependency of the tip's step. */
export interface UserQuestion {
  /** The context key the answer is stored under. */
  contextKey: string;
  /** Why only the user can give it. */
  reason: UserDependency["reason"];
  /** What to ask. */
  message: string;
  /** The answer's type in a form: an approval is a yes/no, anything else text. */
  type: "boolean" | "string";
  /** A credential: never asked through the client (the agent asks the user itself). */
  secret: boolean;
}

/** What a task's status depends on. */
export interface TaskFacts {
  /** The run. */
  run: Pick<RunListing, "status" | "corrupt">;
  /** Its pinned workflow, or `null` when it is missing. */
  compiled: CompiledWorkflow | null;
  /** The preferred tip, or `null` when the run has none stored. */
  tip: Pick<NodeRecord, "state" | "context" | "preferences"> | null;
}

/** The user-only dependencies the tip's pending step lacks, as questions. */
export function userQuestions(
  compiled: CompiledWorkflow,
  tip: Pick<NodeRecord, "state" | "context">,
): UserQuestion[] {
  const step = currentStep(compiled, tip.state);
  if (!step?.userDependencies?.length) return [];
  const context = effectiveContext(compiled, tip.state, tip.context);
  return missingUserDependencies(step.userDependencies, context).map((dep) => ({
    contextKey: dep.contextKey,
    reason: dep.reason,
    message: dep.message,
    type: dep.reason === "user_approval" ? "boolean" : "string",
    secret: dep.reason === "user_credentials",
  }));
}

/** The status of a run as a task. */
export function taskStatus(facts: TaskFacts): TaskStatus {
  const { run, compiled, tip } = facts;
  if (run.corrupt || !compiled) return "failed";
  if (run.status === "aborted") return "cancelled";
  if (run.status === "complete") return "completed";
  if (!tip || tip.preferences.autonomy === "full_auto_never_stop") return "working";
  return userQuestions(compiled, tip).length > 0 ? "input_required" : "working";
}

/** Whether a status is final: a task in it never changes again. */
export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}
