/**
 * Runs as MCP tasks on the wire: the `_meta` every execution result carries (the task, its
 * `_workflow.progress` object and each completed step's result), the task object of the 2025-11-25
 * design, the `DetailedTask` of the 2026-07-28 extension (`io.modelcontextprotocol/tasks`),
 * both `CreateTaskResult` shapes, and the elicitation form for a step's user-only
 * dependencies. Pure builders over the engine's {@linkcode TaskView}.
 * @module
 */
import { type CallToolResult, RELATED_TASK_META_KEY } from "npm:@modelcontextprotocol/server@2.4.0";
import type { TaskView, UserQuestion } from "../engine/mod.ts";

/** The 2026-07-28 tasks extension's id. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
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
  options: { relatedTask: boolean },
): Record<string, unknown> {
  return metaOf(view, options, view.progress);
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
  options: { relatedTask: boolean },
): Record<string, unknown> {
  return metaOf(view, options, view.progress && windowed(view.progress));
}

type Progress = NonNullable<TaskView["progress"]>;

/** The plan cut to {@linkcode CALL_PLAN_STEPS} steps around its current step, without its note. */
function windowed(progress: Progress): Omit<Progress, "note"> {
  const { note: _note, steps, omitted, ...rest } = progress;
  let from = 0;
  if (steps.length > CALL_PLAN_STEPS) {
    const at = steps.findIndex((s) => s.status === "current" || s.status === "blocked");
    const current = at < 0 ? (omitted?.after ? 0 : steps.length) : at;
    from = Math.max(0, Math.min(current - 2, steps.length - CALL_PLAN_STEPS));
  }
  const to = Math.min(steps.length, from + CALL_PLAN_STEPS);
  const before = (omitted?.before ?? 0) + from;
  const after = (omitted?.after ?? 0) + steps.length - to;
  return {
    ...rest,
    steps: steps.slice(from, to),
    ...(before + after > 0 ? { omitted: { before, after } } : {}),
  };
}

function metaOf(
  view: TaskView,
  options: { relatedTask: boolean },
  progress: Omit<Progress, "note"> | null,
): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    "_workflow.task": { taskId: view.taskId, status: view.status },
  };
  if (options.relatedTask) meta[RELATED_TASK_META_KEY] = { taskId: view.taskId };
  if (progress) meta["_workflow.progress"] = progress;
  const listed = new Set(progress?.steps.map((s) => s.name));
  for (const [stepId, result] of Object.entries(view.results)) {
    if (listed.has(stepId)) meta[`_workflow.result.${stepId}`] = result;
  }
  return meta;
}

/** The task object of the 2025-11-25 design (`tasks/get`, `tasks/list`, notifications). */
export function legacyTask(view: TaskView): Record<string, unknown> {
  return {
    taskId: view.taskId,
    status: view.status,
    statusMessage: view.statusMessage,
    createdAt: view.createdAt,
    lastUpdatedAt: view.lastUpdatedAt,
    ttl: null,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/** The task fields of the 2026-07-28 extension (`CreateTaskResult` and `DetailedTask`). */
export function extensionTask(view: TaskView): Record<string, unknown> {
  return {
    taskId: view.taskId,
    status: view.status,
    statusMessage: view.statusMessage,
    createdAt: view.createdAt,
    lastUpdatedAt: view.lastUpdatedAt,
    ttlMs: null,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
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

/** The embedded input requests of a task waiting on the user (2026-07-28), or `undefined`. */
export function inputRequestsOf(view: TaskView): Record<string, unknown> | undefined {
  if (view.status !== "input_required" || !view.questions.some((q) => !q.secret)) return undefined;
  return {
    [USER_INPUT_KEY]: { method: "elicitation/create", params: elicitationForm(view.questions) },
  };
}

/** A 2026-07-28 `DetailedTask`: the task, and its result, error or input requests. */
export function detailedTask(
  view: TaskView,
  outcome: { result?: CallToolResult; error?: { code: number; message: string; data?: unknown } },
): Record<string, unknown> {
  const detailed: Record<string, unknown> = {
    ...extensionTask(view),
    _meta: taskMeta(view, { relatedTask: false }),
  };
  if (view.status === "completed" && outcome.result) detailed.result = outcome.result;
  if (view.status === "failed" && outcome.error) detailed.error = outcome.error;
  const inputRequests = inputRequestsOf(view);
  if (inputRequests) detailed.inputRequests = inputRequests;
  return detailed;
}

/**
 * The `CreateTaskResult` answering a task-augmented start: the task (nested under `task` in the
 * 2025-11-25 design, flat with `resultType: "task"` in the 2026-07-28 extension), with the
 * start's own answer as text a host may hand the model at once, since the run goes on only as
 * the agent acknowledges its steps.
 */
export function createTaskResult(
  view: TaskView,
  at: { modern: boolean; answer: CallToolResult },
): Record<string, unknown> {
  const text = at.answer.content.find((c) => c.type === "text");
  const meta = {
    ...callMeta(view, { relatedTask: !at.modern }),
    ...(text && "text" in text ? { [IMMEDIATE_RESPONSE_KEY]: text.text } : {}),
    "waymark/result": at.answer.structuredContent,
  };
  return at.modern
    ? { resultType: "task", ...extensionTask(view), _meta: meta }
    : { task: legacyTask(view), _meta: meta };
}
