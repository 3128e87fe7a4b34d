/**
 * The store's writes: events appended with their digests and projected in the same
 * transaction, one transaction per `write` call (storage faults are mapped in `faults.ts`).
 * @module
 */
import type { Insertable, Kysely } from "npm:kysely@0.29.9";
import type { DomainEvent } from "../../engine/model/events.ts";
import { sessionLabel } from "../../engine/model/ids.ts";
import type { Store, StoreWriter } from "../../engine/model/ports.ts";
import { contextId, loggedEvents } from "./context_refs.ts";
import type { AppendBatch, Seq, SqlDialect } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";
import { prepare, prepareRows } from "./prepared.ts";
import { project } from "./projections.ts";
import { createReader, type ReaderShared } from "./reader.ts";
import { digest } from "./rows.ts";
import { readRunListing } from "./task_reads.ts";
import type { Database } from "./database.ts";

/** What the writer needs besides the database: the dialect and the clock. */
export interface WriterOptions {
  /** The dialect's parts. */
  dialect: SqlDialect;
  /** Current time, for event timestamps. */
  now: () => string;
  /** What readers on this database share. */
  shared: ReaderShared;
}

/**
 * Which contexts of the nodes `events` create are already stored, as `run:id`, and each
 * context's id. A context read from a stored node (see `ReaderShared.storedContexts`) that
 * still hashes to that node's context id is stored: contexts leave only with their session,
 * and a session removed meanwhile fails this append. Others are looked up by key, but for runs
 * this batch starts.
 */
async function knownContexts(
  tx: Executor,
  events: readonly DomainEvent[],
  shared: ReaderShared,
): Promise<{ known: Set<string>; idOf: (context: Record<string, unknown>) => string }> {
  const ids = new Map<object, string>();
  const idOf = (context: Record<string, unknown>) => {
    let id = ids.get(context);
    if (id === undefined) ids.set(context, id = contextId(context));
    return id;
  };
  const known = new Set<string>();
  // a run started in this batch has no context stored yet
  const started = new Set(events.flatMap((e) => e.kind === "run_started" ? [e.runId] : []));
  for (const event of events) {
    if (event.kind !== "node_created") continue;
    const id = idOf(event.context);
    const key = `${event.runId}:${id}`;
    if (known.has(key) || started.has(event.runId)) continue;
    if (
      shared.storedContexts.get(event.context) === key ||
      await storedContext.first(tx, { runId: event.runId, id })
    ) known.add(key);
  }
  return { known, idOf };
}

const storedContext = prepare((db, p: { runId: string; id: string }) =>
  db.selectFrom("contexts").select("context_id")
    .where("run_id", "=", p.runId).where("context_id", "=", p.id)
);

type EventRow = Insertable<Database["events"]>;

const insertEvents = prepareRows(
  ["session_id", "run_id", "kind", "payload", "digest", "at", "position"],
  (db, rows: EventRow[]) =>
    db.insertInto("events").values(rows.map((r) => ({
      session_id: r.session_id,
      run_id: r.run_id,
      kind: r.kind,
      payload: r.payload,
      digest: r.digest,
      at: r.at,
      position: r.position,
    }))).returning(["seq", "position"]),
);

/** Counts appended events; answers the count, which is the last position now given. */
const sessionGrown = prepare((db, p: { sessionId: string; at: string; count: number }) =>
  db.updateTable("sessions")
    .set((eb) => ({ updated_at: p.at, event_count: eb("event_count", "+", p.count) }))
    .where("session_id", "=", p.sessionId).returning("event_count")
);

/**
 * Inserts a batch's rows at their positions in the session's log, answering their sequence
 * numbers in row order: at 1 for the batch that creates the session (its row is projected from
 * that batch and counted after), else one past the session's count, which grows with the
 * insert (a session removed meanwhile has no row: the batch is refused). The dialect's own
 * append may answer numbers still pending (`PendingSeq`).
 */
async function insertRows(
  tx: Executor,
  batch: AppendBatch & { creates: boolean },
  dialect: SqlDialect,
): Promise<Seq[]> {
  const { sessionId, at, rows } = batch;
  if (!batch.creates && dialect.appendToSession) return await dialect.appendToSession(tx, batch);
  let appended: readonly { seq: number; position: number | null }[];
  if (batch.creates) {
    appended = await insertEvents.all(tx, rows.map((r, i) => ({ ...r, position: 1 + i })));
  } else {
    const grown = await sessionGrown.first(tx, { sessionId, at, count: rows.length });
    const first = grown ? Number(grown.event_count) - rows.length + 1 : 0;
    appended = grown
      ? await insertEvents.all(tx, rows.map((r, i) => ({ ...r, position: first + i })))
      : [];
  }
  // A session removed (by `waymark gc`) after the call read its node: roll back, never leave
  // half a session behind.
  if (appended.length !== rows.length) throw new Error(`${batch.label} is no longer stored`);
  // Positions follow the rows: the sequence numbers in position order are the rows'.
  return appended.map((r) => ({ seq: Number(r.seq), position: Number(r.position) }))
    .sort((a, b) => a.position - b.position).map((r) => r.seq);
}

/** Appends events and updates projections, all inside `tx`. */
async function append(
  tx: Executor,
  events: readonly DomainEvent[],
  options: WriterOptions,
): Promise<void> {
  if (events.length === 0) return;
  const at = options.now();
  const { known, idOf } = await knownContexts(tx, events, options.shared);
  const logged = loggedEvents(events, (runId, id) => known.has(`${runId}:${id}`), idOf);
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
  const sessionId = events[0]!.sessionId;
  const creates = events[0]!.kind === "session_created";
  const label = `session ${sessionLabel(sessionId)}`;
  const seqs = await insertRows(tx, { sessionId, label, at, rows, creates }, options.dialect);
  const search = options.dialect.search;
  const writes = options.dialect.sendAhead?.(tx) ?? tx;
  for (const [i, event] of logged.entries()) {
    // a pending number is only ever bound as a parameter (see `ProjectionScope.seq`)
    const seq = seqs[i] as number;
    await project({ tx: writes, search, seq, at, payload: rows[i]!.payload }, event);
  }
  // the batch that created the session counts itself once its row is there
  if (creates) await sessionGrown.execute(tx, { sessionId, at, count: events.length });
}

/**
 * Runs `fn` in one transaction with the store's reads and `append` on it, and `tx` itself (the
 * dialect's `transact`, which may run it again from the start when the database refused a try).
 */
export function inTransaction<T>(
  db: Kysely<Database>,
  options: WriterOptions,
  fn: (tx: StoreWriter, ex: Executor) => Promise<T>,
): Promise<T> {
  const search = options.dialect.search;
  return options.dialect.transact(db, async (tx) => {
    await options.dialect.planWrites?.(tx);
    const readAfter = options.dialect.readAfterCommit;
    return await fn({
      ...createReader({ ex: tx, search }, options.shared),
      append: (events) => append(tx, events, options),
      ...readAfter && {
        runListingAfterCommit: (runId: string) =>
          readRunListing(tx, runId, (query) => readAfter(tx, query)),
      },
    }, tx);
  });
}

/** The store port's `write`: `fn` in one transaction ({@linkcode inTransaction}). */
export function createWrite(db: Kysely<Database>, options: WriterOptions): Store["write"] {
  return (fn) => inTransaction(db, options, (tx) => fn(tx));
}
