/**
 * The store on libSQL (a file by default, `:memory:`, or a libSQL server): the client with a
 * busy timeout, WAL for files, migrations, and the libSQL dialect (SQLite's busy errors, FTS5)
 * for the shared SQL store. Writes run in `BEGIN IMMEDIATE` transactions (the Kysely dialect's
 * default), so writers in different processes queue on the busy timeout.
 * @module
 */
import { type Client, createClient } from "npm:@libsql/client@0.18.0";
import { LibsqlDialect } from "./kysely_driver.ts";
import { Kysely } from "npm:kysely@0.29.9";
import type { SqlDialect } from "../sql/dialect.ts";
import type { Database } from "../sql/schema.ts";
import { createSqlStore, type SqlStore } from "../sql/store.ts";
import { fts5Search } from "./fts.ts";
import { migrateToLatest } from "./migrations.ts";

/** Options for {@linkcode openStore}. */
export interface OpenStoreOptions {
  /** How long a writer waits for a lock held by another process, in ms. */
  busyTimeoutMs?: number;
  /** Current time, for event timestamps. */
  now?: () => string;
}

/** The libSQL store: the port plus what adapters (viewer, CLI) need besides. */
export interface SqliteStore extends SqlStore {
  /** The underlying client. */
  readonly client: Client;
  /** Closes the database. */
  close(): Promise<void>;
}

function isBusy(error: unknown): boolean {
  const text = String((error as { code?: string })?.code ?? "") +
    String((error as Error)?.message ?? "");
  return /SQLITE_BUSY|database is locked/i.test(text);
}

/** libSQL's parts of the SQL store. */
export const libsqlDialect: SqlDialect = { isBusy, search: fts5Search };

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

/** Opens (creating and migrating if needed) a libSQL database as a waymark store. */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<SqliteStore> {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const client = createClient(
    { url, timeout: busyTimeoutMs } as Parameters<typeof createClient>[0],
  );
  await withBusyRetry(busyTimeoutMs, async () => {
    if (url.startsWith("file:")) {
      await client.execute("PRAGMA journal_mode = WAL");
      await client.execute("PRAGMA synchronous = NORMAL");
    }
    await migrateToLatest(client);
  });
  const db = new Kysely<Database>({ dialect: new LibsqlDialect({ client }) });
  const now = options.now ?? (() => new Date().toISOString());
  return {
    ...createSqlStore(db, { dialect: libsqlDialect, now }),
    client,
    async close() {
      await db.destroy();
      client.close();
    },
  };
}
