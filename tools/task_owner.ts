/**
 * Whose tasks a connection may see. Runs are global to a database by design (any client may
 * resume any run with its tokens), but tasks are a per-requestor protocol surface: over HTTP,
 * where many clients share one server, `tasks/list`, `tasks/get`, `tasks/update`, `tasks/cancel`
 * and `tasks/result` answer only the tasks whose runs were started through the same requestor
 * (an MCP session; all session-less 2026-07-28 requests are one requestor, since waymark has no
 * authentication); any other is "no such task". Over stdio, one client per process, a
 * connection has no owner and sees every run.
 * @module
 */

/** Runs an owner keeps, at most (the oldest is forgotten first). */
const MAX_OWNED = 10_000;

/** The runs one requestor started. */
export interface TaskOwner {
  /** Whether the run was started by this requestor. */
  owns(runId: string): boolean;
  /** Notes a run this requestor started. */
  adopt(runId: string): void;
  /** The runs it started, newest first. */
  owned(): string[];
}

/** A requestor that has started nothing yet. */
export function createTaskOwner(max = MAX_OWNED): TaskOwner {
  const runs = new Set<string>();
  return {
    owns: (runId) => runs.has(runId),
    adopt(runId) {
      runs.delete(runId);
      runs.add(runId);
      if (runs.size > max) runs.delete(runs.values().next().value!);
    },
    owned: () => [...runs].reverse(),
  };
}
