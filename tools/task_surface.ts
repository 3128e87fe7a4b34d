/**
 * One connection's view of runs as tasks: each read goes to the store (so runs started by other
 * processes are tasks too, and nothing is held per task), and the status this connection last
 * saw of each run is kept, so a 2025-11-25 client is sent `notifications/tasks/status` when a
 * call through this connection changes it.
 * @module
 */
import type { Server, ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import {
  type EngineDeps,
  readTask,
  type TaskStatus,
  type TaskView,
  taskView,
} from "../engine/mod.ts";
import { speaksLegacyTasks } from "./client.ts";
import { legacyTask } from "./task_wire.ts";

/** Runs whose last status a connection keeps, at most (the oldest is forgotten first). */
const MAX_TRACKED = 1_000;

/** A connection's tasks. */
export interface TaskSurface {
  /**
   * A run's task with its progress, or `null` when there is no such run. Its status is noted;
   * when it differs from the one last noted, a 2025-11-25 client is told.
   */
  observe(runId: string, ctx: ServerContext): Promise<TaskView | null>;
  /** Notes a run's status before a call that may change it (once per run; 2025-11-25 only). */
  seed(runId: string, ctx: ServerContext): Promise<void>;
}

/** The tasks of one connection to `server`. */
export function createTaskSurface(
  server: Server,
  deps: Pick<EngineDeps, "store">,
): TaskSurface {
  const seen = new Map<string, TaskStatus>();
  const note = (runId: string, status: TaskStatus): TaskStatus | undefined => {
    const before = seen.get(runId);
    seen.delete(runId);
    seen.set(runId, status);
    if (seen.size > MAX_TRACKED) seen.delete(seen.keys().next().value!);
    return before;
  };
  return {
    async observe(runId, ctx) {
      const view = await readTask(deps, runId);
      if (!view) return null;
      const before = note(runId, view.status);
      if (before !== undefined && before !== view.status && speaksLegacyTasks(server, ctx)) {
        await server.notification({
          method: "notifications/tasks/status",
          params: legacyTask(view) as never,
        }).catch(() => {});
      }
      return view;
    },
    async seed(runId, ctx) {
      if (seen.has(runId) || !speaksLegacyTasks(server, ctx)) return;
      const listing = await deps.store.getRunListing(runId);
      if (listing) note(runId, (await taskView(deps, listing)).status);
    },
  };
}
