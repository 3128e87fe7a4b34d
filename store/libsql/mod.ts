/**
 * The store on libSQL (a file by default, `:memory:`, or a libSQL server): the client with a
 * busy timeout, WAL for files, migrations, and the libSQL dialect (SQLite's fault codes, FTS5)
 * for the shared SQL store. Writes run in `BEGIN IMMEDIATE` transactions (the Kysely dialect's
 * default), so writers in different processes queue on the busy timeout.
 * @module
 */
import { LibsqlDialect } from "./kysely_driver.ts";
import { nativeClient, NativePool, type StoreClient } from "./native_pool.ts";
import { Kysely } from "npm:kysely@0.29.9";
import type { SqlDialect } from "../sql/dialect.ts";
import type { Database } from "../sql/database.ts";
import { createSqlStore, type OpenedSqlStore, type OpenStoreOptions } from "../sql/store.ts";
import { StorageBusyError } from "../../engine/model/result.ts";
import { isBusy, storageError } from "../storage_errors.ts";
import { fts5Search } from "./fts.ts";
import { libsqlMaintenance } from "./maintenance.ts";
import { createDatabaseFile } from "../private_files.ts";
import { migrateToLatest, newerSchemaMessage, readSchemaStatus } from "./migrations.ts";
import { DEFAULT_BUSY_TIMEOUT_MS, DEFAULT_DURABILITY, type Durability } from "../open_options.ts";
import { systemClock } from "../system.ts";
import { localFilePath } from "../db_url.ts";

export type { OpenStoreOptions } from "../sql/store.ts";

/** The libSQL store: the port plus what adapters (viewer, CLI) need besides. */
export interface SqliteStore extends OpenedSqlStore {
  /**
   * A client for statements besides the store's own (maintenance, tests): a native connection
   * of its own for a file, `@libsql/client` for `:memory:` and servers.
   */
  readonly client: StoreClient;
  /**
   * Runs a per-connection PRAGMA on the store's own connections (besides the client's), now
   * and on those it opens later: how tests limit the file's size or make it read-only.
   */
  pragmaEverywhere(sql: string): void;
}

/** libSQL's parts of the SQL store. */
export const libsqlDialect: SqlDialect = {
  storageError,
  isBusy: (error) => error instanceof StorageBusyError || isBusy(error),
  search: fts5Search,
  // writers queue on SQLite's lock (the busy timeout) instead of being refused
  transact: (db, fn) => db.transaction().execute(fn),
  read: (fn) => fn(),
};

/**
 * Runs `fn`, retrying while the database is locked by another process, for up to `timeoutMs`.
 * Setting WAL mode on a new file can report "locked" at once instead of waiting.
 */
async function withBusyRetry(timeoutMs: number, fn: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 10;; wait = Math.min(wait * 2, 200)) {
    try {
      return await fn();
    } catch (error) {
      if (!isBusy(error) || Date.now() + wait > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** SQLite's `synchronous` setting for each durability (WAL mode: `NORMAL` syncs at checkpoints). */
const SYNCHRONOUS: Record<Durability, string> = { normal: "NORMAL", full: "FULL" };

function synchronousPragma(options: OpenStoreOptions): string {
  return `PRAGMA synchronous = ${SYNCHRONOUS[options.durability ?? DEFAULT_DURABILITY]}`;
}

/** The client of a database without a native pool (`:memory:`, servers): `@libsql/client`. */
async function libsqlClient(url: string, busyTimeoutMs: number): Promise<StoreClient> {
  const { createClient } = await import("npm:@libsql/client@0.18.0");
  const client = createClient(
    { url, timeout: busyTimeoutMs } as Parameters<typeof createClient>[0],
  );
  // the same calls; the client's types are wider (named arguments, more result fields)
  return client as unknown as StoreClient;
}

/**
 * Refuses a database from a newer waymark, sets WAL and the durability on a file, and migrates
 * when asked: one read when the schema is current.
 */
async function prepare(
  client: StoreClient,
  at: { url: string; options: OpenStoreOptions; busyTimeoutMs: number },
): Promise<void> {
  await withBusyRetry(at.busyTimeoutMs, async () => {
    // A database from a newer waymark is refused before anything touches it.
    const { unknown, pending } = await readSchemaStatus(client);
    if (unknown.length > 0) throw new Error(`${at.url}: ${newerSchemaMessage(unknown)}`);
    if (at.url.startsWith("file:")) {
      await client.execute("PRAGMA journal_mode = WAL");
      await client.execute(synchronousPragma(at.options));
    }
    if (at.options.migrate !== false && pending.length > 0) await migrateToLatest(client);
  });
}

/** Opens (creating and migrating if needed) a libSQL database as a waymark store. */
export async function openLibsqlStore(
  url: string,
  options: OpenStoreOptions = {},
): Promise<SqliteStore> {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const path = localFilePath(url);
  if (path !== undefined) createDatabaseFile(path);
  const pool = path === undefined
    ? undefined
    : new NativePool(path, { busyTimeoutMs, setup: [synchronousPragma(options)] });
  let client: StoreClient;
  if (pool) {
    // the schema check and migrations run on what becomes the pool's first connection
    const boot = pool.acquire();
    try {
      await prepare(nativeClient(() => boot), { url, options, busyTimeoutMs });
    } catch (error) {
      pool.close();
      throw error;
    }
    pool.release(boot);
    client = nativeClient(() => pool.acquire());
  } else {
    client = await libsqlClient(url, busyTimeoutMs);
    try {
      await prepare(client, { url, options, busyTimeoutMs });
    } catch (error) {
      client.close();
      throw error;
    }
  }
  const dialect = pool ? new LibsqlDialect({ pool }) : new LibsqlDialect({ client });
  const db = new Kysely<Database>({ dialect });
  const now = options.now ?? systemClock.now;
  return {
    ...createSqlStore(db, {
      dialect: libsqlDialect,
      now,
      location: url.replace(/^file:/, ""),
      prepareStatements: pool && ((sqls) => pool.prepare(sqls)),
    }),
    client,
    maintenance: libsqlMaintenance(url, client),
    pragmaEverywhere: (sql) => pool?.applyEverywhere(sql),
    async close() {
      await db.destroy();
      client.close();
    },
  };
}
