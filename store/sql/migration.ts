/**
 * What one migration is, and what a dialect writes its own way in the migrations
 * (`migrations.ts` holds the migrations themselves).
 * @module
 */
import type { ColumnDefinitionBuilder, Kysely } from "npm:kysely@0.29.9";

/** What a dialect writes its own way in the migrations. */
export interface MigrationDialect {
  /** `events.seq`: an integer primary key the database numbers in insertion order. */
  sequenceKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /**
   * The three full-text tables (`search_titles`, `search_tips`, `search_outputs`) and their
   * indexes, as the dialect's `FullTextSearch` reads and writes them.
   */
  createSearchTables(db: Kysely<unknown>): Promise<void>;
  /**
   * What a dialect whose full-text index of outputs catches up before it is read (rather than
   * as outputs are written) keeps of how far it has come; a dialect that indexes as it writes
   * has none.
   */
  createSearchBacklog?(db: Kysely<unknown>): Promise<void>;
  /**
   * A column the database derives from `expression` over the row's other columns, for indexes
   * only (never written): PostgreSQL stores it (its only kind), SQLite computes it as it is read
   * (a column added to a table there cannot be stored).
   */
  derivedColumn(column: ColumnDefinitionBuilder, expression: string): ColumnDefinitionBuilder;
  /**
   * Room kept free on each page of `table` for its rows' new versions (PostgreSQL's
   * `fillfactor`), so an update that changes no indexed column stays on its page (HOT); none
   * where rows are updated in place.
   */
  roomForUpdates?(db: Kysely<unknown>, table: string): Promise<void>;
}

/** One migration: a function that brings the schema one step forward. */
export interface Migration {
  /** Applies the migration; runs inside the migrating transaction. */
  up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void>;
}
