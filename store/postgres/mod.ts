/**
 * The store on PostgreSQL, a team store many machines share: a small `pg` pool behind Kysely's
 * Postgres dialect (transactions `SERIALIZABLE`, tried again when the server refuses one for
 * another's sake), migrations under an advisory lock, and `tsvector` full-text search. The
 * shared SQL code runs on it unchanged; the engine cannot tell it from the libSQL store.
 * @module
 */
import { Kysely, sql } from "npm:kysely@0.29.9";
// @ts-types="npm:@types/pg@8.23.1"
import type pg from "npm:pg@8.23.1";
import { StorageBusyError } from "../../engine/model/result.ts";
import type { SqlDialect } from "../sql/dialect.ts";
import { newerSchemaMessage } from "../sql/migrations.ts";
import type { Database } from "../sql/database.ts";
import { createSqlStore, type OpenedSqlStore, type OpenStoreOptions } from "../sql/store.ts";
import { redactDbUrl } from "../db_url.ts";
import {
  createPool,
  readAfterCommit,
  readAhead,
  sendAhead,
  WaymarkPostgresDialect,
} from "./driver.ts";
import { isConflict, read, storageError, transact } from "./pg_faults.ts";
import { tsvectorSearch } from "./fts.ts";
import { appendToSession } from "./append.ts";
import { postgresMaintenance } from "./maintenance.ts";
import { migrateToLatest, readSchemaStatus } from "./migrations.ts";
import { DEFAULT_BUSY_TIMEOUT_MS } from "../open_options.ts";
import { systemClock } from "../system.ts";

/** Tries of a read (or of a write before its commit) when the connection was lost. */
const CONNECTION_TRIES = 3;

/** The PostgreSQL store: the port plus what adapters (viewer, CLI) need besides. */
export interface PostgresStore extends OpenedSqlStore {
  /** The connection pool. */
  readonly pool: pg.Pool;
}

/** PostgreSQL's parts of the SQL store, for a server named `location` in messages. */
export function postgresDialect(options: { location: string; busyTimeoutMs: number }): SqlDialect {
  const policy = {
    location: options.location,
    conflictMs: options.busyTimeoutMs,
    connectionTries: CONNECTION_TRIES,
  };
  return {
    storageError,
    isBusy: (error) => error instanceof StorageBusyError || isConflict(error),
    search: tsvectorSearch,
    transact: (db, fn) => transact(db, fn, policy),
    read: (fn) => read(fn, CONNECTION_TRIES),
    sendAhead,
    // A sequential scan takes a predicate lock on its whole table, so under SERIALIZABLE two
    // calls writing different runs aborted each other whenever the planner scanned a small
    // table instead of using its index (every statement of a call has one). Only the calls'
    // writes: maintenance (gc, import) scans on purpose and got many times slower without.
    planWrites: async (tx) => void await sql`set local enable_seqscan = off`.execute(tx),
    appendToSession,
    readAhead,
    readAfterCommit,
  };
}

/** Opens (migrating if needed) the PostgreSQL database at `url` as a waymark store. */
export async function openPostgresStore(
  url: string,
  options: OpenStoreOptions = {},
): Promise<PostgresStore> {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const location = redactDbUrl(url);
  const pool = createPool(url, {
    connectTimeoutMs: Math.max(busyTimeoutMs, 2000),
    durability: options.durability,
  });
  const db = new Kysely<Database>({ dialect: new WaymarkPostgresDialect({ pool }) });
  const dialect = postgresDialect({ location, busyTimeoutMs });
  try {
    // A database from a newer waymark is refused before anything touches it.
    const { unknown } = await read(() => readSchemaStatus(db), CONNECTION_TRIES);
    if (unknown.length > 0) throw new Error(`${location}: ${newerSchemaMessage(unknown)}`);
    if (options.migrate !== false) await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const now = options.now ?? systemClock.now;
  return {
    ...createSqlStore(db, { dialect, now, location }),
    pool,
    maintenance: postgresMaintenance(db, pool),
    close: () => db.destroy(),
  };
}
