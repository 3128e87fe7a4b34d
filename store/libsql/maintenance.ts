/**
 * libSQL's maintenance parts: SQLite's `integrity_check`, FTS5's own check and a rebuild of its
 * tables, `VACUUM`,
 * `VACUUM INTO` for a consistent copy while other processes write, the database's size and
 * the WAL file beside it.
 * @module
 */
import { stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { type Kysely, type RawBuilder, sql } from "npm:kysely@0.29.9";
import type { StoreClient } from "./native_pool.ts";
import type { MaintenanceDialect } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { badText } from "./bad_text.ts";
import { indexed } from "./fts_backlog.ts";
import { libsqlMigrationDialect, migrateToLatest, readSchemaStatus } from "./migrations.ts";

/** The file a `file:` URL names, or `null` for `:memory:` and servers. */
export function databaseFile(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path = url.startsWith("file://") ? fileURLToPath(url) : url.slice("file:".length);
  return path.split("?")[0] || null;
}

async function fileBytes(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch {
    return null;
  }
}

const FTS_TABLES = ["search_titles", "search_tips", "search_outputs"];
/** A message about one of the FTS5 tables (doctor's search-index check reports those). */
const FTS_NAMED = /\bsearch_(titles|tips|outputs)\b/;

/** The problems an integrity pragma reports, less those of the FTS5 tables. */
async function integrityLines(ex: Executor, pragma: RawBuilder<unknown>): Promise<string[]> {
  const rows = await (pragma as RawBuilder<Record<string, unknown>>).execute(ex);
  return rows.rows.map((r) => String(Object.values(r)[0]))
    .filter((line) => line !== "ok" && !FTS_NAMED.test(line));
}

/** Every ordinary table (not the FTS5 virtual tables). */
async function plainTables(ex: Executor): Promise<string[]> {
  const rows = await sql<{ name: string }>`SELECT name FROM sqlite_master
    WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'`.execute(ex);
  return rows.rows.map((r) => r.name);
}

/** The tables FTS5 keeps behind each of its tables. */
const FTS_SHADOWS = ["data", "idx", "content", "docsize", "config"];

/**
 * Drops the FTS5 tables (and any of their shadow tables left behind), makes them anew and
 * moves the backlog's marks back to the start, so the catch-up indexes every run and output.
 */
async function rebuildFts(tx: Executor): Promise<void> {
  for (const table of FTS_TABLES) {
    await sql`DROP TABLE IF EXISTS ${sql.table(table)}`.execute(tx).catch(async () => {
      // too damaged for FTS5 to open, so to drop: its schema row goes (the shadow tables next),
      // and RESET has the connection read the schema again
      await sql`PRAGMA writable_schema = ON`.execute(tx);
      try {
        await sql`DELETE FROM sqlite_master WHERE type = 'table' AND name = ${table}`.execute(tx);
      } finally {
        await sql`PRAGMA writable_schema = RESET`.execute(tx);
      }
    });
    for (const shadow of FTS_SHADOWS) {
      await sql`DROP TABLE IF EXISTS ${sql.table(`${table}_${shadow}`)}`.execute(tx);
    }
  }
  await libsqlMigrationDialect.createSearchTables(tx as unknown as Kysely<unknown>);
  await sql`UPDATE search_backlog SET through = 0`.execute(tx);
  await indexed(tx);
}

/** The maintenance parts for the database at `url`, open on `client`. */
export function libsqlMaintenance(url: string, client: StoreClient): MaintenanceDialect {
  const file = databaseFile(url);
  return {
    async integrityCheck(ex) {
      try {
        return await integrityLines(ex, sql`PRAGMA integrity_check`);
      } catch (error) {
        // an FTS5 table too damaged to open stops the whole check: check the rest table by table
        if (!FTS_NAMED.test((error as Error).message)) return [(error as Error).message];
        const problems: string[] = [];
        for (const table of await plainTables(ex)) {
          try {
            problems.push(
              ...await integrityLines(ex, sql`PRAGMA integrity_check(${sql.lit(table)})`),
            );
          } catch (failed) {
            // damage bad enough that the check itself stops is the check's answer
            problems.push((failed as Error).message);
          }
        }
        return problems;
      }
    },
    async searchProblems(ex) {
      const problems: string[] = [];
      for (const table of FTS_TABLES) {
        try {
          await sql`INSERT INTO ${sql.table(table)}(${sql.table(table)}) VALUES ('integrity-check')`
            .execute(ex);
        } catch (error) {
          problems.push(`${table}: ${(error as Error).message}`);
        }
      }
      return problems;
    },
    rebuildSearch: (db) => db.transaction().execute((tx) => rebuildFts(tx)),
    badText,
    async vacuum(ex) {
      await sql`VACUUM`.execute(ex);
    },
    async backupTo(ex, target) {
      await sql`VACUUM INTO ${target}`.execute(ex);
    },
    async databaseBytes(ex) {
      const pages = await sql<{ n: number }>`SELECT page_count * page_size AS n
        FROM pragma_page_count(), pragma_page_size()`.execute(ex);
      return Number(pages.rows[0]?.n ?? 0);
    },
    walBytes: () => file ? fileBytes(`${file}-wal`) : Promise.resolve(null),
    async checkpointWal(ex) {
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(ex);
    },
    schemaStatus: () => readSchemaStatus(client),
    migrate: () => migrateToLatest(client),
    serverInfo: () => Promise.resolve(null),
  };
}
