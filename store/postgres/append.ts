/**
 * A batch of events appended to its session's log in one statement on PostgreSQL: the
 * session's count grows in a data-modifying `WITH` and the rows are numbered from what it
 * returns, where the shared writer spends two statements and two round trips (`UPDATE …
 * RETURNING`, then the `INSERT`). SQLite has no data-modifying `WITH`, so libSQL keeps those.
 * @module
 */
import { CompiledQuery } from "npm:kysely@0.29.9";
import type { AppendBatch, AppendedRow } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";

/** Batch sizes whose text is kept (larger ones are written out each time). */
const MAX_KEPT = 16;
const texts = new Map<number, string>();

/** Parameters before the rows': the time, the batch's size and the session. */
const LEAD = 3;
/** Parameters of one row. */
const PER_ROW = 6;

/**
 * The statement for `count` rows: `$1` the time, `$2` the count, `$3` the session, then six a
 * row. A session no longer stored has no row to grow, so nothing is inserted.
 */
function appendText(count: number): string {
  const kept = texts.get(count);
  if (kept) return kept;
  const values = Array.from({ length: count }, (_, i) => {
    const at = LEAD + i * PER_ROW;
    const slots = Array.from({ length: PER_ROW }, (_, k) => `$${at + k + 1}`);
    return `(${slots.join(", ")}, ${i + 1})`;
  }).join(", ");
  const text = "with grown as (update sessions set updated_at = $1, " +
    "event_count = event_count + $2 where session_id = $3 returning event_count) " +
    "insert into events (session_id, run_id, kind, payload, digest, at, position) " +
    "select v.session_id, v.run_id, v.kind, v.payload, v.digest, v.at, " +
    "grown.event_count - $2 + v.i from grown cross join " +
    `(values ${values}) as v (session_id, run_id, kind, payload, digest, at, i) ` +
    "returning seq, position";
  if (texts.size < MAX_KEPT) texts.set(count, text);
  return text;
}

/**
 * Grows the session's count by the batch and inserts its rows numbered after the count it had,
 * in one statement: the rows inserted with their sequence numbers (none when the session is
 * gone).
 */
export async function appendToSession(tx: Executor, batch: AppendBatch): Promise<AppendedRow[]> {
  const { rows } = batch;
  const parameters: unknown[] = [batch.at, rows.length, batch.sessionId];
  for (const r of rows) parameters.push(r.session_id, r.run_id, r.kind, r.payload, r.digest, r.at);
  const result = await tx.executeQuery<{ seq: number; position: number }>(
    CompiledQuery.raw(appendText(rows.length), parameters),
  );
  return result.rows.map((r) => ({ seq: Number(r.seq), position: Number(r.position) }));
}
