/**
 * Whose tasks a connection may see. Runs are global to a database by design (any member may
 * read any run; `engine/access/team_policy.ts` says who may write), but tasks are a per-requestor
 * protocol surface: over HTTP, where many clients share one server, `tasks/list`, `tasks/get`,
 * `tasks/update`, `tasks/cancel` and `tasks/result` answer only the requestor's tasks; any other
 * is "no such task". An authenticated requestor is its principal, and its tasks are the runs the
 * principal started, read from the store, so they are the same on every replica and in every
 * MCP session of it. An unauthenticated one is an MCP session (or every session-less request
 * together), remembered by the process that serves it. Over stdio, one client per process, a
 * connection has no owner and sees every run.
 * @module
 */
import type { RunListing, StoreReader } from "../../engine/model/ports.ts";
import type { Principal } from "../../engine/access/principal.ts";

/** Runs an in-memory owner keeps, at most (the oldest is forgotten first). */
const MAX_OWNED = 10_000;

/** A page of a requestor's runs, newest first. */
export interface OwnedPage {
  /** The runs (a run since removed is skipped). */
  listings: RunListing[];
  /** Whether there are more after them. */
  more: boolean;
}

/** The runs one requestor started. */
export interface TaskOwner {
  /** Whether the run was started by this requestor. */
  owns(store: StoreReader, runId: string): Promise<boolean>;
  /** Notes a run this requestor started (a principal's runs say so themselves). */
  adopt(runId: string): void;
  /** A page of the runs it started, newest first. */
  page(store: StoreReader, at: { offset: number; limit: number }): Promise<OwnedPage>;
}

/** An unauthenticated requestor (an MCP session) that has started nothing yet. */
export function createTaskOwner(max = MAX_OWNED): TaskOwner {
  const runs = new Set<string>();
  return {
    owns: (_store, runId) => Promise.resolve(runs.has(runId)),
    adopt(runId) {
      runs.delete(runId);
      runs.add(runId);
      if (runs.size > max) runs.delete(runs.values().next().value!);
    },
    async page(store, { offset, limit }) {
      const owned = [...runs].reverse();
      const ids = owned.slice(offset, offset + limit);
      const listings = await Promise.all(ids.map((runId) => store.getRunListing(runId)));
      return {
        listings: listings.flatMap((l) => l ? [l] : []),
        more: owned.length > offset + limit,
      };
    },
  };
}

/** An authenticated requestor: the runs `principal` started, as the store records them. */
export function principalTaskOwner(principal: Principal): TaskOwner {
  const { subject } = principal;
  return {
    owns: async (store, runId) => (await store.getRun(runId))?.owner?.subject === subject,
    adopt: () => {},
    async page(store, { offset, limit }) {
      const listings = await store.listRuns({ offset, limit: limit + 1, ownedBy: subject });
      return { listings: listings.slice(0, limit), more: listings.length > limit };
    },
  };
}
