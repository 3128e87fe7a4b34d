/**
 * libSQL's full-text rows are written in batches, not one by one with the rows they index: an
 * advance's two FTS5 writes were a third of the pages its commit wrote, a start's title a
 * seventh. `search_backlog` says how far the index has come, by source (`outputs`: every
 * output at or below rowid `through` is indexed, and its run's tip; `titles`: every run at or
 * below it has its title row). Every read of the index first indexes what lies above, in one
 * write transaction, so searches answer exactly as if each row had been indexed when written;
 * writers catch up too, every {@linkcode BACKLOG_LIMIT} rows, so what a search may find to do
 * stays small.
 *
 * SQLite's one writer at a time makes this sound: a new row's rowid is one past the highest at
 * its commit, and `through` comes down when rows at the top are deleted (the triggers made by
 * migration `0007_search_backlog`), so no row ever commits at or below it unindexed.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { Executor } from "../sql/graph_sql.ts";
import { prepare } from "../sql/prepared.ts";
import { searchText } from "../sql/search.ts";
import { StorageBusyError, StorageUnavailableError } from "../../engine/model/result.ts";
import { storageError } from "../storage_errors.ts";

/** Runs and outputs written in this process between two catch-ups on the write path. */
export const BACKLOG_LIMIT = 64;
/** Outputs indexed per statement when the index catches up. */
const BATCH = 500;
let writtenSinceCatchUp = 0;

interface Backlog {
  outputs: number;
  newestOutput: number | null;
  titles: number;
  newestRun: number | null;
}

const backlog = prepare((_db, _p: Record<string, never>) =>
  sql<Backlog>`SELECT
    coalesce((SELECT through FROM search_backlog WHERE name = 'outputs'), 0) AS outputs,
    (SELECT max(rowid) FROM outputs) AS "newestOutput",
    coalesce((SELECT through FROM search_backlog WHERE name = 'titles'), 0) AS titles,
    (SELECT max(rowid) FROM runs) AS "newestRun"`
);

const pendingOutputs = prepare((_db, p: { after: number; limit: number }) =>
  sql<{ id: number; run_id: string; notes_markdown: string | null; artifacts: string }>`
    SELECT rowid AS id, run_id, notes_markdown, artifacts FROM outputs
    WHERE rowid > ${p.after} ORDER BY rowid LIMIT ${p.limit}`
);

// OR REPLACE: a stale row left at a rowid (a damaged index) yields to the source
const outputsIndexed = prepare((_db, p: { batch: string }) =>
  sql`INSERT OR REPLACE INTO search_outputs (rowid, text)
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${p.batch})`
);

// each run's tip text (its latest output's), keyed by the run's rowid
const tipsIndexed = prepare((_db, p: { batch: string }) =>
  sql`INSERT OR REPLACE INTO search_tips (rowid, text)
    SELECT r.rowid, json_extract(j.value, '$[1]') FROM json_each(${p.batch}) AS j
    CROSS JOIN runs r ON r.run_id = json_extract(j.value, '$[0]')`
);

// a run's session title, goal and workflow id
const titlesIndexed = prepare((_db, p: { after: number }) =>
  sql`INSERT OR REPLACE INTO search_titles (rowid, text)
    SELECT r.rowid, s.title || ' ' || CASE WHEN r.goal = s.title THEN '' ELSE coalesce(r.goal, '') END
      || ' ' || r.workflow_id
    FROM runs r JOIN sessions s ON s.session_id = r.session_id
    WHERE r.rowid > ${p.after}`
);

const indexedThrough = prepare((_db, p: { name: string; through: number }) =>
  sql`INSERT INTO search_backlog (name, through) VALUES (${p.name}, ${p.through})
    ON CONFLICT (name) DO UPDATE SET through = excluded.through`
);

function artifactsOf(text: string): unknown[] {
  try {
    const parsed = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** Indexes the outputs above `after` and their runs' tips; returns the last rowid indexed. */
async function indexOutputs(tx: Executor, after: number): Promise<number> {
  for (;;) {
    const rows = await pendingOutputs.all(tx, { after, limit: BATCH });
    if (rows.length === 0) return after;
    const tips = new Map<string, string>();
    const outputs = rows.map((r) => {
      const text = searchText(r.notes_markdown, artifactsOf(r.artifacts));
      tips.set(r.run_id, text); // rows in rowid order: a run's last is its latest
      return [r.id, text];
    });
    await outputsIndexed.execute(tx, { batch: JSON.stringify(outputs) });
    await tipsIndexed.execute(tx, { batch: JSON.stringify([...tips]) });
    after = rows[rows.length - 1]!.id;
    if (rows.length < BATCH) return after;
  }
}

function pending(state: Backlog): boolean {
  return (state.newestOutput ?? 0) > state.outputs || (state.newestRun ?? 0) > state.titles;
}

/** Indexes everything above the backlog's marks, inside the write `tx`. */
async function catchUp(tx: Executor): Promise<void> {
  writtenSinceCatchUp = 0;
  const state = (await backlog.first(tx, {}))!;
  if ((state.newestRun ?? 0) > state.titles) {
    await titlesIndexed.execute(tx, { after: state.titles });
    await indexedThrough.execute(tx, { name: "titles", through: state.newestRun! });
  }
  if ((state.newestOutput ?? 0) > state.outputs) {
    const through = await indexOutputs(tx, state.outputs);
    await indexedThrough.execute(tx, { name: "outputs", through });
  }
}

/**
 * A run or output was written in `tx`: it is indexed with the next catch-up, which runs here
 * once {@linkcode BACKLOG_LIMIT} have been written in this process since the last.
 */
export async function written(tx: Executor): Promise<void> {
  if (++writtenSinceCatchUp >= BACKLOG_LIMIT) await catchUp(tx);
}

/**
 * Brings the index up to date before `ex` reads it: in `ex` when it is a transaction, else in
 * a write transaction of its own when anything is pending. A database that cannot be written
 * (read-only, full, or locked past the busy timeout) is searched as far as it is indexed.
 */
export async function indexed(ex: Executor): Promise<void> {
  if (ex.isTransaction) return await catchUp(ex);
  if (!pending((await backlog.first(ex, {}))!)) return;
  try {
    await ex.transaction().execute(catchUp);
  } catch (error) {
    // the index is a cache of the runs and outputs: stale, it still answers
    const mapped = storageError(error, { location: "" });
    if (!(mapped instanceof StorageBusyError || mapped instanceof StorageUnavailableError)) {
      throw error;
    }
  }
}
