/**
 * A batch of events appended to its session's log in one statement on PostgreSQL, whose answer
 * no one waits for: the session's count grows in a data-modifying `WITH`, the rows are numbered
 * from what it returns, and their sequence numbers are kept in a setting of the transaction
 * (`waymark.seqs`, in row order) instead of being sent back. The writes that need a number (the
 * projections) bind a `PendingSeq` where it goes, which the driver turns into a read of that
 * setting (`pending_seqs.ts`), so they leave with the append and the `COMMIT` in one round trip
 * where the append's answer cost one more. The shared writer spends two statements and waits
 * for both; SQLite has no data-modifying `WITH`, so libSQL keeps those.
 * @module
 */
import { CompiledQuery } from "npm:kysely@0.29.9";
import { type AppendBatch, PendingSeq, type Seq } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { sentAhead } from "./driver.ts";

/** Batch sizes whose text is kept (larger ones are written out each time). */
const MAX_KEPT = 16;
const texts = new Map<number, string>();

/** Parameters before the rows': the time, the batch's size, the session and its label. */
const LEAD = 4;
/** Parameters of one row. */
const PER_ROW = 6;

/**
 * The statement for `count` rows: `$1` the time, `$2` the count, `$3` the session, `$4` its
 * label, then six a row. A session no longer stored has no row to grow, so nothing is inserted
 * and the statement fails (a text that is no number, cast to one: PostgreSQL has no `raise`
 * outside PL/pgSQL; the text names the count inserted, so it is never folded at planning).
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
    "event_count = event_count + $2 where session_id = $3 returning event_count), " +
    "added as (insert into events (session_id, run_id, kind, payload, digest, at, position) " +
    "select v.session_id, v.run_id, v.kind, v.payload, v.digest, v.at, " +
    "grown.event_count - $2 + v.i from grown cross join " +
    `(values ${values}) as v (session_id, run_id, kind, payload, digest, at, i) ` +
    "returning seq, position) " +
    "select set_config('waymark.seqs', case when a.n = $2 then a.seqs " +
    "else ($4 || ' is no longer stored (' || a.n || ' rows appended)')::integer::text end, true) " +
    "from (select count(*) as n, string_agg(seq::text, ',' order by position) as seqs " +
    "from added) as a";
  if (texts.size < MAX_KEPT) texts.set(count, text);
  return text;
}

/**
 * Grows the session's count by the batch and inserts its rows numbered after the count it had,
 * in one statement sent without waiting: the rows' sequence numbers, pending.
 */
export async function appendToSession(tx: Executor, batch: AppendBatch): Promise<Seq[]> {
  const { rows } = batch;
  const parameters: unknown[] = [batch.at, rows.length, batch.sessionId, batch.label];
  for (const r of rows) parameters.push(r.session_id, r.run_id, r.kind, r.payload, r.digest, r.at);
  await tx.executeQuery(sentAhead(CompiledQuery.raw(appendText(rows.length), parameters)));
  return rows.map((_, i) => new PendingSeq(i + 1));
}
