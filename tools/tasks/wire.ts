/**
 * Runs as MCP tasks on the wire, as every protocol revision carries them: the `_meta` every
 * execution result carries (the task, its `_workflow.progress` object and each completed step's
 * result), the `_meta` of a start answered as a task, and the elicitation form for a step's
 * user-only dependencies. What differs by revision (the task objects, `related-task`) is in
 * `revisions/`. Pure builders over the engine's {@linkcode TaskView}.
 * @module
 */
import type { CallToolResult } from "npm:@modelcontextprotocol/server@2.4.0";
import type { UserQuestion } from "../../engine/run/task_status.ts";
import type { TaskView } from "../../engine/use_cases/task_views.ts";
import type { PlanExcerpt, StepResult } from "../../engine/workflow/plan.ts";

/** How often a host should poll a task: runs move at an agent's pace. */
export const TASK_POLL_INTERVAL_MS = 2_000;
/** The `inputRequests` key of a task's (or a tool call's) question to the user. */
export const USER_INPUT_KEY = "user_input";
/** The 2025-11-25 `_meta` key a host may hand the model while a task runs. */
export const IMMEDIATE_RESPONSE_KEY = "io.modelcontextprotocol/model-immediate-response";

/**
 * The `_meta` a task read carries (`tasks/get`, `tasks/result`): the task, its whole progress plan
 * (up to the engine's window of a long workflow) and every completed step's result in it.
 */
export function taskMeta(
  view: TaskView,
  related: Record<string, unknown> = {},
): Record<string, unknown> {
  return metaOf(view, related, { progress: view.progress, results: view.results });
}

/** The most steps the progress of a tool call's answer lists. */
export const CALL_PLAN_STEPS = 8;

/**
 * The `_meta` of a tool call's answer: the task and a bounded progress object, so an answer's
 * size does not grow with the workflow: at most {@linkcode CALL_PLAN_STEPS} steps around the
 * current one, with `omitted` counting the steps before and after them, and the results of the
 * completed steps among those. The whole plan, its note and every result are `tasks/get`'s.
 */
export function callMeta(
  view: TaskView,
  related: Record<string, unknown> = {},
): Record<string, unknown> {
  return metaOf(view, related, view.excerpt(CALL_PLAN_STEPS));
}

function metaOf(
  view: TaskView,
  related: Record<string, unknown>,
  plan: { progress: PlanExcerpt | null; results: Record<string, StepResult> },
): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    "_workflow.task": { taskId: view.taskId, status: view.status },
    ...related,
  };
  if (plan.progress) meta["_workflow.progress"] = plan.progress;
  // the results are those of the listed steps (the view makes them so)
  for (const [stepId, result] of Object.entries(plan.results)) {
    meta[`_workflow.result.${stepId}`] = result;
  }
  return meta;
}

/** The form that asks the user for the questions' answers (credentials are never asked). */
export function elicitationForm(
  questions: readonly UserQuestion[],
): { mode: "form"; message: string; requestedSchema: Record<string, unknown> } {
  const asked = questions.filter((q) => !q.secret);
  return {
    mode: "form",
    message: `A waymark workflow step needs something only you can give:\n${
      asked.map((q) => `- ${q.contextKey}: ${q.message}`).join("\n")
    }`,
    requestedSchema: {
      type: "object",
      properties: Object.fromEntries(
        asked.map((q) => [q.contextKey, {
          type: q.type,
          title: q.contextKey,
          description: `${q.message} (${q.reason})`,
        }]),
      ),
      required: asked.map((q) => q.contextKey),
    },
  };
}

/**
 * The `_meta` of a `CreateTaskResult` answering a start asked for as a task: the call's, with
 * the start's own answer as text a host may hand the model at once (the run goes on only as the
 * agent acknowledges its steps) and as structured content.
 */
export function startMeta(
  view: TaskView,
  at: { related: Record<string, unknown>; answer: CallToolResult },
): Record<string, unknown> {
  const text = at.answer.content.find((c) => c.type === "text");
  return {
    ...callMeta(view, at.related),
    ...(text && "text" in text ? { [IMMEDIATE_RESPONSE_KEY]: text.text } : {}),
    "waymark/result": at.answer.structuredContent,
  };
}
