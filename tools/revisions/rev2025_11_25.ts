/**
 * Protocol revision 2025-11-25: the client's capabilities are the ones it declared at the
 * `initialize` handshake, and runs are tasks in the revision's own design: the `tasks`
 * capability, `execution` on every listed tool, tool calls augmented with `task`, the task
 * object of `tasks/get`, `tasks/list` and `notifications/tasks/status`, and the `related-task`
 * key on everything about a task.
 * @module
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
} from "npm:@modelcontextprotocol/server@2.4.0";
import type { TaskView } from "../../engine/use_cases/task_views.ts";
import { startMeta, TASK_POLL_INTERVAL_MS, taskMeta } from "../tasks/wire.ts";
import type { Revision } from "./revision.ts";

/** The `tasks` capability: runs listed, cancelled, and started as tasks. */
const TASKS = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** The task object of this design (`tasks/get`, `tasks/list`, status notifications). */
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

const related = (view: TaskView) => ({ [RELATED_TASK_META_KEY]: { taskId: view.taskId } });

/** Protocol revision 2025-11-25. */
export const REV_2025_11_25: Revision = {
  version: "2025-11-25",
  capabilities: (base) => ({ ...base, tasks: TASKS }),
  clientCapabilities: (server) => server.getClientCapabilities(),
  listedTool: (tool, execution) => ({ ...tool, execution }),
  wantsTask: (_server, { params }) => {
    const task = (params as { task?: unknown } | undefined)?.task;
    return task !== null && typeof task === "object";
  },
  relatedTask: related,
  createTaskResult: (view, answer) => ({
    task: legacyTask(view),
    _meta: startMeta(view, { related: related(view), answer }),
  }),
  requireTasks: () => {},
  getTask: (view) => Promise.resolve({ ...legacyTask(view), _meta: taskMeta(view, related(view)) }),
  cancelEnded: (view, taskId) => {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Task ${taskId} is already ${view.status}; it cannot be cancelled.`,
    );
  },
  cancelled: legacyTask,
  taskStatusChanged: async (server, view) => {
    await server.notification({
      method: "notifications/tasks/status",
      params: legacyTask(view) as never,
    }).catch(() => {});
  },
  beforeTaskChange: (note) => note(),
};
