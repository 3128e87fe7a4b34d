/**
 * The store's writes: events appended with their digests and projected in the same
 * transaction, one transaction per `write` call (storage faults are mapped in `faults.ts`).
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import { type DomainEvent, sessionLabel, type Store, type StoreWriter } from "../../engine/mod.ts";
import { contextId, loggedEvents } from "./context_refs.ts";
import type { SqlDialect } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";
import { project } from "./projections.ts";
import { createReader, type ReaderShared } from "./reader.ts";
import { digest } from "./rows.ts";
import type { Database } from "./schema.ts";

/** What the writer needs besides the database: the dialect and the clock. */
export interface WriterOptions {
  /** The dialect's parts. */
  dialect: SqlDialect;
  /** Current time, for event timestamps. */
  now: () => string;
  /** What readers on this database share. */
  shared: ReaderShared;
}

/** Which contexts of the nodes `events` create are already stored, as `run:id` (key lookups). */
async function knownContexts(tx: Executor, events: readonly DomainEvent[]): Promise<Set<string>> {
  const known = new Set<string>();
  for (const event of events) {
    if (event.kind !== "node_created") continue;
    const id = contextId(event.context);
    const row = await tx.selectFrom("contexts").select("context_id")
      .where("run_id", "=", event.runId).where("context_id", "=", id).executeTakeFirst();
    if (row) known.add(`${event.runId}:${id}`);
  }
  return known;
}

/** Appends events and updates projections, all inside `tx`. */
async function append(
  tx: Executor,
  events: readonly DomainEvent[],
  options: WriterOptions,
): Promise<void> {
  if (events.length === 0) return;
  const at = options.now();
  const known = await knownContexts(tx, events);
  const logged = loggedEvents(events, (runId, id) => known.has(`${runId}:${id}`));
  const rows = logged.map((event) => {
    const payload = JSON.stringify(event);
    return {
      session_id: event.sessionId,
      run_id: "runId" in event ? event.runId : null,
      kind: event.kind,
      payload,
      digest: digest(`${event.kind}\n${payload}`),
      at,
    };
  });
  // One statement for the whole batch: inside the write lock the sequence numbers are
  // consecutive in row order, so the sorted numbers follow the events.
  const inserted = await tx.insertInto("events").values(rows).returning("seq").execute();
  const seqs = inserted.map((r) => Number(r.seq)).sort((a, b) => a - b);
  const search = options.dialect.search;
  const writes = options.dialect.sendAhead?.(tx) ?? tx;
  for (const [i, event] of logged.entries()) {
    await project({ tx: writes, search, seq: seqs[i]!, at }, event);
  }
  const updated = await tx.updateTable("sessions")
    .set((eb) => ({ updated_at: at, event_count: eb("event_count", "+", events.length) }))
    .where("session_id", "=", events[0]!.sessionId).executeTakeFirst();
  // A session removed (by `waymark gc`) after the call read its node: roll back, never leave
  // half a session behind.
  if (Number(updated.numUpdatedRows) === 0) {
    throw new Error(`session ${sessionLabel(events[0]!.sessionId)} is no longer stored`);
  }
}

/**
 * The store port's `write`: `fn` runs in one transaction with reads and `append` (the dialect's,
 * which may run it again from the start when the database refused a try).
 */
export function createWrite(db: Kysely<Database>, options: WriterOptions): Store["write"] {
  const search = options.dialect.search;
  return <T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T> =>
    options.dialect.transact(db, (tx) =>
      fn({
        ...createReader({ ex: tx, search }, options.shared),
        append: (events) => append(tx, events, options),
      }));
}
