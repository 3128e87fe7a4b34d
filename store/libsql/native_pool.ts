/**
 * Direct connections to a libSQL file through `libsql`, the native binding `@libsql/client`
 * wraps. The client prepares every statement anew on every call (as much CPU as running it);
 * here each connection keeps its prepared statements by SQL text, so a hot query is prepared
 * once per connection. Connections are pooled like the client's: one per concurrent user, so
 * a query outside a transaction never lands inside another caller's transaction.
 * @module
 */
import Database from "npm:libsql@0.5.29";

type NativeDb = InstanceType<typeof Database>;
type NativeStatement = ReturnType<NativeDb["prepare"]>;

/** The rows, or the write's effect, of one statement. */
export interface NativeResult {
  rows: unknown[];
  changes: number;
  lastInsertRowid: bigint | undefined;
}

/** One native connection with its statement cache. */
export class NativeConnection {
  readonly #db: NativeDb;
  readonly #statements = new Map<string, { stmt: NativeStatement; reader: boolean }>();
  constructor(db: NativeDb) {
    this.#db = db;
  }

  /** Runs `sql` with positional `args`, preparing it only the first time. */
  execute(sql: string, args: readonly unknown[]): NativeResult {
    let entry = this.#statements.get(sql);
    if (!entry) {
      const stmt = this.#db.prepare(sql);
      entry = { stmt, reader: stmt.reader };
      this.#statements.set(sql, entry);
    }
    const params = args.map(toSql);
    if (entry.reader) {
      return { rows: entry.stmt.all(params), changes: 0, lastInsertRowid: undefined };
    }
    const info = entry.stmt.run(params);
    return { rows: [], changes: info.changes, lastInsertRowid: BigInt(info.lastInsertRowid) };
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
