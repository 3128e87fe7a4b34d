/**
 * What a SQL dialect supplies beside the shared Kysely code: how it names its driver's storage
 * faults (locked, full, read-only, damaged), and its full-text search (the index writes and the matching reads). Each dialect
 * (`store/libsql/`, later PostgreSQL) implements this once; shared code never asks which
 * dialect it runs on.
 * @module
 */
import type { SearchLayer, SearchQuery } from "../../engine/mod.ts";
import type { Executor } from "./graph_sql.ts";

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
}

/** The dialect-specific parts of a SQL store. */
export interface SqlDialect {
  /**
   * The engine's storage error a driver error stands for (busy, full, read-only, damaged), or
   * the error itself when it is none of those; `location` names the database in messages.
   */
  storageError(error: unknown, context: { location: string }): unknown;
  /** Full-text search. */
  search: FullTextSearch;
}

/** Where shared reads run: a connection or transaction, and the dialect's full-text search. */
export interface ReadScope {
  /** The connection or transaction. */
  ex: Executor;
  /** The dialect's full-text search. */
  search: FullTextSearch;
}
