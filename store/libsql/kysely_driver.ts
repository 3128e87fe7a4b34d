/**
 * The Kysely dialect over an injected libSQL client: what `@libsql/kysely-libsql` does, in the
 * few lines it takes. That package depends on an older `@libsql/client` (0.8) whose import loads
 * a second libSQL native addon at every start (about 25 ms) although waymark always injects its
 * own 0.18 client, so the dialect lives here instead.
 * @module
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "npm:kysely@0.29.9";
import type {
  ClientTransaction,
  NativeConnection,
  NativePool,
  StoreClient,
} from "./native_pool.ts";

/** Something that executes statements: the client, or a transaction on it. */
type Executor = Pick<StoreClient, "execute"> & Partial<Pick<StoreClient, "transaction">>;

/** One logical connection: statements go to the open transaction, if any, else the client. */
class LibsqlConnection implements DatabaseConnection {
  #transaction: ClientTransaction | undefined;
  constructor(readonly client: Executor) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const target = this.#transaction ?? this.client;
    const result = await target.execute({ sql: query.sql, args: query.parameters });
    return {
      insertId: result.lastInsertRowid,
      numAffectedRows: BigInt(result.rowsAffected),
      rows: result.rows as R[],
    };
  }

  // deno-lint-ignore require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the libSQL driver does not stream");
  }

  async begin(): Promise<void> {
    if (this.#transaction) throw new Error("a transaction is already open");
    if (!this.client.transaction) throw new Error("transactions cannot nest on this client");
    // "write" is BEGIN IMMEDIATE: writers in other processes queue on the busy timeout
    this.#transaction = await this.client.transaction("write");
  }

  async end(how: "commit" | "rollback"): Promise<void> {
    const tx = this.#transaction;
    if (!tx) throw new Error(`no transaction to ${how}`);
    this.#transaction = undefined;
    await (how === "commit" ? tx.commit() : tx.rollback());
  }
}

class LibsqlDriver implements Driver {
  constructor(readonly client: Executor) {}
  async init(): Promise<void> {}
  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(new LibsqlConnection(this.client));
  }
  beginTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as LibsqlConnection).begin();
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as LibsqlConnection).end("commit");
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as LibsqlConnection).end("rollback");
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {} // the client belongs to whoever injected it
}

/** One borrowed native connection; its prepared statements outlive the borrow. */
class NativeKyselyConnection implements DatabaseConnection {
  constructor(readonly native: NativeConnection) {}
  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const result = this.native.execute(query.sql, query.parameters);
      return Promise.resolve({
        insertId: result.lastInsertRowid,
        numAffectedRows: BigInt(result.changes),
        rows: result.rows as R[],
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }
  // deno-lint-ignore require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the libSQL driver does not stream");
  }
}

class NativeDriver implements Driver {
  constructor(readonly pool: NativePool) {}
  async init(): Promise<void> {}
  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(new NativeKyselyConnection(this.pool.acquire()));
  }
  // BEGIN IMMEDIATE: writers in other processes queue on the busy timeout
  beginTransaction(connection: DatabaseConnection): Promise<void> {
    return run(() => (connection as NativeKyselyConnection).native.exec("BEGIN IMMEDIATE"));
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return run(() => (connection as NativeKyselyConnection).native.exec("COMMIT"));
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return run(() => (connection as NativeKyselyConnection).native.exec("ROLLBACK"));
  }
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return run(() => this.pool.release((connection as NativeKyselyConnection).native));
  }
  destroy(): Promise<void> {
    return run(() => this.pool.close());
  }
}

function run(fn: () => void): Promise<void> {
  try {
    fn();
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * A SQLite-flavoured Kysely dialect over an injected libSQL client (or transaction), or over a
 * pool of native connections that keep their prepared statements (files only).
 */
export class LibsqlDialect implements Dialect {
  readonly #client: Executor | undefined;
  readonly #pool: NativePool | undefined;
  constructor(config: { client: Executor } | { pool: NativePool }) {
    if ("pool" in config) this.#pool = config.pool;
    else this.#client = config.client;
  }
  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }
  createDriver(): Driver {
    return this.#pool ? new NativeDriver(this.#pool) : new LibsqlDriver(this.#client!);
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }
}
