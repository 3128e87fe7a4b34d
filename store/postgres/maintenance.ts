/**
 * PostgreSQL's maintenance parts: the server keeps its own consistency and write-ahead log, so
 * the integrity check looks for indexes left invalid, `VACUUM` gives space back, a backup is a
 * libSQL file copied from one snapshot (`backup.ts`), and doctor hears the server's version,
 * the round trip and the pool's state.
 * @module
 */
import { type Kysely, sql } from "npm:kysely@0.29.9";
// @ts-types="npm:@types/pg@8.23.1"
import type pg from "npm:pg@8.23.1";
import type { MaintenanceDialect, ServerInfo } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import type { Database } from "../sql/database.ts";
import { backupToLibsql, reindex } from "./backup.ts";
import { tsvectorSearch } from "./fts.ts";
import { migrateToLatest, postgresMigrationDialect, readSchemaStatus } from "./migrations.ts";

async function invalidIndexes(ex: Executor): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    SELECT CAST(i.indexrelid AS regclass)::text AS name FROM pg_index i
    JOIN pg_class c ON c.oid = i.indrelid
    WHERE NOT i.indisvalid AND c.relnamespace = CAST(current_schema() AS regnamespace)`
    .execute(ex);
  return rows.rows.map((r) => `index ${r.name} is invalid (rebuild it with REINDEX)`);
}

async function serverInfo(ex: Executor, pool: pg.Pool): Promise<ServerInfo> {
  const started = performance.now();
  await sql`SELECT 1`.execute(ex);
  const latencyMs = Number((performance.now() - started).toFixed(2));
  const row = await sql<{ version: string }>`SELECT current_setting('server_version') AS version`
    .execute(ex);
  const version = row.rows[0]?.version ?? "unknown";
  const poolState = {
    size: pool.options.max,
    open: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
  };
  return {
    message:
      `PostgreSQL ${version}, round trip ${latencyMs} ms, pool ${poolState.open} of ${poolState.size} connections open (${poolState.idle} idle, ${poolState.waiting} waiting)`,
    details: { server: "postgresql", version, latencyMs, pool: poolState },
  };
}

const SEARCH_TABLES = ["search_titles", "search_tips", "search_outputs"];

async function missingSearchTables(ex: Executor): Promise<string[]> {
  const problems: string[] = [];
  for (const table of SEARCH_TABLES) {
    const found = await sql<{ name: string | null }>`
      SELECT CAST(to_regclass(${table}) AS text) AS name`.execute(ex);
    if (!found.rows[0]?.name) problems.push(`${table}: no such table`);
  }
  return problems;
}

/** Drops the search tables, makes them anew and indexes every run and output, in one transaction. */
async function rebuildSearch(db: Kysely<Database>): Promise<void> {
  await db.transaction().execute(async (tx) => {
    for (const table of SEARCH_TABLES) {
      await sql`DROP TABLE IF EXISTS ${sql.table(table)} CASCADE`.execute(tx);
    }
    await postgresMigrationDialect.createSearchTables(tx as unknown as Kysely<unknown>);
    await reindex(tx, tsvectorSearch);
  });
}

/** The maintenance parts for the database open on `db` through `pool`. */
export function postgresMaintenance(db: Kysely<Database>, pool: pg.Pool): MaintenanceDialect {
  return {
    integrityCheck: (ex) => invalidIndexes(ex),
    searchProblems: (ex) => missingSearchTables(ex),
    // the server refuses text that is not in the database's encoding
    badText: () => Promise.resolve([]),
    rebuildSearch: () => rebuildSearch(db),
    async vacuum(ex) {
      // and fresh statistics for the planner (after an import or a large gc)
      await sql`VACUUM (ANALYZE)`.execute(ex);
    },
    backupTo: (_ex, file) => backupToLibsql(db, file),
    async databaseBytes(ex) {
      const row = await sql<{ n: number }>`SELECT pg_database_size(current_database()) AS n`
        .execute(ex);
      return Number(row.rows[0]?.n ?? 0);
    },
    // the server keeps and checkpoints its own write-ahead log
    walBytes: () => Promise.resolve(null),
    checkpointWal: () => Promise.resolve(),
    schemaStatus: () => readSchemaStatus(db),
    migrate: () => migrateToLatest(db),
    serverInfo: (ex) => serverInfo(ex, pool),
  };
}
