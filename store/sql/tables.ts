/**
 * What each table is to a session, written once for the code that copies, deletes or rebuilds
 * one session (bundles, gc, doctor). A table added to the schema fails to compile here until it
 * is given a role, so no maintenance command can forget it.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { FullTextSearch } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";
import type { Database } from "./database.ts";

/**
 * A table's role: `log` is the truth; `session` and `run` are projections reached by their
 * `session_id`, or through their run's id (the indexed way in, even where the row also names
 * its session); `shared` rows are content-addressed and kept while any run
 * uses them; `search` is the dialect's full-text index (kept by the dialect); `record` rows
 * sit beside the log (not rebuilt from it) with a `session_id` column; `cache` rows belong to no
 * session and may be dropped at any time (they are rebuilt from files outside the store);
 * `evidence` rows are what doctor set aside, kept for a person and never removed by waymark;
 * `credential` rows belong to no session and are not rebuilt from anything (the HTTP service's
 * personal access tokens, as hashes): kept by every maintenance command, copied by backups.
 */
export type TableRole =
  | "log"
  | "session"
  | "run"
  | "shared"
  | "search"
  | "record"
  | "cache"
  | "evidence"
  | "credential";

/** Every table's role. */
export const TABLE_ROLES: Record<keyof Database, TableRole> = {
  events: "log",
  sessions: "session",
  runs: "session",
  workflow_snapshots: "shared",
  nodes: "run",
  edges: "run",
  attempts: "run",
  outputs: "run",
  observations: "run",
  contexts: "run",
  run_links: "run",
  run_delegations: "run",
  node_events: "run",
  review_passes: "session",
  search_titles: "search",
  search_tips: "search",
  search_outputs: "search",
  bundle_imports: "record",
  workflow_files: "cache",
  workflow_outcomes: "cache",
  quarantine: "evidence",
  personal_tokens: "credential",
};

/** The tables of a role, in schema order. */
export function tablesWithRole(role: TableRole): (keyof Database)[] {
  return (Object.keys(TABLE_ROLES) as (keyof Database)[]).filter((t) => TABLE_ROLES[t] === role);
}

/** The rows of `table` that belong to `sessionId` (for a `session`, `run`, `log` or `record` table). */
function scoped(table: keyof Database, sessionId: string) {
  return TABLE_ROLES[table] === "run"
    ? sql`run_id IN (SELECT run_id FROM runs WHERE session_id = ${sessionId})`
    : sql`session_id = ${sessionId}`;
}

/**
 * Deletes a session's projection rows (full-text index first, while its source rows still
 * say which index rows are the session's; run-scoped rows before the runs they hang from).
 */
export async function deleteProjections(
  tx: Executor,
  search: FullTextSearch,
  sessionId: string,
): Promise<void> {
  await search.unindexSession(tx, sessionId);
  for (const table of [...tablesWithRole("run"), ...tablesWithRole("session").reverse()]) {
    await sql`DELETE FROM ${sql.table(table)} WHERE ${scoped(table, sessionId)}`.execute(tx);
  }
}

/** Deletes everything of a session: its projections, its log and the records beside it. */
export async function deleteSession(
  tx: Executor,
  search: FullTextSearch,
  sessionId: string,
): Promise<void> {
  await deleteProjections(tx, search, sessionId);
  for (const table of [...tablesWithRole("log"), ...tablesWithRole("record")]) {
    await sql`DELETE FROM ${sql.table(table)} WHERE ${scoped(table, sessionId)}`.execute(tx);
  }
}

/**
 * A session's projection rows as comparable text, table by table (rows sorted; the session's
 * health left out, since it records findings rather than the log), with the full-text rows
 * the dialect keeps for it. Two dumps are equal when the projections agree.
 */
export async function dumpProjections(
  ex: Executor,
  search: FullTextSearch,
  sessionId: string,
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of [...tablesWithRole("session"), ...tablesWithRole("run")]) {
    const rows = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}
      WHERE ${scoped(table, sessionId)}`.execute(ex);
    out[table] = rows.rows.map((row) => {
      const { health: _health, ...rest } = row;
      return JSON.stringify(table === "sessions" ? rest : row);
    }).sort();
  }
  out.search = (await search.sessionTexts(ex, sessionId)).sort();
  return out;
}

/** The tables (and how many rows each) where two dumps differ. */
export function dumpDifferences(
  before: Record<string, string[]>,
  after: Record<string, string[]>,
): Record<string, number> {
  const diff: Record<string, number> = {};
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = new Set(before[table] ?? []);
    const b = new Set(after[table] ?? []);
    const changed = [...a].filter((r) => !b.has(r)).length + [...b].filter((r) => !a.has(r)).length;
    if (changed > 0) diff[table] = changed;
  }
  return diff;
}

/** Every session id the log, the projections or the records name, sorted. */
export async function knownSessionIds(ex: Executor): Promise<string[]> {
  const tables = [
    ...tablesWithRole("log"),
    ...tablesWithRole("session"),
    ...tablesWithRole("record"),
  ];
  const rows = await sql<{ session_id: string }>`${
    sql.join(
      tables.map((t) => sql`SELECT session_id FROM ${sql.table(t)}`),
      sql` UNION `,
    )
  } ORDER BY session_id`.execute(ex);
  return rows.rows.map((r) => r.session_id);
}

/**
 * Rows of run-scoped tables whose run is gone, by table (no session's rebuild reaches them);
 * deleted too when `remove` is set.
 */
export async function runOrphans(
  ex: Executor,
  options: { remove: boolean },
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tablesWithRole("run")) {
    const where = sql`run_id NOT IN (SELECT run_id FROM runs)`;
    const result = options.remove
      ? Number(
        (await sql`DELETE FROM ${sql.table(table)} WHERE ${where}`.execute(ex))
          .numAffectedRows ?? 0,
      )
      : Number(
        (await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}
          WHERE ${where}`.execute(ex)).rows[0]?.n ?? 0,
      );
    if (result > 0) out[table] = result;
  }
  return out;
}
