/**
 * The connection to a PostgreSQL server: a small `pg` pool whose integers come back as
 * numbers, behind Kysely's Postgres dialect with a driver of our own. A round trip costs far
 * more than the statements an advance sends (about 0.1 ms on a local socket against 0.01 to
 * 0.05 ms of server time), so the driver saves round trips:
 *
 * - every statement is prepared by name, once per connection;
 * - the connection runs in `pg`'s pipeline mode, and a transaction's `BEGIN` goes out without
 *   waiting for its answer, together with the transaction's first statement;
 * - writes whose affected-row counts no one reads (`sendAhead`, the projections) go out
 *   without waiting either: the server runs them in order, and the first failure among them is
 *   thrown by the next statement that waits (or by the commit), so a failed one can never be
 *   committed past.
 *
 * Transactions are `SERIALIZABLE` unless they ask for another level (so concurrent writers
 * behave as SQLite's single writer does: one of two conflicting transactions is refused and
 * tried again).
 * @module
 */
// @ts-types="npm:@types/pg@8.23.1"
import pg from "npm:pg@8.23.1";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type KyselyPlugin,
  PostgresDialect,
  type PostgresDialectConfig,
  type QueryId,
  type QueryResult,
  type TransactionSettings,
} from "npm:kysely@0.29.9";
import { coalesceWrites, socketOf } from "./wire.ts";

/** Connections per process: a server answers one call at a time per chat, plus the viewer. */
export const POOL_SIZE = 4;

/** OIDs of `int8` and `numeric`, which `pg` returns as strings to keep precision. */
const INT8 = 20;
const NUMERIC = 1700;

/** `pg`'s type parsers, with `count(*)`, `sum()` and `bigint` columns read as numbers. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8 || oid === NUMERIC) return (text: string) => Number(text);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/** Most distinct statements prepared by name (beyond it, statements are parsed each time). */
const MAX_PREPARED = 400;
const prepared = new Map<string, string>();

/**
 * Statements that stay unnamed: those selecting `*` (their result type would change with the
 * schema), and walks of the graph (`WITH RECURSIVE`), whose best plan depends on the run: a
 * plan cached for the average run (a hash join of the run's nodes, rebuilt at every step of the
 * walk) made a rehydrate of a 1,000-step run take 3 to 15 ms instead of 0.4. Unnamed, each is
 * planned for its own values.
 */
const UNNAMED = /select \*|\.\*|with recursive/i;

/**
 * The name a statement is prepared under on every connection: a call's statements repeat, so
 * the server parses and plans each once per connection instead of once per call (see
 * `UNNAMED` for the exceptions).
 */
function preparedName(text: string): string | undefined {
  let name = prepared.get(text);
  if (name === undefined && prepared.size < MAX_PREPARED && !UNNAMED.test(text)) {
    name = `waymark_${prepared.size}`;
    prepared.set(text, name);
  }
  return name;
}

/** A `pg` pool for `url` (any `postgres://` URL `pg` reads, e.g. `?host=/socket/dir`). */
export function createPool(
  url: string,
  options: { connectTimeoutMs: number; durability?: "normal" | "full" },
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

/** Queries made through `sendAhead`'s executor that need not be waited for. */
const aheadQueries = new WeakSet<QueryId>();

/** Marks writes without `RETURNING` (nothing to read but a row count no one asks for). */
const SEND_AHEAD: KyselyPlugin = {
  transformQuery({ node, queryId }) {
    const write = node.kind === "InsertQueryNode" || node.kind === "UpdateQueryNode" ||
      node.kind === "DeleteQueryNode";
    if (write && !node.returning) aheadQueries.add(queryId);
    return node;
  },
  transformResult: ({ result }) => Promise.resolve(result),
};

/**
 * `tx` for writes whose affected-row counts are not read: inside a transaction their
 * statements are sent without waiting for the answers (reads and `RETURNING` still wait).
 */
export function sendAhead<K extends { withPlugin(plugin: KyselyPlugin): K }>(tx: K): K {
  return tx.withPlugin(SEND_AHEAD);
}

/** One pooled client as Kysely's connection, with the statements it sent ahead. */
class PgConnection implements DatabaseConnection {
  readonly client: pg.PoolClient;
  /** Inside a transaction (statements may be sent ahead). */
  inTransaction = false;
  /** The connection failed in a way that leaves it unusable. */
  discarded = false;
  #ahead: Promise<void>[] = [];
  #failure: { error: unknown } | undefined;
  readonly #socket: ReturnType<typeof socketOf>;
  /** The socket is kept corked over statements sent ahead. */
  #holding = false;

  constructor(client: pg.PoolClient) {
    this.client = client;
    this.#socket = socketOf(client);
  }

  /** Writes what was held back: the statements sent ahead and the one just made. */
  #write(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.#socket!.uncork();
  }

  #send(sql: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    return this.client.query({ name: preparedName(sql), text: sql, values: values as unknown[] });
  }

  /** Sends a statement without waiting; its failure is thrown by the next `#settle`. */
  sendAhead(sql: string, values: readonly unknown[]): void {
    if (!this.#holding && this.#socket) {
      this.#socket.cork();
      this.#holding = true;
    }
    this.#ahead.push(
      this.#send(sql, values).then(() => {}, (error) => {
        this.#failure ??= { error };
      }),
    );
  }

  /** Sends whatever is held back without waiting for it. */
  flushHeld(): void {
    this.#write();
  }

  /** Whether statements were sent ahead that no one waited for yet. */
  get sentAhead(): boolean {
    return this.#ahead.length > 0;
  }

  /** Waits for the statements sent ahead; throws the first failure among them. */
  async settle(): Promise<void> {
    this.#write();
    const ahead = this.#ahead;
    this.#ahead = [];
    await Promise.all(ahead);
    const failure = this.#failure;
    this.#failure = undefined;
    if (failure) throw failure.error;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction && aheadQueries.has(query.queryId)) {
      this.sendAhead(query.sql, query.parameters);
      return { rows: [] };
    }
    const answer = this.#send(query.sql, query.parameters);
    this.#write();
    if (this.#ahead.length > 0) {
      // after a failure sent ahead this one fails too; the earlier failure is the cause
      answer.catch(() => {});
      await this.settle();
    }
    const { command, rowCount, rows } = await answer;
    if (command === "COMMIT" || command === "ROLLBACK") return { rows: [{ command } as R] };
    const counted = command === "INSERT" || command === "UPDATE" || command === "DELETE" ||
      command === "MERGE";
    return { numAffectedRows: counted ? BigInt(rowCount ?? 0) : undefined, rows: rows ?? [] };
  }

  // deno-lint-ignore require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the PostgreSQL driver does not stream");
  }
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
    const c = connection as PgConnection;
    const level = settings.isolationLevel ?? "serializable";
    c.inTransaction = true;
    // its failure (a lost connection) is thrown by the first statement that waits
    c.sendAhead(
      `start transaction isolation level ${level}${
        settings.accessMode ? ` ${settings.accessMode}` : ""
      }`,
      [],
    );
    return Promise.resolve();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as PgConnection;
    try {
      // what was sent ahead is answered before the COMMIT goes out: a failure then is certain
      // to have left nothing committed
      if (c.sentAhead) await c.settle().catch((error) => Promise.reject(new BeforeCommit(error)));
      const { rows } = await c.executeQuery<{ command: string }>(CompiledQuery.raw("commit"));
      // PostgreSQL completes a COMMIT with ROLLBACK when an earlier error aborted the transaction
      if (rows[0]?.command === "ROLLBACK") {
        throw new Error("the transaction was rolled back by an earlier error");
      }
    } finally {
      c.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as PgConnection;
    const answer = c.client.query("rollback");
    answer.catch(() => {});
    c.flushHeld();
    try {
      await c.settle().catch(() => {}); // the failure being rolled back was reported already
      await answer;
    } catch (error) {
      c.discarded = true;
      throw error;
    } finally {
      c.inTransaction = false;
    }
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as PgConnection;
    c.flushHeld();
    c.client.release(c.discarded);
    return Promise.resolve();
  }

  async destroy(): Promise<void> {
    await this.#pool.end();
  }
}

/** A failure of a transaction's statement reported at its commit, before the COMMIT was sent. */
export class BeforeCommit extends Error {
  /** Wraps the statement's failure. */
  constructor(readonly original: unknown) {
    super("a statement of the transaction failed before its commit");
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
