/**
 * What a SQL dialect supplies beside the shared Kysely code: how it names its driver's storage
 * faults (locked, full, read-only, damaged, unreachable), how it runs a write transaction and
 * when it tries a call again, and its full-text search (the index writes and the matching
 * reads). Each dialect (`store/libsql/`, `store/postgres/`) implements this once; shared code
 * never asks which dialect it runs on.
 * @module
 */
import type { CompiledQuery, Kysely, QueryResult } from "npm:kysely@0.29.9";
import type { SearchQuery } from "../../engine/model/ports.ts";
import type { SearchLayer } from "../../engine/model/vocabulary.ts";
import type { Executor } from "./graph_sql.ts";
import type { Database, EventsTable } from "./database.ts";

/** The search layers answered by full-text matching. */
export type TextLayer = Exclude<SearchLayer, "id" | "recent">;

/** One run matched by a full-text layer. */
export interface TextMatch {
  /** Run id (hex). */
  runId: string;
  /** The dialect's relevance (lower is better). */
  relevance: number;
  /** A short excerpt of the matched text. */
  snippet: string | null;
}

/** A dialect's full-text search: index writes inside the appending transaction, and reads. */
export interface FullTextSearch {
  /** Indexes a new run's session title, goal and workflow id (layer `title`). */
  indexRun(tx: Executor, runId: string): Promise<void>;
  /**
   * Indexes an output just recorded: every output (layer `deep`), and as the run's latest
   * notes (layer `tip_notes`), replacing the previous ones.
   */
  indexOutput(tx: Executor, output: { runId: string; nodeId: string; text: string }): Promise<void>;
  /** Runs matching one full-text layer, best first, at most `query.limit`, one hit per run. */
  match(ex: Executor, layer: TextLayer, query: SearchQuery): Promise<TextMatch[]>;
  /** The indexed latest-notes text of the given runs, by run id (runs without notes absent). */
  tipTexts(ex: Executor, runIds: readonly string[]): Promise<Map<string, string>>;
  /** Removes a session's index rows; runs before its runs and outputs are deleted. */
  unindexSession(tx: Executor, sessionId: string): Promise<void>;
  /** A session's index rows as comparable lines (layer, source key, text), for doctor. */
  sessionTexts(ex: Executor, sessionId: string): Promise<string[]>;
  /** Index rows whose source row is gone. */
  orphanCount(ex: Executor): Promise<number>;
  /** Deletes index rows whose source row is gone; returns how many. */
  dropOrphans(tx: Executor): Promise<number>;
}

/** Where a database's schema stands against the migrations this waymark knows. */
export interface SchemaStatus {
  /** Migrations recorded in the database, in name order. */
  applied: string[];
  /** Known migrations not applied yet (an older database: opening it migrates forward). */
  pending: string[];
  /** Applied migrations this waymark does not know (a database from a newer waymark). */
  unknown: string[];
}

/**
 * What a dialect does for the maintenance commands (doctor, gc, backup) beside the shared
 * code: the database's own checks, compaction, copies, and the files beside the database.
 */
export interface MaintenanceDialect {
  /** The database engine's consistency checks; each problem one line, none when sound. */
  integrityCheck(ex: Executor): Promise<string[]>;
  /**
   * What is wrong with the full-text index's tables (missing, or failing the engine's own check
   * of them); none when sound. Kept apart from `integrityCheck`: the index is derived data.
   */
  searchProblems(ex: Executor): Promise<string[]>;
  /** Drops the full-text tables, makes them anew, and indexes every run and output again. */
  rebuildSearch(db: Kysely<Database>): Promise<void>;
  /**
   * Stored text values that are not valid UTF-8, each named by table, row and column; with
   * `repair`, each is set aside in `quarantine` (its bytes) and replaced by a readable
   * rendering. A server that checks encodings itself has none.
   */
  badText(ex: Executor, options: { repair: boolean; now: string }): Promise<BadText[]>;
  /** Gives free space back to the file system. */
  vacuum(ex: Executor): Promise<void>;
  /** Writes a consistent copy of the database to a new file while others keep writing. */
  backupTo(ex: Executor, file: string): Promise<void>;
  /** Bytes the database takes, or `null` when unknown. */
  databaseBytes(ex: Executor): Promise<number | null>;
  /** Bytes of the write-ahead log beside the database, or `null` when there is none. */
  walBytes(): Promise<number | null>;
  /** Moves the write-ahead log into the database and truncates it. */
  checkpointWal(ex: Executor): Promise<void>;
  /** The schema's migrations, applied, pending and unknown; changes nothing. */
  schemaStatus(): Promise<SchemaStatus>;
  /** Applies pending migrations (in one transaction). */
  migrate(): Promise<void>;
  /**
   * What doctor reports of a database server (its version, the round trip, the connection
   * pool), or `null` for an embedded file.
   */
  serverInfo(ex: Executor): Promise<ServerInfo | null>;
}

/** A stored text value that is not valid UTF-8. */
export interface BadText {
  /** Its table. */
  table: string;
  /** Its row (`rowid`). */
  row: string;
  /** Its column. */
  column: string;
  /** The row's session, where the table has one. */
  sessionId: string | null;
  /** What it reads as, each bad byte a U+FFFD (the first 60 characters). */
  preview: string;
}

/** A database server as doctor reports it. */
export interface ServerInfo {
  /** One line: version, latency, pool. */
  message: string;
  /** The same as facts. */
  details: Record<string, unknown>;
}

/** The dialect-specific parts of a SQL store. */
export interface SqlDialect {
  /**
   * The engine's storage error a driver error stands for (busy, full, read-only, damaged), or
   * the error itself when it is none of those; `location` names the database in messages.
   */
  storageError(error: unknown, context: { location: string }): unknown;
  /** Whether an error (a driver's, or the mapped one) means another writer holds the lock. */
  isBusy(error: unknown): boolean;
  /** Full-text search. */
  search: FullTextSearch;
  /**
   * Runs `fn` in one write transaction and commits it. Where the database refuses a
   * transaction for another's sake (a serialization failure, a connection lost before the
   * commit), `fn` runs again from the start: nothing of a refused try was kept, so trying
   * again is safe whatever `fn` writes. A connection lost during the commit is reported, not
   * retried (the commit may have happened).
   */
  transact<T>(db: Kysely<Database>, fn: (tx: Executor) => Promise<T>): Promise<T>;
  /** Runs a read, again after a failure a fresh try may not meet (a lost connection). */
  read<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * `tx` for writes whose affected-row counts are not read (the projections): a dialect paying a
   * round trip per statement sends them without waiting for each answer, a failure surfacing at
   * the next statement that waits. Absent: `tx` itself.
   */
  sendAhead?(tx: Executor): Executor;
  /**
   * Sends `query`, a read, in the transaction `tx` without waiting for its answer: it leaves
   * with the next statement that waits (with the transaction's `BEGIN`, when it is the first),
   * and the same query made next in `tx`, before anything is written, is answered from it.
   * Absent: reads go one at a time, and an attempt is read before its transaction
   * (`Store.writeAttempt` is absent).
   */
  readAhead?(tx: Executor, query: CompiledQuery): void;
  /**
   * Runs `query`, a read, on the connection of the transaction `tx` right after its commit
   * (sent with the `COMMIT`, where a round trip is dear): its result once committed; rejected
   * when the transaction does not commit. Absent: the store reads after `write` returns.
   */
  readAfterCommit?(tx: Executor, query: CompiledQuery): Promise<QueryResult<unknown>>;
  /**
   * Run first in each of the store port's write transactions (the calls' hot path), to settle
   * how its statements are planned. Absent: nothing.
   */
  planWrites?(tx: Executor): Promise<void>;
  /**
   * Appends a batch of events to a session that is stored already: grows its count by the
   * batch and inserts the rows at the positions after it, answering each row's sequence
   * number in row order, or a {@linkcode PendingSeq} standing for it; refused (then, or by the
   * commit) when the session is gone. Absent: the writer grows the count, then inserts (two
   * statements).
   */
  appendToSession?(tx: Executor, batch: AppendBatch): Promise<Seq[]>;
}

/** A batch of events for {@linkcode SqlDialect.appendToSession}: rows without positions. */
export interface AppendBatch {
  /** The session whose log grows. */
  sessionId: string;
  /** The session as messages name it. */
  label: string;
  /** The append's time. */
  at: string;
  /** The rows, in log order. */
  rows: readonly Pick<
    EventsTable,
    "session_id" | "run_id" | "kind" | "payload" | "digest" | "at"
  >[];
}

/**
 * The sequence number the database gave the `index`th row (from 1) of the transaction's latest
 * append, not read back: a statement made after the append binds it as a parameter, which the
 * dialect's driver turns into the number where the statement runs (PostgreSQL's, `append.ts`),
 * so the writes that need it do not wait for the append's answer.
 */
export class PendingSeq {
  /** The row's place in its batch, from 1. */
  constructor(readonly index: number) {}
}

/** A row's sequence number: known, or pending (see {@linkcode PendingSeq}). */
export type Seq = number | PendingSeq;

/** Where shared reads run: a connection or transaction, and the dialect's full-text search. */
export interface ReadScope {
  /** The connection or transaction. */
  ex: Executor;
  /** The dialect's full-text search. */
  search: FullTextSearch;
}
