/**
 * Full-text search on libSQL: three FTS5 tables whose rowids tie each row to its source row
 * (`search_titles` and `search_tips` to `runs.rowid`, `search_outputs` to `outputs.rowid`),
 * matched with `MATCH` and ranked by `bm25`. Rows are written in batches before the index is
 * read, not as runs and outputs are written (`fts_backlog.ts`).
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { SearchQuery } from "../../engine/model/ports.ts";
import type { FullTextSearch, TextLayer, TextMatch } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { countOrphans, guardedSearch } from "../sql/search_index.ts";
import { indexed, written } from "./fts_backlog.ts";

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

/** A missing FTS5 table, or FTS5's own corruption code (not a damaged page of the file). */
function indexFault(error: unknown): string | null {
  const e = error as { code?: unknown; message?: unknown } | null;
  const message = String(e?.message ?? "");
  const missing = /no such table: (?:main\.)?(search_\w+)/.exec(message);
  if (missing) return `${missing[1]} is missing`;
  return e?.code === "SQLITE_CORRUPT_VTAB" ? `an FTS5 table: ${message}` : null;
}

/** FTS5 search over the three tables. */
export const fts5Search: FullTextSearch = guardedSearch({
  // the run's or output's row is its record here: it is indexed with the next catch-up
  indexRun: (tx) => written(tx),
  indexOutput: (tx) => written(tx),
  async match(ex, layer, query): Promise<TextMatch[]> {
    await indexed(ex);
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
  orphanCount: (ex) => countOrphans(ex, ORPHANS),
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
}, indexFault);
