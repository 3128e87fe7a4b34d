/**
 * libSQL's maintenance parts: SQLite's `integrity_check` (and FTS5's own), `VACUUM`,
 * `VACUUM INTO` for a consistent copy while other processes write, the database's size and
 * the WAL file beside it.
 * @module
 */
import { stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { sql } from "npm:kysely@0.29.9";
import type { StoreClient } from "./native_pool.ts";
import type { MaintenanceDialect } from "../sql/dialect.ts";
import { migrateToLatest, readSchemaStatus } from "./migrations.ts";

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

/** The maintenance parts for the database at `url`, open on `client`. */
export function libsqlMaintenance(url: string, client: StoreClient): MaintenanceDialect {
  const file = databaseFile(url);
  return {
    async integrityCheck(ex) {
      const problems: string[] = [];
      try {
        const rows = await sql<Record<string, unknown>>`PRAGMA integrity_check`.execute(ex);
        problems.push(
          ...rows.rows.map((r) => String(Object.values(r)[0])).filter((line) => line !== "ok"),
        );
      } catch (error) {
        // damage bad enough that the check itself stops is the check's answer
        problems.push((error as Error).message);
      }
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
