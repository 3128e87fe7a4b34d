/**
 * Running the shared migrations (`../sql/migrations.ts`) on libSQL: `events.seq` is an
 * `AUTOINCREMENT` key and the full-text tables are FTS5 virtual tables; everything runs in
 * one write transaction.
 * @module
 */
import type { StoreClient } from "./native_pool.ts";
import { LibsqlDialect } from "./kysely_driver.ts";
import { Kysely, sql } from "npm:kysely@0.29.9";
import type { SchemaStatus } from "../sql/dialect.ts";
import {
  type MigrationDialect,
  migrationFailed,
  MIGRATIONS,
  newerSchemaMessage,
  schemaStatusOf,
} from "../sql/migrations.ts";
import { systemClock } from "../system.ts";

export { MIGRATIONS, newerSchemaMessage };

/**
 * SQLite numbers a new row one past the highest rowid: once rows at the top of `source` are
 * deleted, the backlog's mark comes down with them, so rows added later are never below it.
 */
function backlogFollowsDeletes(name: string, source: string) {
  const top = sql`(SELECT coalesce(max(rowid), 0) FROM ${sql.table(source)})`;
  return sql`CREATE TRIGGER ${sql.id(`search_backlog_${source}_deleted`)}
    AFTER DELETE ON ${sql.table(source)} BEGIN
      UPDATE search_backlog SET through = ${top} WHERE name = ${sql.lit(name)} AND through > ${top};
    END`;
}

/** libSQL's parts of the migrations. */
export const libsqlMigrationDialect: MigrationDialect = {
  sequenceKey: (column) => column.primaryKey().autoIncrement(),
  // VIRTUAL, SQLite's default: ALTER TABLE cannot add a STORED column
  derivedColumn: (column, expression) => column.generatedAlwaysAs(sql.raw(expression)),
  async createSearchTables(db) {
    // rowids tie each FTS row to its source row: search_titles and search_tips to `runs.rowid`,
    // search_outputs to `outputs.rowid`, so updates and joins are rowid lookups, not scans.
    for (const table of ["search_titles", "search_tips", "search_outputs"]) {
      await sql`CREATE VIRTUAL TABLE ${
        sql.table(table)
      } USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')`.execute(db);
    }
  },
  async createSearchBacklog(db) {
    // `through`: every row of the source at or below this rowid is indexed (all were, until now)
    await sql`CREATE TABLE search_backlog (name TEXT PRIMARY KEY, through INTEGER NOT NULL)`
      .execute(db);
    for (const [name, source] of [["outputs", "outputs"], ["titles", "runs"]] as const) {
      await sql`INSERT INTO search_backlog (name, through)
        SELECT ${name}, coalesce(max(rowid), 0) FROM ${sql.table(source)}`.execute(db);
      await backlogFollowsDeletes(name, source).execute(db);
    }
  },
};

type Reader = Pick<StoreClient, "execute">;

/**
 * Reads the schema status without changing anything: one read (a database without the table
 * is new, with every migration pending).
 */
export async function readSchemaStatus(client: Reader): Promise<SchemaStatus> {
  let applied: string[];
  try {
    applied = (await client.execute("SELECT name FROM waymark_migrations ORDER BY name")).rows
      .map((r) => String(r.name));
  } catch {
    applied = [];
  }
  return schemaStatusOf(applied);
}

/**
 * Brings a database to the latest schema. Everything happens in one `BEGIN IMMEDIATE`
 * transaction: processes starting together on a new database queue on the write lock, the
 * second finds the work done, and a process killed half-way leaves nothing behind (SQLite
 * rolls back DDL with the rest).
 */
export async function migrateToLatest(client: StoreClient): Promise<void> {
  const before = await readSchemaStatus(client);
  if (before.pending.length === 0 && before.unknown.length === 0) return;
  const tx = await client.transaction("write");
  try {
    await tx.execute(
      "CREATE TABLE IF NOT EXISTS waymark_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
    );
    const applied = (await tx.execute("SELECT name FROM waymark_migrations")).rows
      .map((r) => String(r.name));
    const status = schemaStatusOf(applied);
    if (status.unknown.length > 0) throw new Error(newerSchemaMessage(status.unknown));
    const db = new Kysely<unknown>({ dialect: new LibsqlDialect({ client: tx }) });
    for (const name of status.pending) {
      try {
        await MIGRATIONS[name]!.up(db, libsqlMigrationDialect);
      } catch (error) {
        throw migrationFailed(name, error);
      }
      await tx.execute({
        sql: "INSERT INTO waymark_migrations (name, applied_at) VALUES (?, ?)",
        args: [name, systemClock.now()],
      });
    }
    await tx.commit();
  } finally {
    tx.close();
  }
}
