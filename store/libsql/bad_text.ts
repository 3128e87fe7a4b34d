/**
 * Finding stored text that is not UTF-8 (which the native binding cannot read as text; see
 * `text_guard.ts`) and setting it aside: every text column of every ordinary table is scanned for
 * values with a byte outside ASCII, read as hex (never as text) and decoded strictly here. On
 * repair each bad value is copied as its bytes into `quarantine` and replaced in place by its
 * readable rendering (each bad byte a U+FFFD), so the row can be read and the other checks can
 * judge it: a log row so changed fails its digest (its session is marked corrupt, the original
 * kept), a projection is rebuilt from the log.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { BadText } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { NON_ASCII } from "./text_guard.ts";

const strict = new TextDecoder("utf-8", { fatal: true });
const lossy = new TextDecoder("utf-8");

function bytesOf(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Ordinary tables with rowids (FTS5's own virtual tables and `WITHOUT ROWID` ones left out). */
async function tables(ex: Executor): Promise<string[]> {
  const rows = await sql<{ name: string }>`SELECT name FROM pragma_table_list
    WHERE schema = 'main' AND type = 'table' AND wr = 0 AND name NOT LIKE 'sqlite_%'`.execute(ex);
  return rows.rows.map((r) => r.name);
}

async function columns(ex: Executor, table: string): Promise<string[]> {
  const rows = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`
    .execute(ex);
  return rows.rows.map((r) => r.name);
}

/** The bad text values of one column, with their bytes. */
async function scan(ex: Executor, table: string, column: string, session: boolean) {
  const rows = await sql<{ k: string; raw: string; s: string | null }>`SELECT
      CAST(rowid AS TEXT) AS k, hex(${sql.ref(column)}) AS raw,
      ${
    // a session id is lowercase hex; anything else is not shown (it may be the damage itself)
    session ? sql`CASE WHEN session_id NOT GLOB '*[^0-9a-f]*' THEN session_id END` : sql`NULL`} AS s
    FROM ${sql.table(table)}
    WHERE typeof(${sql.ref(column)}) = 'text' AND ${sql.ref(column)} ${sql.raw(NON_ASCII)}`
    .execute(ex);
  return rows.rows.map((r) => ({ ...r, bytes: bytesOf(r.raw) }))
    .filter((r) => !isUtf8(r.bytes));
}

/** Every stored text value that is not UTF-8; with `repair`, each set aside and replaced. */
export async function badText(
  ex: Executor,
  options: { repair: boolean; now: string },
): Promise<BadText[]> {
  const found: BadText[] = [];
  for (const table of await tables(ex)) {
    if (table === "quarantine") continue;
    const names = await columns(ex, table);
    for (const column of names) {
      for (const bad of await scan(ex, table, column, names.includes("session_id"))) {
        const readable = lossy.decode(bad.bytes);
        found.push({
          table,
          row: bad.k,
          column,
          sessionId: bad.s,
          preview: readable.slice(0, 60),
        });
        if (!options.repair) continue;
        await sql`INSERT INTO quarantine (table_name, row_key, column_name, original_hex,
            replaced_with, quarantined_at)
          VALUES (${table}, ${bad.k}, ${column}, ${bad.raw}, ${readable}, ${options.now})`
          .execute(ex);
        await sql`UPDATE ${sql.table(table)} SET ${sql.ref(column)} = ${readable}
          WHERE rowid = ${Number(bad.k)}`.execute(ex);
      }
    }
  }
  return found;
}
