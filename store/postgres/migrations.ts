/**
 * Running the shared migrations (`../sql/migrations.ts`) on PostgreSQL: `events.seq` is an
 * identity column and the full-text tables hold `tsvector` columns under GIN indexes. All of it
 * runs in one transaction under a transaction-scoped advisory lock, so servers starting together
 * on a new database migrate it once: the others wait on the lock, then find the work done (a
 * server killed half-way leaves nothing; PostgreSQL rolls DDL back with the rest).
 * @module
 */
import { type Kysely, sql } from "npm:kysely@0.29.9";
import type { SchemaStatus } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import {
  type MigrationDialect,
  migrationFailed,
  MIGRATIONS,
  newerSchemaMessage,
  schemaStatusOf,
} from "../sql/migrations.ts";
import type { Database } from "../sql/database.ts";
import { systemClock } from "../system.ts";

/** The advisory lock waymark's migrations take (per database): "waymar" in ASCII. */
const MIGRATION_LOCK = 0x7761796d6172;

async function searchTable(db: Kysely<unknown>, name: string, key: string[]): Promise<void> {
  let table = db.schema.createTable(name);
  for (const column of key) table = table.addColumn(column, "text", (c) => c.notNull());
  await table.addColumn("text", "text", (c) => c.notNull())
    .addColumn("tsv", sql`tsvector`, (c) => c.notNull())
    .addPrimaryKeyConstraint(`${name}_pk`, key as never)
    .execute();
  await db.schema.createIndex(`${name}_tsv`).on(name).using("gin").column("tsv").execute();
}

/**
 * Percent of each page filled by inserts on tables whose rows every advance updates: the rest is
 * room for the updated rows' new versions (`roomForUpdates`).
 */
const UPDATED_FILL = 80;

/** PostgreSQL's parts of the migrations. */
export const postgresMigrationDialect: MigrationDialect = {
  sequenceKey: (column) => column.primaryKey().generatedByDefaultAsIdentity(),
  derivedColumn: (column, expression) => column.generatedAlwaysAs(sql.raw(expression)).stored(),
  async roomForUpdates(db, table) {
    await sql`ALTER TABLE ${sql.table(table)} SET (fillfactor = ${sql.lit(UPDATED_FILL)})`
      .execute(db);
  },
  async createSearchTables(db) {
    await searchTable(db, "search_titles", ["run_id"]);
    await searchTable(db, "search_tips", ["run_id"]);
    await searchTable(db, "search_outputs", ["run_id", "node_id"]);
  },
};

async function appliedNames(ex: Executor): Promise<string[]> {
  const table = await sql<{ name: string | null }>`
    SELECT CAST(to_regclass('waymark_migrations') AS text) AS name`.execute(ex);
  if (!table.rows[0]?.name) return [];
  const rows = await sql<{ name: string }>`SELECT name FROM waymark_migrations`.execute(ex);
  return rows.rows.map((r) => r.name);
}

/** Reads the schema status without changing anything (a database without the table is new). */
export async function readSchemaStatus(db: Executor): Promise<SchemaStatus> {
  return schemaStatusOf(await appliedNames(db));
}

/**
 * Brings the database to the latest schema, in one `READ COMMITTED` transaction (so what
 * another server committed while this one waited on the lock is seen) under the advisory lock.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  if ((await readSchemaStatus(db)).pending.length === 0) return;
  await db.transaction().setIsolationLevel("read committed").execute(async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(tx);
    await sql`CREATE TABLE IF NOT EXISTS waymark_migrations
      (name text PRIMARY KEY, applied_at text NOT NULL)`.execute(tx);
    const status = schemaStatusOf(await appliedNames(tx));
    if (status.unknown.length > 0) throw new Error(newerSchemaMessage(status.unknown));
    for (const name of status.pending) {
      try {
        await MIGRATIONS[name]!.up(tx as unknown as Kysely<unknown>, postgresMigrationDialect);
      } catch (error) {
        throw migrationFailed(name, error);
      }
      await tx.insertInto("waymark_migrations" as never).values(
        { name, applied_at: systemClock.now() } as never,
      ).execute();
    }
  });
}
