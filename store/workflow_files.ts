/**
 * Workflow sources on disk (user, project, extra directories) plus the bundled files, loaded
 * through the engine's pure loader. Every call lists the directories and stats each file (the
 * drift check needs their current state); what a file version yields is kept:
 *
 * - its declared id and the digest of its text: in memory per file version, and, with a
 *   {@linkcode WorkflowCache}, between processes by version (`store/workflow_cache.ts`), so a
 *   new process finds one workflow without reading the other files, and a `wr.*` id reads no
 *   directory file at all;
 * - its text and parse, only once something needs them (a candidate not compiled before, a
 *   routine to compile against);
 * - its outcome (compiled workflow, hash and warnings, or load error) by digest, plus the
 *   routines' key when the compiler used routines: in memory, at most
 *   {@linkcode COMPILED_CACHE_ENTRIES} entries, least recently used first out, and in the
 *   cache, so a file compiles once, not once per process;
 * - the full set (`load`) for the last listing, so repeated listings compile nothing.
 * @module
 */
import {
  compareText,
  compileParsed,
  isRoutineId,
  LazyRoutines,
  type LoadedSet,
  type LoadedWorkflow,
  type LoadResult,
  onlyBundledMayDefine,
  parseSourceFile,
  resolveCatalog,
  routinesAmong,
  SOURCE_KINDS,
  type SourceFile,
  type WorkflowFile,
  type WorkflowLoadError,
  type WorkflowSource,
} from "../engine/mod.ts";
import {
  compilerIdentity,
  type IndexedFile,
  sha256,
  type StoredOutcome,
  type WorkflowCache,
} from "./workflow_cache.ts";
import {
  type FileState,
  fileVersion,
  indexedState,
  indexRow,
  listDir,
  type ListedFile,
  type Listing,
  Lru,
  parseState,
  readState,
  type SourceDir,
  textState,
} from "./workflow_states.ts";

export type { SourceDir } from "./workflow_states.ts";

/** How many compiled workflows the memory cache keeps (the last full set is kept besides). */
export const COMPILED_CACHE_ENTRIES = 128;

/** How many lookups by id are remembered for an unchanged listing. */
const FOUND_IDS = 256;

/**
 * How long a full listing of the folders answers `find` (the per-advance drift check) before
 * the folders are listed and stat-ed again. Within it only the found workflow's own file is
 * stat-ed, so an edit or removal of that file shows at once; a new file shadowing it, or an
 * in-place edit of a routine it uses, shows once the window has passed.
 */
export const LISTING_REUSE_MS = 1000;

/** A file an answer was read from, at the version it had then. */
type Watched = { source: string; file: string; version: string };

/** What {@linkcode ExtraWorkflows} gives: workflows and load errors. */
type ExtraLoad = { workflows: LoadedWorkflow[]; errors: WorkflowLoadError[] };
const NO_EXTRA: ExtraLoad = { workflows: [], errors: [] };

/** Workflows loaded elsewhere (DeepWork jobs), merged into the catalog under its precedence. */
export type ExtraWorkflows = () => Promise<ExtraLoad>;

/** Options of {@linkcode createWorkflowSource}. */
export interface WorkflowSourceOptions {
  /** Workflows loaded elsewhere (DeepWork jobs as `<job>.<workflow>`). */
  extra?: ExtraWorkflows;
  /** Where ids and outcomes are kept between processes; without one, each process starts cold. */
  cache?: WorkflowCache;
}

/** What one call sees: the listings, and their files' states (bundled first). */
interface View {
  key: string;
  listings: { dir: SourceDir; listing: Listing }[];
  files(): Promise<FileState[]>;
}

/** A file's outcome, and the routines' key when compiling read routines. */
type Outcome = { routines: string | null; result: LoadResult };

/** The routines a compile may read: built on first use, keyed by the routine files' digests. */
type Routines = { build(): ReadonlyMap<string, WorkflowFile>; key(): string };

/** Creates a workflow source over bundled files and directories, in precedence order. */
export function createWorkflowSource(
  bundled: readonly SourceFile[],
  dirs: readonly SourceDir[],
  options: WorkflowSourceOptions = {},
): WorkflowSource {
  return new FolderSource(bundled, dirs, options);
}

const keyOf = (source: string, path: string) => `${source}\0${path}`;

const byPrecedence = (a: FileState, b: FileState) =>
  SOURCE_KINDS.indexOf(a.source) - SOURCE_KINDS.indexOf(b.source) || compareText(a.file, b.file);

/** Bundled files and folders, compiled on demand with the caches described above. */
class FolderSource implements WorkflowSource {
  readonly #bundled: readonly SourceFile[];
  readonly #dirs: readonly SourceDir[];
  readonly #extra?: ExtraWorkflows;
  readonly #cache?: WorkflowCache;
  #salt: string | null = null;
  // read on first use, not at start-up (their digests cost a millisecond)
  #bundledRead: Promise<FileState[]> | null = null;
  readonly #states = new Map<string, FileState>();
  readonly #outcomes = new Lru<string, Outcome>(COMPILED_CACHE_ENTRIES);
  // what this call learnt that the cache lacks, written at its end
  #unsaved = { files: new Map<string, IndexedFile>(), outcomes: new Map<string, StoredOutcome>() };
  #last: { key: string; set: LoadedSet } | null = null;
  #found: { key: string; byId: Map<string, LoadedWorkflow | null> } | null = null;
  // when the folders were last listed, their own versions then, and what each answer read
  #listed = { at: -Infinity, dirs: "", watch: new Map<string, Watched[]>() };
  readonly #bundledFound = new Map<string, LoadedWorkflow>(); // at most one per bundled file

  constructor(
    bundled: readonly SourceFile[],
    dirs: readonly SourceDir[],
    options: WorkflowSourceOptions,
  ) {
    this.#bundled = bundled;
    this.#dirs = dirs;
    this.#extra = options.extra;
    this.#cache = options.cache;
  }

  /** The compiler's identity, part of every digest (computed once, on first use). */
  get #saltValue(): string {
    return this.#salt ??= compilerIdentity();
  }

  /** The cache's index rows of these paths, by source and path (none when it cannot answer). */
  async #indexed(paths: readonly string[]): Promise<Map<string, IndexedFile>> {
    if (!this.#cache || paths.length === 0) return new Map();
    try {
      const rows = await this.#cache.files(paths);
      return new Map(rows.map((row) => [keyOf(row.source, row.path), row]));
    } catch {
      return new Map(); // the cache is never the truth: a failed read is a miss
    }
  }

  #remember(state: FileState, mtimeMs: number): void {
    const row = this.#cache && indexRow(state, mtimeMs, Date.now());
    if (row) this.#unsaved.files.set(keyOf(row.source, row.path), row);
  }

  #bundledStates(): Promise<FileState[]> {
    return this.#bundledRead ??= this.#readBundled();
  }

  /** Bundled states: the id from the index when it knows this text, else from a parse. */
  async #readBundled(): Promise<FileState[]> {
    const salt = this.#saltValue;
    const indexed = await this.#indexed(this.#bundled.map((input) => input.file));
    return this.#bundled.map((input) => {
      const version = `bundled:${sha256(salt, input.source, input.file, input.text)}`;
      const row = indexed.get(keyOf(input.source, input.file));
      if (row?.version === version) return { ...indexedState(row, input.source), input };
      const parsed = parseSourceFile(input); // no validation: cheap (see parseSourceFile)
      const state = textState(input, { version, salt, id: parsed.ok ? parsed.file.id : null });
      state.parsed = parsed;
      this.#remember(state, 0);
      return state;
    });
  }

  #view(): View {
    const listings = this.#dirs.map((dir) => ({ dir, listing: listDir(dir) }));
    let all: Promise<FileState[]> | null = null;
    const files = () => all ??= this.#readListed(listings);
    return { key: JSON.stringify(listings.map((l) => l.listing)), listings, files };
  }

  /**
   * The bundled files' states, then each listed file's: kept while its version holds, else
   * from the index when it has that version, else read.
   */
  async #readListed(listings: View["listings"]): Promise<FileState[]> {
    const all = [...await this.#bundledStates()];
    const listed: { dir: SourceDir; file: ListedFile }[] = [];
    for (const { dir, listing } of listings) {
      if (Array.isArray(listing)) { for (const file of listing) listed.push({ dir, file }); }
    }
    const stale = listed.filter(({ file }) =>
      this.#states.get(file.file)?.version !== file.version
    );
    const indexed = await this.#indexed(stale.map(({ file }) => file.file));
    for (const { dir, file } of stale) {
      const row = indexed.get(keyOf(dir.source, file.file));
      const state = row?.version === file.version
        ? indexedState(row, dir.source)
        : readState(dir.source, file, this.#saltValue);
      this.#remember(state, file.mtimeMs);
      this.#states.set(file.file, state);
    }
    const live = new Set(listed.map(({ file }) => file.file));
    for (const file of this.#states.keys()) if (!live.has(file)) this.#states.delete(file);
    return [...all, ...listed.map(({ file }) => this.#states.get(file.file)!)];
  }

  /** The routines offered to a compile: those among the files, by their declared ids. */
  #routinesOf(files: readonly FileState[]): Routines {
    const routineStates = () =>
      files.filter((s) => !s.readError && s.id !== null && isRoutineId(s.id));
    let key: string | null = null;
    return {
      build: () => routinesAmong(routineStates().map((s) => parseState(s, this.#saltValue))),
      key: () => key ??= sha256(...routineStates().map((s) => s.digest)),
    };
  }

  /** Outcomes the cache holds for these states that memory does not. */
  async #stored(states: readonly FileState[]): Promise<Map<string, Outcome>> {
    const wanted = states.filter((s) => !s.readError && !this.#outcomes.get(s.digest));
    if (!this.#cache || wanted.length === 0) return new Map();
    try {
      const rows = await this.#cache.outcomes([...new Set(wanted.map((s) => s.digest))]);
      return new Map(rows.map((r) => [r.digest, { routines: r.routinesKey, result: r.result }]));
    } catch {
      return new Map();
    }
  }

  /**
   * What loading a file gives: kept in memory, else stored in the cache, else parsed and
   * compiled now. An outcome that used routines is valid while they are the same.
   */
  async #outcome(
    state: FileState,
    routines: Routines,
    stored: ReadonlyMap<string, Outcome>,
  ): Promise<LoadResult> {
    if (state.readError) return state.readError;
    const valid = (o: Outcome | undefined): o is Outcome =>
      o !== undefined && (o.routines === null || o.routines === routines.key());
    const kept = this.#outcomes.get(state.digest);
    if (valid(kept)) return kept.result;
    const saved = stored.get(state.digest);
    if (valid(saved)) {
      this.#outcomes.set(state.digest, saved);
      return saved.result;
    }
    const parsed = parseState(state, this.#saltValue);
    if (state.readError) return state.readError; // gone since it was listed
    let outcome: Outcome;
    if (parsed.ok) {
      const lazy = new LazyRoutines(routines.build);
      const result = await compileParsed(parsed, lazy);
      outcome = { routines: lazy.used ? routines.key() : null, result };
    } else outcome = { routines: null, result: parsed };
    this.#outcomes.set(state.digest, outcome);
    if (this.#cache) {
      const { digest } = state;
      this.#unsaved.outcomes.set(digest, { digest, routinesKey: outcome.routines, ...outcome });
    }
    return outcome.result;
  }

  /** Writes what this call learnt to the cache; a failed write only costs a later compile. */
  async #save(): Promise<void> {
    const { files, outcomes } = this.#unsaved;
    if (!this.#cache || files.size + outcomes.size === 0) return;
    this.#unsaved = { files: new Map(), outcomes: new Map() };
    try {
      await this.#cache.save({ files: [...files.values()], outcomes: [...outcomes.values()] });
    } catch {
      // the cache is never the truth
    }
  }

  async #loadAll(current: View, more: ExtraLoad): Promise<LoadedSet> {
    const files = await current.files();
    const routines = this.#routinesOf(files);
    const stored = await this.#stored(files);
    const workflows: LoadedWorkflow[] = [];
    const errors: WorkflowLoadError[] = [];
    for (const { listing } of current.listings) {
      if (!Array.isArray(listing)) errors.push(listing.error);
    }
    for (const state of files) {
      const item = await this.#outcome(state, routines, stored);
      if (item.ok) workflows.push(item.workflow);
      else errors.push(item.error);
    }
    await this.#save();
    return resolveCatalog([...workflows, ...more.workflows], [...errors, ...more.errors]);
  }

  /**
   * The workflow `load` would pick for `workflowId` (the first file, by source precedence then
   * path, that declares it and loads), compiling only candidates; `null` when none does.
   */
  async #findOne(current: View, workflowId: string): Promise<LoadedWorkflow | null> {
    const files = await current.files();
    const bundledOnly = onlyBundledMayDefine(workflowId);
    const candidates = files.filter((s) =>
      s.id === workflowId && !s.readError && (!bundledOnly || s.source === "bundled")
    ).sort(byPrecedence);
    const routines = this.#routinesOf(files);
    const stored = await this.#stored(candidates);
    let found: LoadedWorkflow | null = null;
    for (const state of candidates) {
      const result = await this.#outcome(state, routines, stored);
      if (result.ok && result.workflow.id === workflowId) {
        found = result.workflow;
        break;
      }
    }
    await this.#save();
    return found;
  }

  /** The folders' own versions: adding, removing or renaming a file changes them. */
  #dirVersions(): string {
    return this.#dirs.map(({ dir }) => fileVersion("dir", dir)).join("|");
  }

  /** The files an answer was read from: its own, and the routines' when it used them. */
  async #watchedFiles(current: View, workflow: LoadedWorkflow): Promise<Watched[] | undefined> {
    const own = this.#states.get(workflow.file);
    if (!own || own.readError) return undefined;
    const usedRoutines = this.#outcomes.get(own.digest)?.routines !== null;
    const routineStates = usedRoutines
      ? (await current.files()).filter((s) =>
        s !== own && s.source !== "bundled" && !s.readError && s.id !== null && isRoutineId(s.id)
      )
      : [];
    return [own, ...routineStates].map((s) => ({
      source: s.source,
      file: s.file,
      version: s.version,
    }));
  }

  /** The last listing's answer, while recent and neither the folders nor its files changed. */
  #recentAnswer(workflowId: string): LoadedWorkflow | undefined {
    const listed = this.#listed;
    if (performance.now() - listed.at > LISTING_REUSE_MS) return undefined;
    const watched = listed.watch.get(workflowId);
    if (!watched || listed.dirs !== this.#dirVersions()) return undefined;
    for (const w of watched) if (fileVersion(w.source, w.file) !== w.version) return undefined;
    return this.#found?.byId.get(workflowId) ?? undefined;
  }

  /** Every workflow from every source, precedence applied, and every load error. */
  async load(): Promise<LoadedSet> {
    const current = this.#view();
    const more = this.#extra ? await this.#extra() : NO_EXTRA;
    const key = JSON.stringify([
      current.key,
      more.workflows.map((w) => `${w.id}:${w.hash}:${w.file}`),
      more.errors,
    ]);
    if (this.#last?.key !== key) this.#last = { key, set: await this.#loadAll(current, more) };
    return this.#last.set;
  }

  /**
   * A `wr.*` id is only ever a bundled file's, and those cannot change: no listing, and the
   * answer is kept unless the compiler read routines (which may live in folders).
   */
  async #findBundled(workflowId: string): Promise<LoadedWorkflow | null | undefined> {
    const kept = this.#bundledFound.get(workflowId);
    if (kept) return kept;
    const bundled = await this.#bundledStates();
    const bundledOnly: View = { key: "", listings: [], files: () => Promise.resolve(bundled) };
    const workflow = await this.#findOne(bundledOnly, workflowId);
    if (!workflow) return null;
    const state = bundled.find((s) => s.file === workflow.file)!;
    if (this.#outcomes.get(state.digest)?.routines !== null) return undefined;
    this.#bundledFound.set(workflowId, workflow);
    return workflow;
  }

  /** One workflow by id, compiling only what declares it; `null` when none does. */
  async find(workflowId: string): Promise<LoadedWorkflow | null> {
    if (onlyBundledMayDefine(workflowId)) {
      const bundledAnswer = await this.#findBundled(workflowId);
      if (bundledAnswer !== undefined) return bundledAnswer;
    }
    const workflow = this.#recentAnswer(workflowId) ?? await this.#findListed(workflowId);
    // job workflows are looked up only when no file defines the id (files take precedence)
    if (workflow === null && this.#extra) {
      return (await this.#extra()).workflows.find((w) => w.id === workflowId) ?? null;
    }
    return workflow;
  }

  async #findListed(workflowId: string): Promise<LoadedWorkflow | null> {
    const dirsBefore = this.#dirVersions();
    const current = this.#view();
    // a fresh map per listing, and a bounded one: ids asked for are not all ids that exist
    if (this.#found?.key !== current.key || this.#found.byId.size >= FOUND_IDS) {
      this.#found = { key: current.key, byId: new Map() };
    }
    let workflow = this.#found.byId.get(workflowId);
    if (workflow === undefined) {
      workflow = await this.#findOne(current, workflowId);
      this.#found.byId.set(workflowId, workflow);
    }
    if (this.#listed.dirs !== dirsBefore || this.#listed.watch.size >= FOUND_IDS) {
      this.#listed = { at: 0, dirs: dirsBefore, watch: new Map() };
    }
    this.#listed.at = performance.now();
    const watched = workflow && await this.#watchedFiles(current, workflow);
    if (watched) this.#listed.watch.set(workflowId, watched);
    else this.#listed.watch.delete(workflowId);
    return workflow;
  }
}
