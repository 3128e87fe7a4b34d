/**
 * Full-text search on PostgreSQL: three tables keyed by their source (`search_titles` and
 * `search_tips` by run id, `search_outputs` by run and node id), each with a `tsvector` column
 * under a GIN index. The vectors are built here from the tokens FTS5's `unicode61
 * remove_diacritics 2` tokenizer would make (`text_match.ts`), not by the server's parser,
 * so both stores split, fold and match text alike whatever the server's locale; each query
 * term is a phrase and any term may match. Relevance is `ts_rank` (negated: lower is better,
 * as with bm25), and snippets are cut here.
 * @module
 */
import { type Kysely, sql } from "npm:kysely@0.29.9";
import type { SearchQuery } from "../../engine/model/ports.ts";
import type { FullTextSearch, TextLayer, TextMatch } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { countOrphans, guardedSearch } from "../sql/search_index.ts";
import { foldedTokens, matchSnippet } from "./text_match.ts";
import { prepare } from "../sql/prepared.ts";

/** The highest position a `tsvector` keeps (later tokens share it). */
const MAX_POSITION = 16383;
/** Longer tokens are not indexed (`tsvector` refuses lexemes over 2 KB). */
const MAX_TOKEN_CHARS = 255;

function lexeme(token: string): string {
  return `'${token.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** The `tsvector` literal of a text: its folded tokens with their positions. */
export function tsvectorOf(text: string): string {
  return foldedTokens(text).map((token, i) =>
    token.length > MAX_TOKEN_CHARS ? "" : `${lexeme(token)}:${Math.min(i + 1, MAX_POSITION)}`
  ).filter(Boolean).join(" ");
}

/** The `tsquery` literal matching any of the terms, each a phrase; `""` when none has a token. */
export function tsqueryOf(terms: readonly string[]): string {
  return terms.map((term) => foldedTokens(term).map(lexeme).join(" <-> "))
    .filter(Boolean).map((phrase) => `(${phrase})`).join(" | ");
}

type MatchRow = { run_id: string; text: string; rank: number };

/** The search tables as PostgreSQL holds them (the shared schema types SQLite's FTS5 tables). */
interface SearchTables {
  search_titles: { run_id: string; text: string; tsv: string };
  search_tips: { run_id: string; text: string; tsv: string };
  search_outputs: { run_id: string; node_id: string; text: string; tsv: string };
}

/** Written with the query builder, so the driver can send them ahead with the projections. */
const searchTables = (ex: Executor) => ex as unknown as Kysely<SearchTables>;
const vector = (tsv: string) => sql<string>`CAST(${tsv} AS tsvector)`;

/** `ON CONFLICT … DO UPDATE SET` of a row indexed again: the new text and vector. */
const REPLACE_TEXT = { text: sql<string>`excluded.text`, tsv: sql<string>`excluded.tsv` };

/** An output indexed as its node's and as its run's tip, both rows in one statement (every advance). */
const outputIndexed = prepare(
  (ex, p: { runId: string; nodeId: string; text: string; tsv: string }) =>
    searchTables(ex)
      .with("output", (db) =>
        db.insertInto("search_outputs")
          .values({ run_id: p.runId, node_id: p.nodeId, text: p.text, tsv: vector(p.tsv) })
          .onConflict((oc) => oc.columns(["run_id", "node_id"]).doUpdateSet(REPLACE_TEXT)))
      .insertInto("search_tips").values({ run_id: p.runId, text: p.text, tsv: vector(p.tsv) })
      .onConflict((oc) => oc.column("run_id").doUpdateSet(REPLACE_TEXT)),
  { oneDialect: true },
);

const LAYER_TABLE = {
  title: sql.table("search_titles"),
  tip_notes: sql.table("search_tips"),
  deep: sql.table("search_outputs"),
} as const;

function matchRows(ex: Executor, layer: TextLayer, query: { q: string; limit: number }) {
  // Several outputs of one run may match: read more, keep each run's best.
  const limit = layer === "deep" ? query.limit * 4 : query.limit;
  return sql<MatchRow>`
    SELECT t.run_id, t.text, ts_rank(t.tsv, q.q, 1) AS rank
    FROM ${LAYER_TABLE[layer]} t, (SELECT CAST(${query.q} AS tsquery) AS q) q
    WHERE t.tsv @@ q.q ORDER BY rank DESC, t.run_id LIMIT ${limit}`.execute(ex);
}

const sessionRuns = (sessionId: string) =>
  sql`SELECT run_id FROM runs WHERE session_id = ${sessionId}`;

/** `FROM … WHERE` of each table's rows whose source row is gone. */
const ORPHANS = [
  sql`FROM search_titles t WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = t.run_id)`,
  sql`FROM search_tips t WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = t.run_id)`,
  sql`FROM search_outputs t WHERE NOT EXISTS
    (SELECT 1 FROM outputs o WHERE o.run_id = t.run_id AND o.node_id = t.node_id)`,
];
const ORPHAN_DELETES = [
  sql`DELETE FROM search_titles t WHERE NOT EXISTS
    (SELECT 1 FROM runs r WHERE r.run_id = t.run_id)`,
  sql`DELETE FROM search_tips t WHERE NOT EXISTS
    (SELECT 1 FROM runs r WHERE r.run_id = t.run_id)`,
  sql`DELETE FROM search_outputs t WHERE NOT EXISTS
    (SELECT 1 FROM outputs o WHERE o.run_id = t.run_id AND o.node_id = t.node_id)`,
];

async function sessionTexts(ex: Executor, sessionId: string): Promise<string[]> {
  const rows = await sql<{ line: string }>`
    SELECT 'title ' || t.run_id || ' ' || t.text AS line FROM search_titles t
      WHERE t.run_id IN (${sessionRuns(sessionId)})
    UNION ALL SELECT 'tip ' || t.run_id || ' ' || t.text FROM search_tips t
      WHERE t.run_id IN (${sessionRuns(sessionId)})
    UNION ALL SELECT 'output ' || t.run_id || ' ' || t.node_id || ' ' || t.text
      FROM search_outputs t WHERE t.run_id IN (${sessionRuns(sessionId)})`.execute(ex);
  return rows.rows.map((r) => r.line);
}

/** A search table gone (SQLSTATE 42P01 naming it). */
function indexFault(error: unknown): string | null {
  const e = error as { code?: unknown; message?: unknown } | null;
  const missing = /relation "(search_\w+)" does not exist/.exec(String(e?.message ?? ""));
  return e?.code === "42P01" && missing ? `${missing[1]} is missing` : null;
}

/** `tsvector` search over the three tables. */
export const tsvectorSearch: FullTextSearch = guardedSearch({
  async indexRun(tx, runId) {
    const row = await tx.selectFrom("runs as r")
      .innerJoin("sessions as s", "s.session_id", "r.session_id")
      .select(["s.title", "r.goal", "r.workflow_id"]).where("r.run_id", "=", runId)
      .executeTakeFirst();
    if (!row) return;
    const text = `${row.title} ${row.goal === row.title ? "" : row.goal ?? ""} ${row.workflow_id}`;
    await searchTables(tx).insertInto("search_titles")
      .values({ run_id: runId, text, tsv: vector(tsvectorOf(text)) })
      .onConflict((oc) => oc.column("run_id").doUpdateSet(REPLACE_TEXT)).execute();
  },
  async indexOutput(tx, { runId, nodeId, text }) {
    await outputIndexed.execute(tx, { runId, nodeId, text, tsv: tsvectorOf(text) });
  },
  async match(ex, layer, query: SearchQuery): Promise<TextMatch[]> {
    const q = tsqueryOf(query.terms);
    if (q === "") return [];
    const rows = await matchRows(ex, layer, { q, limit: query.limit });
    const found: TextMatch[] = [];
    const seen = new Set<string>();
    for (const r of rows.rows) {
      if (seen.has(r.run_id)) continue;
      seen.add(r.run_id);
      const snippet = matchSnippet(r.text, query.terms);
      found.push({ runId: r.run_id, relevance: -Number(r.rank), snippet });
      if (found.length >= query.limit) break;
    }
    return found;
  },
  async tipTexts(ex, runIds) {
    const rows = await sql<{ run_id: string; text: string }>`
      SELECT run_id, text FROM search_tips WHERE run_id IN (${sql.join(runIds)})`.execute(ex);
    return new Map(rows.rows.map((r) => [r.run_id, r.text]));
  },
  async unindexSession(tx, sessionId) {
    for (const table of Object.values(LAYER_TABLE)) {
      await sql`DELETE FROM ${table} WHERE run_id IN (${sessionRuns(sessionId)})`.execute(tx);
    }
  },
  sessionTexts,
  orphanCount: (ex) => countOrphans(ex, ORPHANS),
  async dropOrphans(tx) {
    let n = 0;
    for (const statement of ORPHAN_DELETES) {
      n += Number((await statement.execute(tx)).numAffectedRows ?? 0);
    }
    return n;
  },
}, indexFault);
