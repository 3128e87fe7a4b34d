/**
 * Full-text search on libSQL: three FTS5 tables whose rowids tie each row to its source row
 * (`search_titles` and `search_tips` to `runs.rowid`, `search_outputs` to `outputs.rowid`),
 * matched with `MATCH` and ranked by `bm25`.
 *
 * Outputs are indexed in batches, not one by one as they are written: an advance's two FTS5
 * writes were a third of the pages its commit wrote. `search_backlog.through` says how far the
 * index has come (every output at or below that rowid is indexed, its run's tip too); every
 * read of the index first indexes the outputs above it, in one write transaction, so searches
 * answer exactly as if each output had been indexed when written. Writers catch up too, every
 * {@linkcode BACKLOG_LIMIT} outputs, so what a search may find to do stays small. SQLite's one
 * writer at a time makes this sound: rowids grow in commit order (and `through` follows rows
 * deleted from the top down, see the migration's trigger), so no output commits below it.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { SearchQuery } from "../../engine/mod.ts";
import type { FullTextSearch, TextLayer, TextMatch } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { prepare } from "../sql/prepared.ts";
import { searchText } from "../sql/search.ts";

/** An FTS5 query that matches any of the words, each quoted (so no word is FTS syntax). */
export function ftsQuery(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}

type MatchRow = { run_id: string; relevance: number; snip: string };

function matchRows(ex: Executor, layer: TextLayer, query: SearchQuery) {
  const match = ftsQuery(query.terms);
  if (layer === "title") {
    return sql<MatchRow>`
      SELECT r.run_id, bm25(search_titles) AS relevance,
        snippet(search_titles, 0, '«', '»', '…', 12) AS snip
      FROM search_titles JOIN runs r ON r.rowid = search_titles.rowid
      WHERE search_titles MATCH ${match} ORDER BY relevance LIMIT ${query.limit}`.execute(ex);
  }
  if (layer === "tip_notes") {
    return sql<MatchRow>`
      SELECT r.run_id, bm25(search_tips) AS relevance,
        snippet(search_tips, 0, '«', '»', '…', 12) AS snip
      FROM search_tips JOIN runs r ON r.rowid = search_tips.rowid
      WHERE search_tips MATCH ${match} ORDER BY relevance LIMIT ${query.limit}`.execute(ex);
  }
  // Several outputs of one run may match: read more, keep each run's best.
  return sql<MatchRow>`
    SELECT o.run_id, bm25(search_outputs) AS relevance,
      snippet(search_outputs, 0, '«', '»', '…', 12) AS snip
    FROM search_outputs JOIN outputs o ON o.rowid = search_outputs.rowid
    WHERE search_outputs MATCH ${match} ORDER BY relevance LIMIT ${query.limit * 4}`.execute(ex);
}

const FTS_TABLES = ["search_titles", "search_tips", "search_outputs"] as const;

/** `FROM … WHERE` of each table's rows whose source row is gone, in `FTS_TABLES` order. */
const ORPHANS = [
  sql`FROM search_titles WHERE search_titles.rowid NOT IN (SELECT rowid FROM runs)`,
  sql`FROM search_tips WHERE search_tips.rowid NOT IN (SELECT rowid FROM runs)`,
  sql`FROM search_outputs WHERE search_outputs.rowid NOT IN (SELECT rowid FROM outputs)`,
];

const sessionRuns = (sessionId: string) =>
  sql`SELECT rowid FROM runs WHERE session_id = ${sessionId}`;
const sessionOutputs = (sessionId: string) =>
  sql`SELECT rowid FROM outputs
    WHERE run_id IN (SELECT run_id FROM runs WHERE session_id = ${sessionId})`;

async function unindexSession(tx: Executor, sessionId: string): Promise<void> {
  await sql`DELETE FROM search_titles WHERE rowid IN (${sessionRuns(sessionId)})`.execute(tx);
  await sql`DELETE FROM search_tips WHERE rowid IN (${sessionRuns(sessionId)})`.execute(tx);
  await sql`DELETE FROM search_outputs WHERE rowid IN (${sessionOutputs(sessionId)})`.execute(tx);
}

/** Index rows keyed by their source (run id, or run and node id), since rowids change on a rebuild. */
async function sessionTexts(ex: Executor, sessionId: string): Promise<string[]> {
  await indexed(ex);
  const rows = await sql<{ line: string }>`
    SELECT 'title ' || r.run_id || ' ' || t.text AS line
      FROM search_titles t JOIN runs r ON r.rowid = t.rowid WHERE r.session_id = ${sessionId}
    UNION ALL SELECT 'tip ' || r.run_id || ' ' || t.text
      FROM search_tips t JOIN runs r ON r.rowid = t.rowid WHERE r.session_id = ${sessionId}
    UNION ALL SELECT 'output ' || o.run_id || ' ' || o.node_id || ' ' || t.text
      FROM search_outputs t JOIN outputs o ON o.rowid = t.rowid
      WHERE o.run_id IN (SELECT run_id FROM runs WHERE session_id = ${sessionId})`.execute(ex);
  return rows.rows.map((r) => r.line);
}

// OR REPLACE: a stale row left at this rowid (a damaged index) yields to the source
const titleIndexed = prepare((_db, p: { runId: string }) =>
  sql`INSERT OR REPLACE INTO search_titles(rowid, text)
    SELECT r.rowid, s.title || ' ' || CASE WHEN r.goal = s.title THEN '' ELSE coalesce(r.goal, '') END
      || ' ' || r.workflow_id
    FROM runs r JOIN sessions s ON s.session_id = r.session_id
    WHERE r.run_id = ${p.runId}`
);

/** Outputs written in this process between two catch-ups on the write path. */
export const BACKLOG_LIMIT = 64;
/** Outputs indexed per statement when the index catches up. */
const CATCH_UP_BATCH = 500;
let appendedSinceCatchUp = 0;

const backlog = prepare((_db, _p: Record<string, never>) =>
  sql<{ through: number; newest: number | null }>`
    SELECT coalesce((SELECT through FROM search_backlog WHERE name = 'outputs'), 0) AS through,
      (SELECT max(rowid) FROM outputs) AS newest`
);

const pendingOutputs = prepare((_db, p: { after: number; limit: number }) =>
  sql<{ id: number; run_id: string; notes_markdown: string | null; artifacts: string }>`
    SELECT rowid AS id, run_id, notes_markdown, artifacts FROM outputs
    WHERE rowid > ${p.after} ORDER BY rowid LIMIT ${p.limit}`
);

// OR REPLACE: a stale row left at this rowid (a damaged index) yields to the source
const outputsIndexed = prepare((_db, p: { batch: string }) =>
  sql`INSERT OR REPLACE INTO search_outputs (rowid, text)
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${p.batch})`
);

// each run's tip text, keyed by the run's rowid (FTS5 honours REPLACE)
const tipsIndexed = prepare((_db, p: { batch: string }) =>
  sql`INSERT OR REPLACE INTO search_tips (rowid, text)
    SELECT r.rowid, json_extract(j.value, '$[1]') FROM json_each(${p.batch}) AS j
    CROSS JOIN runs r ON r.run_id = json_extract(j.value, '$[0]')`
);

const indexedThrough = prepare((_db, p: { through: number }) =>
  sql`INSERT INTO search_backlog (name, through) VALUES ('outputs', ${p.through})
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

/** Indexes the outputs above `through` (and their runs' tips), inside the write `tx`. */
async function catchUp(tx: Executor): Promise<void> {
  appendedSinceCatchUp = 0;
  const state = (await backlog.first(tx, {}))!;
  let through = state.through;
  if (state.newest === null || state.newest <= through) return;
  for (;;) {
    const rows = await pendingOutputs.all(tx, { after: through, limit: CATCH_UP_BATCH });
    if (rows.length === 0) break;
    const tips = new Map<string, string>();
    const outputs = rows.map((r) => {
      const text = searchText(r.notes_markdown, artifactsOf(r.artifacts));
      tips.set(r.run_id, text); // rows in rowid order: a run's last is its latest
      return [r.id, text];
    });
    await outputsIndexed.execute(tx, { batch: JSON.stringify(outputs) });
    await tipsIndexed.execute(tx, { batch: JSON.stringify([...tips]) });
    through = rows[rows.length - 1]!.id;
    if (rows.length < CATCH_UP_BATCH) break;
  }
  await indexedThrough.execute(tx, { through });
}

/**
 * Brings the index up to date before `ex` reads it: in `ex` when it is a transaction, else in
 * a write transaction of its own when anything is pending. A database that cannot be written
 * (read-only, or locked past the busy timeout) is searched as far as it is indexed.
 */
async function indexed(ex: Executor): Promise<void> {
  if (ex.isTransaction) return await catchUp(ex);
  const state = (await backlog.first(ex, {}))!;
  if (state.newest === null || state.newest <= state.through) return;
  try {
    await ex.transaction().execute(catchUp);
  } catch {
    // the index is a cache of the outputs: stale, it still answers
  }
}

/** FTS5 search over the three tables. */
export const fts5Search: FullTextSearch = {
  async indexRun(tx, runId) {
    await titleIndexed.execute(tx, { runId });
  },
  // the output's row is its record here: it is indexed with the next catch-up
  async indexOutput(tx) {
    if (++appendedSinceCatchUp >= BACKLOG_LIMIT) await catchUp(tx);
  },
  async match(ex, layer, query): Promise<TextMatch[]> {
    if (layer !== "title") await indexed(ex);
    const rows = await matchRows(ex, layer, query);
    const found: TextMatch[] = [];
    const seen = new Set<string>();
    for (const r of rows.rows) {
      if (seen.has(r.run_id)) continue;
      seen.add(r.run_id);
      found.push({ runId: r.run_id, relevance: Number(r.relevance), snippet: r.snip });
      if (found.length >= query.limit) break;
    }
    return found;
  },
  unindexSession,
  sessionTexts,
  async orphanCount(ex) {
    let n = 0;
    for (const orphans of ORPHANS) {
      const row = await sql<{ n: number }>`SELECT count(*) AS n ${orphans}`.execute(ex);
      n += Number(row.rows[0]?.n ?? 0);
    }
    return n;
  },
  async dropOrphans(tx) {
    let n = 0;
    for (const [i, orphans] of ORPHANS.entries()) {
      const result = await sql`DELETE FROM ${sql.table(FTS_TABLES[i]!)} WHERE rowid IN
        (SELECT ${sql.table(FTS_TABLES[i]!)}.rowid ${orphans})`.execute(tx);
      n += Number(result.numAffectedRows ?? 0);
    }
    return n;
  },
  async tipTexts(ex, runIds) {
    await indexed(ex);
    const rows = await sql<{ run_id: string; text: string }>`
      SELECT r.run_id, t.text FROM runs r JOIN search_tips t ON t.rowid = r.rowid
      WHERE r.run_id IN (${sql.join(runIds)})`.execute(ex);
    return new Map(rows.rows.map((r) => [r.run_id, r.text]));
  },
};
