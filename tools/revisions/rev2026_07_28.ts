/**
 * Protocol revision 2026-07-28: no handshake (each request carries the client's capabilities in
 * its `_meta` envelope), and runs are tasks through the `io.modelcontextprotocol/tasks`
 * extension, on requests that declare it: the extension among the server's capabilities, the
 * flat `CreateTaskResult` (`resultType: "task"`), the `DetailedTask` of `tasks/get` (with the
 * result, error or input requests inlined), an empty acknowledgement for `tasks/cancel`, and no
 * status notifications (clients poll).
 * @module
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  MissingRequiredClientCapabilityError,
  type ServerContext,
} from "npm:@modelcontextprotocol/server@2.4.0";
import type { TaskView } from "../../engine/use_cases/task_views.ts";
import {
  elicitationForm,
  startMeta,
  TASK_POLL_INTERVAL_MS,
  taskMeta,
  USER_INPUT_KEY,
} from "../tasks/wire.ts";
import type { Revision, TaskOutcome } from "./revision.ts";

/** The tasks extension's id. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The task fields of the extension (`CreateTaskResult` and `DetailedTask`). */
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

/** The embedded input requests of a task waiting on the user, or `undefined`. */
export function inputRequestsOf(view: TaskView): Record<string, unknown> | undefined {
  if (view.status !== "input_required" || !view.questions.some((q) => !q.secret)) return undefined;
  return {
    [USER_INPUT_KEY]: { method: "elicitation/create", params: elicitationForm(view.questions) },
  };
}

/** A `DetailedTask`: the task, and its result, error or input requests. */
export function detailedTask(view: TaskView, outcome: TaskOutcome): Record<string, unknown> {
  const detailed: Record<string, unknown> = { ...extensionTask(view), _meta: taskMeta(view) };
  if (view.status === "completed" && outcome.result) detailed.result = outcome.result;
  if (view.status === "failed" && outcome.error) detailed.error = outcome.error;
  const inputRequests = inputRequestsOf(view);
  if (inputRequests) detailed.inputRequests = inputRequests;
  return detailed;
}

/** The capabilities in the request's envelope. */
function declared(ctx: ServerContext): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown>;
  return envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

/** Whether the request declared the tasks extension. */
function declaresTasks(ctx: ServerContext): boolean {
  const extensions = (declared(ctx) as { extensions?: Record<string, unknown> })?.extensions;
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Protocol revision 2026-07-28. */
export const REV_2026_07_28: Revision = {
  version: "2026-07-28",
  capabilities: (base) => ({ ...base, extensions: { ...base.extensions, [TASKS_EXTENSION]: {} } }),
  clientCapabilities: (_server, ctx) => declared(ctx),
  listedTool: (tool) => tool,
  wantsTask: (_server, { ctx }) => declaresTasks(ctx),
  relatedTask: () => ({}),
  createTaskResult: (view, answer) => ({
    resultType: "task",
    ...extensionTask(view),
    _meta: startMeta(view, { related: {}, answer }),
  }),
  requireTasks: (_server, ctx) => {
    if (declaresTasks(ctx)) return;
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as never,
      `Declare the ${TASKS_EXTENSION} extension in this request's client capabilities to use tasks.`,
    );
  },
  getTask: async (view, outcome) => detailedTask(view, await outcome()),
  cancelEnded: () => ({}),
  cancelled: () => ({}),
  taskStatusChanged: () => Promise.resolve(),
  beforeTaskChange: () => Promise.resolve(),
};
