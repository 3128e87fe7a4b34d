/**
 * Listings by last change without indexing the last change (`0017_activity_minutes`).
 *
 * Every advance updates its session's and its run's `updated_at`. While that column was indexed
 * (`sessions_by_updated`, `runs_by_updated`, `runs_by_workspace`), no such update could be HOT on
 * PostgreSQL: each wrote a new entry into every index of the table, the primary key's among them,
 * and under `SERIALIZABLE` the predicate locks other transactions held on those index pages made
 * concurrent advances of unrelated runs refuse each other (20–30% of the write transactions at
 * eight agents; `docs/team_service.md`).
 *
 * So the listings' indexes hold `updated_minute` instead: the first 16 characters of `updated_at`
 * (`2026-12-07T15:48`), a column the database derives and an advance changes only when a new
 * minute begins. A listing orders by `updated_minute DESC, updated_at DESC` and then its own
 * tiebreak: the same order as `updated_at DESC` alone, since a prefix never sorts after the
 * prefix of a greater text, and the index gives the first key (PostgreSQL sorts each minute's rows
 * incrementally, SQLite sorts "the right part of the ORDER BY"). On PostgreSQL the tables also
 * keep a fifth of each page free, so an updated row's new version finds room beside the old one.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import type { Migration, MigrationDialect } from "./migration.ts";

/** Characters of an ISO-8601 time kept in `updated_minute`: through the minute. */
export const MINUTE_CHARS = 16;

/** The minute of `at` as `updated_minute` holds it (the SQL's `substr(at, 1, 16)`). */
export function minuteOf(at: string): string {
  return at.slice(0, MINUTE_CHARS);
}

/** The `updated_minute` column of `table`, derived by the database from `updated_at`. */
async function addMinute(db: Kysely<unknown>, dialect: MigrationDialect, table: string) {
  await db.schema.alterTable(table).addColumn(
    "updated_minute",
    "text",
    (c) => dialect.derivedColumn(c, `substr(updated_at, 1, ${MINUTE_CHARS})`),
  ).execute();
}

/** Migration `0017_activity_minutes`: see the module's note. */
export const activityMinutes: Migration = {
  async up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
    for (const table of ["sessions", "runs"]) {
      // before the column: adding a stored column rewrites the table, at the new fill factor
      await dialect.roomForUpdates?.(db, table);
      await addMinute(db, dialect, table);
    }
    await db.schema.dropIndex("sessions_by_updated").execute();
    await db.schema.dropIndex("runs_by_updated").execute();
    await db.schema.dropIndex("runs_by_workspace").execute();
    await db.schema.createIndex("sessions_by_minute").on("sessions").column("updated_minute")
      .execute();
    await db.schema.createIndex("runs_by_minute").on("runs").column("updated_minute").execute();
    await db.schema.createIndex("runs_by_workspace_minute").on("runs")
      .columns(["workspace", "updated_minute"]).execute();
  },
};
