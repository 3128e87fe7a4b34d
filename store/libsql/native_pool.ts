/**
 * Direct connections to a libSQL file through `libsql`, the native binding `@libsql/client`
 * wraps. The client prepares every statement anew on every call (as much CPU as running it);
 * here each connection keeps its prepared statements by SQL text, so a hot query is prepared
 * once per connection. Connections are pooled like the client's: one per concurrent user, so
 * a query outside a transaction never lands inside another caller's transaction.
 * @module
 */
import Database from "npm:libsql@0.5.29";
import { type GuardedStatement, prepareGuarded } from "./text_guard.ts";

type NativeDb = InstanceType<typeof Database>;

/** The rows, or the write's effect, of one statement. */
export interface NativeResult {
  rows: unknown[];
  changes: number;
  lastInsertRowid: bigint | undefined;
}

/** One native connection with its statement cache. */
export class NativeConnection {
  readonly #db: NativeDb;
  readonly #statements = new Map<string, GuardedStatement>();
  constructor(db: NativeDb) {
    this.#db = db;
  }

  /** Runs `sql` with positional `args`, preparing it only the first time. */
  execute(sql: string, args: readonly unknown[]): NativeResult {
    return run(this.#prepared(sql), args);
  }

  /** Prepares `sql` and keeps it for {@linkcode execute}, without running it. */
  prepare(sql: string): void {
    this.#prepared(sql);
  }

  #prepared(sql: string): GuardedStatement {
    let entry = this.#statements.get(sql);
    if (!entry) {
      entry = prepareGuarded(this.#db, sql);
      this.#statements.set(sql, entry);
    }
    return entry;
  }

  /** Runs `sql` with positional `args` without keeping the prepared statement (one-offs). */
  executeOnce(sql: string, args: readonly unknown[]): NativeResult {
    return run(prepareGuarded(this.#db, sql), args);
  }

  /** Runs a statement without keeping it (BEGIN, COMMIT, ROLLBACK). */
  exec(sql: string): void {
    this.#db.exec(sql);
  }

  /** Whether a transaction is open (after a failed COMMIT, SQLite may have ended it). */
  get inTransaction(): boolean {
    return this.#db.inTransaction;
  }

  /** Closes the connection. */
  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

/** Runs a prepared statement: a reader's rows (their text checked), or a write's effect. */
function run(entry: GuardedStatement, args: readonly unknown[]): NativeResult {
  const params = args.map(toSql);
  if (entry.reader) return { rows: entry.rows(params), changes: 0, lastInsertRowid: undefined };
  const info = entry.stmt.run(params);
  return { rows: [], changes: info.changes, lastInsertRowid: BigInt(info.lastInsertRowid) };
}

function toSql(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  return value === undefined ? null : value;
}

/** Options for {@linkcode NativePool}. */
export interface NativePoolOptions {
  /** How long a writer waits for another process's lock, in ms. */
  busyTimeoutMs: number;
  /** Statements each new connection runs first (per-connection pragmas). */
  setup: readonly string[];
}

/** A pool of native connections to one database file. */
export class NativePool {
  readonly #idle: NativeConnection[] = [];
  readonly #all = new Set<NativeConnection>();
  readonly #setup: string[];
  constructor(readonly path: string, readonly options: NativePoolOptions) {
    this.#setup = [...options.setup];
  }

  /** Runs a per-connection statement (a PRAGMA) on every connection, now and to come. */
  applyEverywhere(sql: string): void {
    for (const connection of this.#all) connection.exec(sql);
    this.#setup.push(sql);
  }

  /**
   * Prepares each of `sqls` on the connection the next query gets (the idle one last given
   * back, or a new one), without running any. A statement that fails to prepare does not stop
   * the others: the first failure is thrown once all were tried.
   */
  prepare(sqls: readonly string[]): void {
    const connection = this.acquire();
    let failure: unknown;
    try {
      for (const sql of sqls) {
        try {
          connection.prepare(sql);
        } catch (error) {
          failure ??= error;
        }
      }
    } finally {
      this.release(connection);
    }
    if (failure !== undefined) throw failure;
  }

  /** An idle connection, or a new one. */
  acquire(): NativeConnection {
    const idle = this.#idle.pop();
    if (idle) return idle;
    const db = new Database(this.path, { timeout: this.options.busyTimeoutMs });
    for (const sql of this.#setup) db.exec(sql);
    const connection = new NativeConnection(db);
    this.#all.add(connection);
    return connection;
  }

  /** Gives a connection back; one left in a transaction is rolled back first. */
  release(connection: NativeConnection): void {
    if (connection.inTransaction) connection.exec("ROLLBACK");
    this.#idle.push(connection);
  }

  /** Closes every connection. */
  close(): void {
    for (const connection of this.#all) connection.close();
    this.#all.clear();
    this.#idle.length = 0;
  }
}

/** Statement arguments as the libSQL client takes them (native connections: positional only). */
export type StatementArgs = readonly unknown[] | Readonly<Record<string, unknown>>;

/** A statement as the libSQL client takes it: SQL text, or SQL with its arguments. */
export type Statement = string | { sql: string; args?: StatementArgs };

/** What the libSQL client's `execute` answers, as far as waymark reads it. */
export interface ExecuteResult {
  /** Rows by column name, and by position as the client's rows are too. */
  rows: Record<string, unknown>[];
  /** Rows a write changed. */
  rowsAffected: number;
  /** The last inserted rowid, after an insert. */
  lastInsertRowid: bigint | undefined;
}

/** A write transaction in the client's shape. */
export interface ClientTransaction {
  /** Runs a statement inside the transaction. */
  execute(statement: Statement): Promise<ExecuteResult>;
  /** Commits. */
  commit(): Promise<void>;
  /** Rolls back. */
  rollback(): Promise<void>;
  /** Rolls back unless committed. */
  close(): void;
}

/** The part of the libSQL client the store uses besides its queries: migrations, tests. */
export interface StoreClient {
  /** Runs a statement (SQL and arguments apart, or together). */
  execute(statement: Statement, args?: StatementArgs): Promise<ExecuteResult>;
  /** Runs several `;`-separated statements, without arguments. */
  executeMultiple(sql: string): Promise<void>;
  /** Opens a `BEGIN IMMEDIATE` transaction. */
  transaction(mode: "write"): Promise<ClientTransaction>;
  /** Closes the connection. */
  close(): void;
}

/** A row that also answers by position (not enumerated), as `@libsql/client`'s rows do. */
function byPosition(row: Record<string, unknown>): Record<string, unknown> {
  Object.values(row).forEach((value, i) => Object.defineProperty(row, i, { value }));
  return row;
}

function runStatement(
  connection: NativeConnection,
  statement: Statement,
  separate?: StatementArgs,
): ExecuteResult {
  const { sql, args = separate ?? [] } = typeof statement === "string"
    ? { sql: statement }
    : statement;
  if (!Array.isArray(args)) throw new Error("native connections take positional arguments only");
  const result = connection.executeOnce(sql, args);
  return {
    rows: (result.rows as Record<string, unknown>[]).map(byPosition),
    rowsAffected: result.changes,
    lastInsertRowid: result.lastInsertRowid,
  };
}

/** A `BEGIN IMMEDIATE` transaction on `c`, in the client's shape. */
function writeTransaction(
  c: NativeConnection,
  settle: <T>(fn: () => T) => Promise<T>,
): ClientTransaction {
  c.exec("BEGIN IMMEDIATE");
  let open = true;
  const end = (sql: string) =>
    settle(() => {
      open = false;
      c.exec(sql);
    });
  return {
    execute: (statement) => settle(() => runStatement(c, statement)),
    commit: () => end("COMMIT"),
    rollback: () => end("ROLLBACK"),
    close: () => {
      if (open && c.inTransaction) c.exec("ROLLBACK");
      open = false;
    },
  };
}

/**
 * A native connection in the libSQL client's shape, opened on first use: for a file database
 * the store needs no client at all (the schema check, the migrations and the statements tests
 * run go through this), so `@libsql/client` is never loaded for one.
 */
export function nativeClient(open: () => NativeConnection): StoreClient {
  let connection: NativeConnection | undefined;
  const conn = () => connection ??= open();
  // the native calls are synchronous; their errors become rejections, as the client's are
  const settle = <T>(fn: () => T) => new Promise<T>((resolve) => resolve(fn()));
  return {
    execute: (statement, args) => settle(() => runStatement(conn(), statement, args)),
    executeMultiple: (sql) => settle(() => conn().exec(sql)),
    transaction: () => settle(() => writeTransaction(conn(), settle)),
    close: () => connection?.close(),
  };
}
