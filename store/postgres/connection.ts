/**
 * One pooled `pg` client as Kysely's connection, saving round trips inside a transaction (see
 * `driver.ts` for the whole): its `BEGIN` and `SET LOCAL`s leave with its first statement that
 * waits, reads sent ahead (`readAhead`) too; writes whose answers no one reads go out without
 * waiting once the `BEGIN` was answered, merged (`merge.ts`), and the `COMMIT` leaves with the
 * last of them, the reads to make after it (`afterCommit`) right behind.
 * @module
 */
// @ts-types="npm:@types/pg@8.23.1"
import pg from "npm:pg@8.23.1";
import type { CompiledQuery, DatabaseConnection, QueryId, QueryResult } from "npm:kysely@0.29.9";
import { mergeWrites, type Write } from "./merge.ts";
import { seqParameters } from "./pending_seqs.ts";
import { socketOf } from "./wire.ts";

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

/**
 * A transaction's settings (`SET LOCAL …`): sent with its `BEGIN` without waiting, since they
 * change no data; a failure among them is thrown by the first statement that waits.
 */
const SET_LOCAL = /^set local [a-z_]+ = [a-z0-9_]+$/i;

/** A plain read, whose answer a read sent ahead may stand for. */
const READ = /^\s*select\s/i;

/** What tells reads sent ahead apart: their text and parameters. */
const readKey = (query: CompiledQuery) => `${query.sql}\u0000${JSON.stringify(query.parameters)}`;

/** Queries made through `sendAhead`'s executor that need not be waited for. */
const aheadQueries = new WeakSet<QueryId>();

/** Marks `queryId`'s statement as not waited for inside a transaction (see `sendAhead`). */
export function markAhead(queryId: QueryId): void {
  aheadQueries.add(queryId);
}

/**
 * One pooled client as Kysely's connection. Inside a transaction whose `BEGIN` the server has
 * confirmed (the first statement that waited was answered), writes marked by `sendAhead` go out
 * without waiting; before that every statement waits (but the transaction's `SET LOCAL`s and the
 * reads sent ahead, which write nothing), so a `BEGIN` that failed can never leave writes to
 * commit one by one.
 */
export class PgConnection implements DatabaseConnection {
  readonly client: pg.PoolClient;
  /** The connection failed in a way that leaves it unusable. */
  discarded = false;
  #inTransaction = false;
  #confirmed = false;
  #ahead: Promise<void>[] = [];
  /** Writes to send ahead, held until something waits so they can be merged (`merge.ts`). */
  #held: Write[] = [];
  #failure: { error: unknown } | undefined;
  readonly #socket: ReturnType<typeof socketOf>;
  /** The socket is kept corked over statements sent ahead. */
  #holding = false;
  /** Reads to send right after the transaction's `COMMIT` (`afterCommit`). */
  #after: AfterCommit[] = [];
  /** Reads sent ahead (`readAhead`) and not made yet, by text and parameters. */
  #reads = new Map<string, Promise<pg.QueryResult>>();

  constructor(client: pg.PoolClient) {
    this.client = client;
    this.#socket = socketOf(client);
  }

  /** Starts a transaction: `sql` (its `BEGIN`) leaves with the first statement that waits. */
  begin(sql: string): void {
    this.#inTransaction = true;
    this.#confirmed = false;
    this.#sendAhead(sql, []);
  }

  /**
   * Commits: the `COMMIT` leaves with what was sent ahead. A failure among those the server
   * reported turned the `COMMIT` into a rollback, so it is thrown as `BeforeCommit`; a lost
   * connection leaves the outcome unknown and is thrown as it is.
   */
  async commit(): Promise<void> {
    const after = this.#takeAfter();
    try {
      this.#flush();
      const answer = this.#waitFor("commit", [], after);
      if (this.#ahead.length > 0) {
        answer.catch(() => {});
        await this.#settle().catch((error) => {
          throw error instanceof pg.DatabaseError ? new BeforeCommit(error) : error;
        });
      }
      // PostgreSQL completes a COMMIT with ROLLBACK when an earlier error aborted the transaction
      if ((await answer).command === "ROLLBACK") {
        throw new Error("the transaction was rolled back by an earlier error");
      }
      await Promise.all(after.map((a) => a.answer));
    } catch (error) {
      for (const a of after) a.reject(new Error("the transaction did not commit"));
      throw error;
    } finally {
      this.#end();
    }
  }

  /**
   * Sends `query`, a read, right after this transaction's `COMMIT` and with it (on this
   * connection, outside the transaction): its result once committed, rejected otherwise.
   */
  afterCommit(query: CompiledQuery): Promise<QueryResult<unknown>> {
    if (!this.#inTransaction) return Promise.reject(new Error("no transaction to follow"));
    const { promise, resolve, reject } = Promise.withResolvers<QueryResult<unknown>>();
    this.#after.push({ query, resolve, reject });
    return promise;
  }

  /** The reads waiting for the commit, each with the answer it will get once sent. */
  #takeAfter(): (AfterCommit & { answer?: Promise<void> })[] {
    const after = this.#after;
    this.#after = [];
    return after;
  }

  /**
   * Sends `query`, a read, without waiting: it leaves with the next statement that waits (with
   * the `BEGIN`, when that is the first). The same query made next in this transaction, before
   * anything is written, is answered from it; a failure of it is the transaction's, thrown by
   * the next statement that waits, as a write's sent ahead is.
   */
  readAhead(query: CompiledQuery): void {
    if (!this.#inTransaction) return;
    this.#flush(); // it reads after what was written before it
    this.#reads.set(readKey(query), this.#sendAhead(query.sql, query.parameters));
  }

  /**
   * The answer of the read sent ahead as `query`, when it was one; any statement but a read
   * drops the others (written since, they may be stale).
   */
  async #readSentAhead<R>(query: CompiledQuery): Promise<QueryResult<R> | undefined> {
    const key = readKey(query);
    const answer = this.#reads.get(key);
    if (answer === undefined) {
      if (!READ.test(query.sql)) this.#reads.clear();
      return undefined;
    }
    this.#reads.delete(key);
    return { rows: (await answer).rows ?? [] };
  }

  /** Rolls back (the failures of what was sent ahead are the ones being rolled back). */
  async rollback(): Promise<void> {
    try {
      // held writes would be rolled back: they are not sent
      this.#held = [];
      for (const a of this.#takeAfter()) a.reject(new Error("the transaction was rolled back"));
      const answer = this.#waitFor("rollback", []);
      answer.catch(() => {});
      await this.#settle().catch(() => {});
      await answer;
    } catch (error) {
      this.discarded = true;
      throw error;
    } finally {
      this.#end();
    }
  }

  /** Gives the client back to the pool (nothing is held back by then; this makes sure). */
  release(): void {
    this.#held = [];
    this.#reads.clear();
    for (const a of this.#takeAfter()) a.reject(new Error("the transaction ended"));
    this.#write();
    this.client.release(this.discarded);
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const read = this.#reads.size > 0 ? await this.#readSentAhead<R>(query) : undefined;
    if (read) return read;
    const ahead = this.#confirmed
      ? aheadQueries.has(query.queryId)
      : this.#inTransaction && SET_LOCAL.test(query.sql);
    if (ahead && this.#confirmed) {
      this.#held.push({ sql: query.sql, parameters: query.parameters });
      return { rows: [] };
    }
    if (ahead) {
      this.#sendAhead(query.sql, query.parameters);
      return { rows: [] };
    }
    this.#flush();
    const answer = this.#waitFor(query.sql, query.parameters);
    if (this.#ahead.length > 0) {
      // after a failure sent ahead this one fails too; the earlier failure is the cause
      answer.catch(() => {});
      await this.#settle();
    }
    const { command, rowCount, rows } = await answer;
    // everything before it, the BEGIN included, was answered
    this.#confirmed = this.#inTransaction;
    const counted = command === "INSERT" || command === "UPDATE" || command === "DELETE" ||
      command === "MERGE";
    return { numAffectedRows: counted ? BigInt(rowCount ?? 0) : undefined, rows: rows ?? [] };
  }

  // deno-lint-ignore require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the PostgreSQL driver does not stream");
  }

  #send(sql: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    const { text, parameters } = seqParameters(sql, values);
    return this.client.query({
      name: preparedName(text),
      text,
      values: parameters as unknown[],
    });
  }

  /**
   * Sends a statement that will be waited for, with whatever was held back before it (and the
   * reads in `after`, right behind it, each given its answer).
   */
  #waitFor(
    sql: string,
    values: readonly unknown[],
    after: (AfterCommit & { answer?: Promise<void> })[] = [],
  ): Promise<pg.QueryResult> {
    if (after.length > 0) this.#cork();
    const answer = this.#send(sql, values);
    for (const a of after) {
      a.answer = this.#send(a.query.sql, a.query.parameters).then(
        ({ rows }) => a.resolve({ rows: rows ?? [] }),
        (error) => a.reject(error),
      );
    }
    this.#write();
    return answer;
  }

  /** Holds what is sent until `#write`. */
  #cork(): void {
    if (!this.#holding && this.#socket) {
      this.#socket.cork();
      this.#holding = true;
    }
  }

  /**
   * Sends a statement without waiting; its failure is thrown by the next `#settle`. Its answer,
   * for a read sent ahead.
   */
  #sendAhead(sql: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    this.#cork();
    const answer = this.#send(sql, values);
    this.#ahead.push(answer.then(() => {}, (error) => {
      this.#failure ??= { error };
    }));
    return answer;
  }

  /** Sends the held writes ahead, merged into as few statements as keep their meaning. */
  #flush(): void {
    if (this.#held.length === 0) return;
    const held = this.#held;
    this.#held = [];
    for (const w of mergeWrites(held)) this.#sendAhead(w.sql, w.parameters);
  }

  /** Writes what was held back. */
  #write(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.#socket!.uncork();
  }

  /** Waits for the statements sent ahead; throws the first failure among them. */
  async #settle(): Promise<void> {
    this.#write();
    const ahead = this.#ahead;
    this.#ahead = [];
    await Promise.all(ahead);
    const failure = this.#failure;
    this.#failure = undefined;
    if (failure) throw failure.error;
  }

  #end(): void {
    this.#reads.clear();
    this.#inTransaction = false;
    this.#confirmed = false;
  }
}

/** A read to send after a commit, and where its answer goes. */
export interface AfterCommit {
  query: CompiledQuery;
  resolve(result: QueryResult<unknown>): void;
  reject(error: unknown): void;
}

/** A statement's failure reported with a commit that it turned into a rollback. */
export class BeforeCommit extends Error {
  /** Wraps the statement's failure. */
  constructor(readonly original: unknown) {
    super("a statement of the transaction failed before its commit");
  }
}
