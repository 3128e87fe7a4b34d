/**
 * Reading a session's log back: its rows in order (a page at a time, so a long session is never
 * held whole), each checked against its digest, and projecting logged events again with their
 * original sequence numbers and times (import, rebuild).
 * @module
 */
import type { DomainEvent } from "../../engine/model/events.ts";
import type { FullTextSearch } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";
import { project } from "./projections.ts";
import { digest } from "./rows.ts";

/** One row of the `events` table. */
export interface LogRow {
  /** Position in the database's log. */
  seq: number;
  /** Event kind. */
  kind: string;
  /** The event as JSON text. */
  payload: string;
  /** `sha256` of kind and payload. */
  digest: string;
  /** Append time (ISO-8601). */
  at: string;
  /** Its place in the session's log (1, 2, 3, ...), `null` on a row from outside waymark. */
  position: number | null;
}

/** Rows read per page. */
const PAGE = 500;

/** A session's log rows, oldest first, read a page at a time. */
export async function* sessionLog(ex: Executor, sessionId: string): AsyncGenerator<LogRow> {
  let after = -1;
  for (;;) {
    const rows = await ex.selectFrom("events")
      .select(["seq", "kind", "payload", "digest", "at", "position"])
      .where("session_id", "=", sessionId).where("seq", ">", after)
      .orderBy("seq").limit(PAGE).execute();
    for (const row of rows) {
      yield {
        ...row,
        seq: Number(row.seq),
        position: row.position === null ? null : Number(row.position),
      };
    }
    if (rows.length < PAGE) return;
    after = Number(rows[rows.length - 1]!.seq);
  }
}

/**
 * Follows a session's log positions (1, 2, 3, ...): `next(row)` says why a row breaks the
 * sequence (a position skipped, repeated or missing), `end(count)` whether the log stops short
 * of the events the session counted (its last rows deleted).
 */
export function positionCheck(): {
  next(row: LogRow): string | null;
  end(counted: number | null): string | null;
} {
  let last = 0;
  return {
    next(row) {
      const expected = last + 1;
      if (row.position === null) return `event ${row.seq} (${row.kind}) has no place in the log`;
      last = row.position;
      if (row.position === expected) return null;
      return row.position > expected
        ? `${row.position - expected} event(s) missing from the log (positions ${expected} to ${
          row.position - 1
        }, before event ${row.seq} (${row.kind}))`
        : `event ${row.seq} (${row.kind}) repeats position ${row.position}`;
    },
    end(counted) {
      return counted !== null && counted > last
        ? `${
          counted - last
        } event(s) missing from the end of the log (it stops at position ${last} of ${counted})`
        : null;
    },
  };
}

/** The digest a log row must carry. */
export function logDigest(kind: string, payload: string): string {
  return digest(`${kind}\n${payload}`);
}

/**
 * The event a log row holds, or why it cannot be trusted: a digest that does not match, a
 * payload that is not JSON, or a payload whose kind or session differs from its row's.
 */
export function decodeLogRow(
  row: LogRow,
  sessionId: string,
): { ok: true; event: DomainEvent } | { ok: false; reason: string } {
  const where = `event ${row.seq} (${row.kind})`;
  if (logDigest(row.kind, row.payload) !== row.digest) {
    return { ok: false, reason: `${where} fails its digest check` };
  }
  let event: DomainEvent;
  try {
    event = JSON.parse(row.payload) as DomainEvent;
  } catch {
    return { ok: false, reason: `${where} is not valid JSON` };
  }
  if (event?.kind !== row.kind || event.sessionId !== sessionId) {
    return { ok: false, reason: `${where} names another kind or session than its row` };
  }
  return { ok: true, event };
}

/** An event to project again, with its place and time in the log. */
export interface LoggedEvent {
  /** Its sequence number. */
  seq: number;
  /** Its append time. */
  at: string;
  /** The event. */
  event: DomainEvent;
}

/**
 * Projects a session's logged events, in order, through the normal projection code; then sets
 * the session's counters as the appends had (events counted, last append time). `counted` is
 * how many of its events earlier calls projected (an import projects a session in batches).
 */
export async function projectLogged(
  tx: Executor,
  search: FullTextSearch,
  logged: {
    sessionId: string;
    events: Iterable<LoggedEvent> | AsyncIterable<LoggedEvent>;
    counted?: number;
  },
): Promise<number> {
  let count = 0;
  let last: string | null = null;
  for await (const { seq, at, event } of logged.events) {
    await project({ tx, search, seq, at }, event);
    count += 1;
    last = at;
  }
  if (last !== null) {
    const total = (logged.counted ?? 0) + count;
    await tx.updateTable("sessions").set({ updated_at: last, event_count: total })
      .where("session_id", "=", logged.sessionId).execute();
  }
  return count;
}
