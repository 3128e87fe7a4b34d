/**
 * A waymark store over any SQL dialect: the reader, the writer and diagnostics assembled on
 * one Kysely database. A dialect's `open` (e.g. `store/libsql/`) creates the database and
 * hands it here.
 * @module
 */
import { type Kysely, sql } from "npm:kysely@0.29.9";
import type { Store } from "../../engine/model/ports.ts";
import type { CompiledWorkflow } from "../../engine/workflow/compiled.ts";
import type { MaintenanceDialect, SqlDialect } from "./dialect.ts";
import { withStorageFaults } from "./faults.ts";
import { compileEvery } from "./prepared.ts";
import { createReader } from "./reader.ts";
import type { Database } from "./database.ts";
import { createWrite } from "./writer.ts";
import { createWriteAttempt } from "./attempt_write.ts";
import type { Durability } from "../open_options.ts";

/** A SQL store: the port plus what adapters (viewer, CLI) need besides. */
export interface SqlStore extends Store {
  /** The typed query builder, for read-only adapters. */
  readonly db: Kysely<Database>;
  /** The dialect's parts (busy errors, full-text search), for maintenance code. */
  readonly dialect: SqlDialect;
  /** Row counts of the main tables (diagnostics and tests). */
  counts(): Promise<Record<keyof Database, number>>;
  /**
   * Compiles every prepared query (`prepared.ts`) for this dialect and, where the driver keeps
   * prepared statements (a libSQL file's native connections), prepares each on the connection
   * the next query gets; runs none, so it reads and writes nothing. What a process's first
   * calls would do the first time they run each query (the start-up rehearsal).
   */
  prepareQueries(): Promise<void>;
}

/** A SQL store opened on its database by a dialect's opener. */
export interface OpenedSqlStore extends SqlStore {
  /** The dialect's parts for doctor, gc and backup. */
  readonly maintenance: MaintenanceDialect;
  /** Closes the database (or the connection pool). */
  close(): Promise<void>;
}

/** Options of every dialect's opener. */
export interface OpenStoreOptions {
  /**
   * How long a write waits for the database (a lock held by another process; a transaction
   * refused for another's sake, tried again), in ms; default `DEFAULT_BUSY_TIMEOUT_MS`
   * (`open_options.ts`).
   */
  busyTimeoutMs?: number;
  /** Current time, for event timestamps. */
  now?: () => string;
  /**
   * Whether to bring the schema to the latest version (default true). Doctor opens without
   * migrating, so it reports what it finds instead of changing it.
   */
  migrate?: boolean;
  /**
   * How durable a commit is ({@linkcode Durability}); default `DEFAULT_DURABILITY`. A
   * PostgreSQL server otherwise syncs as its own configuration says.
   */
  durability?: Durability;
}

const COUNTED = [
  "events",
  "sessions",
  "runs",
  "workflow_snapshots",
  "nodes",
  "edges",
  "attempts",
  "outputs",
] as const;

async function counts(db: Kysely<Database>): Promise<Record<keyof Database, number>> {
  const out = {} as Record<keyof Database, number>;
  for (const table of COUNTED) {
    const row = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`
      .execute(db);
    out[table] = Number(row.rows[0]?.n ?? 0);
  }
  return out;
}

/** Options of {@linkcode createSqlStore}. */
export interface SqlStoreOptions {
  /** The dialect's parts. */
  dialect: SqlDialect;
  /** Current time, for event timestamps. */
  now: () => string;
  /** The file or URL, which names the database in storage errors. */
  location: string;
  /** Prepares compiled queries' SQL where the driver keeps prepared statements of its own. */
  prepareStatements?: (sqls: readonly string[]) => void;
}

/** The store on an opened, migrated database. */
export function createSqlStore(db: Kysely<Database>, options: SqlStoreOptions): SqlStore {
  const shared = {
    db,
    snapshots: new Map<string, CompiledWorkflow>(),
    storedContexts: new WeakMap<object, string>(),
  };
  const { dialect, now, location } = options;
  return withStorageFaults({
    ...createReader({ ex: db, search: dialect.search }, shared),
    db,
    dialect,
    write: createWrite(db, { dialect, now, shared }),
    writeAttempt: createWriteAttempt(db, { dialect, now, shared }),
    counts: () => counts(db),
    // synchronous work; what it throws becomes the rejection
    prepareQueries: () =>
      new Promise<void>((resolve) => {
        const { sqls, failure } = compileEvery(db);
        options.prepareStatements?.(sqls);
        if (failure) throw failure;
        resolve();
      }),
  }, { dialect, location, db });
}
