/**
 * The connection to a PostgreSQL server: a small `pg` pool whose integers come back as
 * numbers, behind Kysely's Postgres dialect with a driver of our own. A round trip costs far
 * more than the statements an advance sends (about 0.05 to 0.1 ms on a local socket against
 * 0.01 to 0.05 ms of server time), so the driver saves round trips:
 *
 * - statements are prepared by name, once per connection (graph walks excepted, `UNNAMED`);
 * - the connection runs in `pg`'s pipeline mode, and a transaction's `BEGIN` goes out without
 *   waiting for its answer, together with the transaction's first statement (and the
 *   `SET LOCAL`s made before it: they change no data, and fail only where the `BEGIN` did, and
 *   reads sent ahead, `readAhead`, whose answers wait for the statement that makes them);
 * - once that first statement was answered, writes whose affected-row counts no one reads
 *   (`sendAhead`: the projections) go out without waiting either, and the `COMMIT` goes with
 *   the last of them: the server runs them in order, and the first failure among them is thrown
 *   by the next statement that waits (or by the commit, which it turned into a rollback), so a
 *   failed one is never committed past;
 * - an append's sequence numbers are not sent back (`append.ts`): the projections that carry
 *   them read them where they run (`pending_seqs.ts`), so the append is sent ahead too;
 * - what is sent together leaves in one socket write (`wire.ts`).
 *
 * The connection that does this is `connection.ts`; this module makes the pool and the driver,
 * and reaches a transaction's connection for what Kysely cannot say (a query's answer that no
 * one waits for, a read sent ahead or after the commit).
 *
 * Transactions are `SERIALIZABLE` unless they ask for another level (so concurrent writers
 * behave as SQLite's single writer does: one of two conflicting transactions is refused and
 * tried again).
 * @module
 */
// @ts-types="npm:@types/pg@8.23.1"
import pg from "npm:pg@8.23.1";
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type Kysely,
  type KyselyPlugin,
  PostgresDialect,
  type PostgresDialectConfig,
  type QueryResult,
  type TransactionSettings,
} from "npm:kysely@0.29.9";
import { markAhead, PgConnection } from "./connection.ts";
import { coalesceWrites, socketOf } from "./wire.ts";
import type { Durability } from "../open_options.ts";

/** Connections per process: a server answers one call at a time per chat, plus the viewer. */
export const POOL_SIZE = 4;

/** OIDs of `int8` and `numeric`, which `pg` returns as strings to keep precision. */
const INT8 = 20;
const NUMERIC = 1700;

const toNumber = (text: string) => Number(text);

/** `pg`'s type parsers, with `count(*)`, `sum()` and `bigint` columns read as numbers. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8 || oid === NUMERIC) return toNumber;
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/** A `pg` pool for `url` (any `postgres://` URL `pg` reads, e.g. `?host=/socket/dir`). */
export function createPool(
  url: string,
  options: { connectTimeoutMs: number; durability?: Durability },
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    // `full` asks for synchronous commits whatever the server's default; otherwise its own
    ...(options.durability === "full" ? { options: "-c synchronous_commit=on" } : {}),
    max: POOL_SIZE,
    types,
    application_name: "waymark",
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
    // statements are written as soon as they are made, not after the previous one's answer
    pipeline: true,
  } as pg.PoolConfig);
  // A connection the server dropped reports it twice: as the failure of the query in flight
  // (handled where it was made) and as an `error` event, which would end the process if no one
  // listened. The pool removes an idle one; one in use is dropped when it is given back.
  pool.on("error", () => {});
  pool.on("connect", (client: pg.PoolClient) => {
    client.on("error", () => {});
    const socket = socketOf(client);
    if (socket) coalesceWrites(socket);
  });
  return pool;
}
/** Marks writes without `RETURNING` (nothing to read but a row count no one asks for). */
const SEND_AHEAD: KyselyPlugin = {
  transformQuery({ node, queryId }) {
    const write = node.kind === "InsertQueryNode" || node.kind === "UpdateQueryNode" ||
      node.kind === "DeleteQueryNode";
    if (write && !node.returning) markAhead(queryId);
    return node;
  },
  transformResult: ({ result }) => Promise.resolve(result),
};

/**
 * `query` marked as not waited for inside a transaction, as `sendAhead`'s writes are (for
 * statements compiled by hand, which no plugin sees: PostgreSQL's append, `append.ts`).
 */
export function sentAhead<Q extends CompiledQuery>(query: Q): Q {
  markAhead(query.queryId);
  return query;
}

/**
 * `tx` for writes whose affected-row counts are not read: inside a transaction their
 * statements are sent without waiting for the answers (reads and `RETURNING` still wait).
 */
export function sendAhead<K extends { withPlugin(plugin: KyselyPlugin): K }>(tx: K): K {
  return tx.withPlugin(SEND_AHEAD);
}

/**
 * Runs `query`, a read, on the connection of the transaction `tx` right after its `COMMIT`,
 * sent with it (see `PgConnection.afterCommit`). Asked while no statement of `tx` is running
 * (as a call's writer asks, after its appends): otherwise, or outside a transaction, refused,
 * and the caller reads on its own.
 */
export function readAfterCommit<DB>(
  tx: Kysely<DB>,
  query: CompiledQuery,
): Promise<QueryResult<unknown>> {
  const connection = idleConnection(tx);
  if (!connection) return Promise.reject(new Error("the transaction's connection is busy"));
  return connection.afterCommit(query);
}

/**
 * Sends `query`, a read, in the transaction `tx` without waiting for its answer (see
 * `PgConnection.readAhead`). Asked while no statement of `tx` is running (as the writer asks,
 * before the transaction's first read); otherwise nothing is sent, and the query runs when made.
 */
export function readAhead<DB>(tx: Kysely<DB>, query: CompiledQuery): void {
  idleConnection(tx)?.readAhead(query);
}

/** The connection of `tx` when it runs no statement (then it is handed over at once). */
function idleConnection<DB>(tx: Kysely<DB>): PgConnection | undefined {
  let connection: DatabaseConnection | undefined;
  void tx.getExecutor().provideConnection((c) => Promise.resolve(void (connection = c)));
  return connection instanceof PgConnection ? connection : undefined;
}

/** The driver: pooled connections, transactions whose `BEGIN` does not wait. */
class PgDriver implements Driver {
  readonly #pool: pg.Pool;
  readonly #connections = new WeakMap<pg.PoolClient, PgConnection>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.#pool.connect();
    let connection = this.#connections.get(client);
    if (!connection) {
      connection = new PgConnection(client);
      this.#connections.set(client, connection);
    }
    return connection;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ?? "serializable";
    const mode = settings.accessMode ? ` ${settings.accessMode}` : "";
    (connection as PgConnection).begin(`start transaction isolation level ${level}${mode}`);
    return Promise.resolve();
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as PgConnection).commit();
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as PgConnection).rollback();
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PgConnection).release();
    return Promise.resolve();
  }

  async destroy(): Promise<void> {
    await this.#pool.end();
  }
}

/** Kysely's Postgres dialect over our driver (`SERIALIZABLE` by default, round trips saved). */
export class WaymarkPostgresDialect extends PostgresDialect {
  readonly #pool: pg.Pool;

  /** The dialect over `config.pool`. */
  constructor(config: PostgresDialectConfig & { pool: pg.Pool }) {
    super(config);
    this.#pool = config.pool;
  }

  /** The driver. */
  override createDriver(): Driver {
    return new PgDriver(this.#pool);
  }
}
