/**
 * What the workflow source keeps per file version, in memory and (with a
 * {@linkcode WorkflowCache}) between processes: index rows (a file's version → declared id and
 * digest), outcomes (a digest → compiled workflow or load error, with the routines' key when
 * the compiler used routines) and their summaries. In memory: at most
 * {@linkcode COMPILED_CACHE_ENTRIES} outcomes, least recently used first out; what a call
 * learnt that the cache lacks is written at the call's end.
 * @module
 */
import { summarize } from "../../engine/use_cases/list_workflows.ts";
import {
  compileParsed,
  LazyRoutines,
  type LoadResult,
  routinesAmong,
} from "../../engine/workflow/catalog.ts";
import { isRoutineId } from "../../engine/workflow/compile.ts";
import type { WorkflowFile } from "../../engine/workflow/schema.ts";
import {
  compilerIdentity,
  type IndexedFile,
  type ListedOutcome,
  sha256,
  type Stored,
  type StoredOutcome,
  type WorkflowCache,
} from "./cache.ts";
import { type FileState, indexRow, Lru, parseState } from "./states.ts";

/** How many outcomes memory keeps (the source's last full set is kept besides). */
export const COMPILED_CACHE_ENTRIES = 128;

/** The routines a compile may read: built on first use, keyed by the routine files' digests. */
export type Routines = { build(): ReadonlyMap<string, WorkflowFile>; key(): string };

/** Something kept for a digest, valid while the routines it was compiled against hold. */
type Kept<T> = { routines: string | null; value: T };

/** What a call read from the cache, by digest. */
export type StoredMap<T> = ReadonlyMap<string, Kept<T>>;

const NONE: StoredMap<never> = new Map();

/** A file (source and path) as an index key. */
export const keyOf = (source: string, path: string): string => `${source}\0${path}`;

/** What listing shows of an outcome. */
export const listedOf = (result: LoadResult): ListedOutcome =>
  result.ok ? { ok: true, summary: summarize(result.workflow) } : result;

const holds = <T>(kept: Kept<T> | undefined, routines: Routines): kept is Kept<T> =>
  kept !== undefined && (kept.routines === null || kept.routines === routines.key());

/** Memory and cache of file versions, for one workflow source. */
export class WorkflowMemo {
  readonly #cache?: WorkflowCache;
  #salt: string | null = null;
  readonly #outcomes = new Lru<string, Kept<LoadResult>>(COMPILED_CACHE_ENTRIES);
  #unsaved = { files: new Map<string, IndexedFile>(), outcomes: new Map<string, StoredOutcome>() };

  /** Creates a memo over `cache`, or in memory only. */
  constructor(cache?: WorkflowCache) {
    this.#cache = cache;
  }

  /** The compiler's identity, part of every digest (computed once, on first use). */
  get salt(): string {
    return this.#salt ??= compilerIdentity();
  }

  /** The cache's index rows of these paths, by {@linkcode keyOf} (none when it cannot answer). */
  async indexed(paths: readonly string[]): Promise<Map<string, IndexedFile>> {
    if (!this.#cache || paths.length === 0) return new Map();
    try {
      const rows = await this.#cache.files(paths);
      return new Map(rows.map((row) => [keyOf(row.source, row.path), row]));
    } catch {
      return new Map(); // the cache is never the truth: a failed read is a miss
    }
  }

  /** Notes a state the index lacks, to be written (unless its file was modified too recently). */
  remember(state: FileState, mtimeMs: number): void {
    const row = this.#cache && indexRow(state, mtimeMs, Date.now());
    if (row) this.#unsaved.files.set(keyOf(row.source, row.path), row);
  }

  /** The routines offered to a compile: those among the files, by their declared ids. */
  routinesOf(files: readonly FileState[]): Routines {
    const routineStates = () =>
      files.filter((s) => !s.readError && s.id !== null && isRoutineId(s.id));
    let key: string | null = null;
    return {
      build: () => routinesAmong(routineStates().map((s) => parseState(s, this.salt))),
      key: () => key ??= sha256(...routineStates().map((s) => s.digest)),
    };
  }

  /** Whether the outcome kept for a digest was compiled against routines (or is not kept). */
  usedRoutines(digest: string): boolean {
    return this.#outcomes.get(digest)?.routines !== null;
  }

  /** Outcomes the cache holds for these states that memory does not. */
  storedOutcomes(states: readonly FileState[]): Promise<StoredMap<LoadResult>> {
    return this.#stored(states, (cache, digests) => cache.outcomes(digests));
  }

  /** Summaries the cache holds for these states that memory does not. */
  storedSummaries(states: readonly FileState[]): Promise<StoredMap<ListedOutcome>> {
    return this.#stored(states, (cache, digests) => cache.summaries(digests));
  }

  async #stored<T>(
    states: readonly FileState[],
    read: (cache: WorkflowCache, digests: string[]) => Promise<Stored<T>[]>,
  ): Promise<StoredMap<T>> {
    const wanted = states.filter((s) => !s.readError && !this.#outcomes.get(s.digest));
    if (!this.#cache || wanted.length === 0) return NONE;
    try {
      const rows = await read(this.#cache, [...new Set(wanted.map((s) => s.digest))]);
      return new Map(rows.map((r) => [r.digest, { routines: r.routinesKey, value: r.value }]));
    } catch {
      return NONE;
    }
  }

  /**
   * What loading a file gives: kept in memory, else stored in the cache, else parsed and
   * compiled now. An outcome that used routines is valid while they are the same.
   */
  async outcome(
    state: FileState,
    routines: Routines,
    stored: StoredMap<LoadResult> = NONE,
  ): Promise<LoadResult> {
    if (state.readError) return state.readError;
    const kept = this.#outcomes.get(state.digest);
    if (holds(kept, routines)) return kept.value;
    const saved = stored.get(state.digest);
    if (holds(saved, routines)) {
      this.#outcomes.set(state.digest, saved);
      return saved.value;
    }
    return await this.#compile(state, routines);
  }

  /** What listing shows of a file: from memory, else a stored summary, else its outcome. */
  async listed(
    state: FileState,
    routines: Routines,
    stored: StoredMap<ListedOutcome>,
  ): Promise<ListedOutcome> {
    if (!state.readError && !holds(this.#outcomes.get(state.digest), routines)) {
      const saved = stored.get(state.digest);
      if (holds(saved, routines)) return saved.value;
    }
    return listedOf(await this.outcome(state, routines));
  }

  async #compile(state: FileState, routines: Routines): Promise<LoadResult> {
    const parsed = parseState(state, this.salt);
    if (state.readError) return state.readError; // gone since it was listed
    let kept: Kept<LoadResult>;
    if (parsed.ok) {
      const lazy = new LazyRoutines(routines.build);
      const value = await compileParsed(parsed, lazy);
      kept = { routines: lazy.used ? routines.key() : null, value };
    } else kept = { routines: null, value: parsed };
    const { digest } = state;
    this.#outcomes.set(digest, kept);
    if (this.#cache) {
      const { routines: routinesKey, value: result } = kept;
      this.#unsaved.outcomes.set(digest, { digest, routinesKey, result, listed: listedOf(result) });
    }
    return kept.value;
  }

  /** Writes what was learnt to the cache; a failed write only costs a later compile. */
  async save(): Promise<void> {
    const { files, outcomes } = this.#unsaved;
    if (!this.#cache || files.size + outcomes.size === 0) return;
    this.#unsaved = { files: new Map(), outcomes: new Map() };
    try {
      await this.#cache.save({ files: [...files.values()], outcomes: [...outcomes.values()] });
    } catch {
      // the cache is never the truth
    }
  }
}
