/**
 * Workflow sources on disk (user, project, extra directories) plus the bundled files, loaded
 * through the engine's pure loader. Every call lists the directories and stats each file (the
 * drift check needs their current state); what a file version yields is kept:
 *
 * - its text and the id it declares (read with the native JSON parser first), so finding one
 *   workflow reads the other files' ids only, and a `wr.*` id reads no directory file at all;
 * - its parse (zod validation), made only for candidates, routines and full listings;
 * - its compiled form, cached by SHA-256 of source, path and text (plus the routines, when the
 *   compiler used them): at most {@linkcode COMPILED_CACHE_ENTRIES} entries, least recently used
 *   first out;
 * - the full set (`load`) for the last listing, so repeated listings compile nothing.
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  compileParsed,
  declaredId,
  findInIndex,
  indexRoutines,
  isRoutineId,
  LazyRoutines,
  type LoadedSet,
  type LoadedWorkflow,
  type LoadResult,
  onlyBundledMayDefine,
  type ParsedSource,
  parseSourceFile,
  resolveCatalog,
  routinesAmong,
  type SourceFile,
  type SourceIndex,
  type SourceKind,
  type WorkflowFile,
  type WorkflowLoadError,
  type WorkflowSource,
} from "../engine/mod.ts";

/** A directory of workflow files and its source kind. */
export interface SourceDir {
  /** Source kind (decides precedence and whether `wr.*` is allowed). */
  source: Exclude<SourceKind, "bundled">;
  /** The directory. */
  dir: string;
}

/** How many compiled workflows the cache keeps (the last full set is kept besides). */
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

type Listing = { file: string; version: string }[] | { ok: false; error: WorkflowLoadError };

/** One file version: its text (or why it could not be read), declared id and parse. */
interface FileState {
  version: string;
  input: SourceFile | null;
  readError?: { ok: false; error: WorkflowLoadError };
  id: string | null;
  digest: string;
  parsed?: ParsedSource;
}

// Listing and stat-ing run on every call (the drift check needs the files' current state);
// the synchronous calls cost microseconds where their async forms cost a scheduler hop each.
function listDir({ source, dir }: SourceDir): Listing {
  let names: string[];
  if (!existsSync(dir)) return []; // ~1 µs, where a failing readdir builds an error (~15 µs)
  try {
    names = readdirSync(dir);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    return {
      ok: false,
      error: {
        file: dir,
        issues: [{ path: "", message: `cannot read directory: ${String(error)}` }],
      },
    };
  }
  return names.filter((n) => /\.jsonc?$/.test(n) && !n.endsWith(".schema.json")).sort().map(
    (name) => {
      const file = join(dir, name);
      return { file, version: fileVersion(source, file) };
    },
  );
}

function fileVersion(source: string, file: string): string {
  try {
    const info = statSync(file);
    return `${source}:${info.mtimeMs}:${info.size}`;
  } catch {
    return `${source}:missing`;
  }
}

/** A file an answer was read from, at the version it had then. */
type Watched = { source: string; file: string; version: string };

/** What {@linkcode ExtraWorkflows} gives: workflows and load errors. */
type ExtraLoad = { workflows: LoadedWorkflow[]; errors: WorkflowLoadError[] };
const NO_EXTRA: ExtraLoad = { workflows: [], errors: [] };

/** Workflows loaded elsewhere (DeepWork jobs), merged into the catalog under its precedence. */
export type ExtraWorkflows = () => Promise<ExtraLoad>;

function sha256(...parts: string[]): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part).update("\0");
  return hash.digest("hex");
}

// Each file version's state, found from the SourceFile it hands the engine.
const stateOf = new WeakMap<SourceFile, FileState>();

function fileState(input: SourceFile, version: string): FileState {
  const state: FileState = {
    version,
    input,
    id: declaredId(input.text),
    digest: sha256(input.source, input.file, input.text),
  };
  stateOf.set(input, state);
  return state;
}

/** A bundled file's state: its (unvalidated, cheap) parse gives the id, and is kept for compiling. */
function bundledState(input: SourceFile): FileState {
  const parsed = parseSourceFile(input);
  const state: FileState = {
    version: "bundled",
    input,
    id: parsed.ok ? parsed.file.id : null,
    digest: sha256(input.source, input.file, input.text),
    parsed,
  };
  stateOf.set(input, state);
  return state;
}

function readState(source: SourceDir["source"], file: string, version: string): FileState {
  try {
    return fileState({ source, file, text: readFileSync(file, "utf8") }, version);
  } catch (error) {
    return {
      version,
      input: null,
      id: null,
      digest: "",
      readError: {
        ok: false,
        error: { file, issues: [{ path: "", message: `cannot read file: ${String(error)}` }] },
      },
    };
  }
}

function parse(input: SourceFile): ParsedSource {
  const state = stateOf.get(input)!;
  return state.parsed ??= parseSourceFile(input);
}

/** A least-recently-used map of at most `limit` entries. */
class Lru<K, V> {
  readonly #map = new Map<K, V>();
  constructor(readonly limit: number) {}
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.limit) this.#map.delete(this.#map.keys().next().value!);
  }
}

/** What one call sees: the listings, and their files, each read at most once per version. */
interface View {
  key: string;
  listings: { dir: SourceDir; listing: Listing }[];
  /** Bundled files, then each directory's (read on first use). */
  files(): FileState[];
}

/**
 * Creates a workflow source over bundled files and directories, in precedence order, plus
 * `extra` workflows (DeepWork jobs as `<job>.<workflow>`).
 */
export function createWorkflowSource(
  bundled: readonly SourceFile[],
  dirs: readonly SourceDir[],
  extra?: ExtraWorkflows,
): WorkflowSource {
  return new FolderSource(bundled, dirs, extra);
}

/** A compiled result, and the routines' key when compiling read routines. */
type CompiledEntry = { routines: string | null; result: LoadResult };

/** Bundled files and folders, compiled on demand with the caches described above. */
class FolderSource implements WorkflowSource {
  readonly #bundled: readonly SourceFile[];
  readonly #dirs: readonly SourceDir[];
  readonly #extra?: ExtraWorkflows;
  // read on first use, not at start-up (their ids and digests cost milliseconds)
  #bundledRead: FileState[] | null = null;
  readonly #states = new Map<string, FileState>();
  readonly #compiled = new Lru<string, CompiledEntry>(COMPILED_CACHE_ENTRIES);
  #last: { key: string; set: LoadedSet } | null = null;
  #found: { key: string; byId: Map<string, LoadedWorkflow | null> } | null = null;
  // when the folders were last listed, their own versions then, and what each answer read
  #listed = { at: -Infinity, dirs: "", watch: new Map<string, Watched[]>() };
  readonly #bundledFound = new Map<string, LoadedWorkflow>(); // at most one per bundled file

  constructor(bundled: readonly SourceFile[], dirs: readonly SourceDir[], extra?: ExtraWorkflows) {
    this.#bundled = bundled;
    this.#dirs = dirs;
    this.#extra = extra;
  }

  #bundledStates(): FileState[] {
    return this.#bundledRead ??= this.#bundled.map(bundledState);
  }

  #view(): View {
    const listings = this.#dirs.map((dir) => ({ dir, listing: listDir(dir) }));
    let all: FileState[] | null = null;
    const files = (): FileState[] => all ??= this.#readListed(listings);
    return { key: JSON.stringify(listings.map((l) => l.listing)), listings, files };
  }

  /** The bundled files' states, then each listed file's (read again when its version moved). */
  #readListed(listings: View["listings"]): FileState[] {
    const all = [...this.#bundledStates()];
    const live = new Set<string>();
    for (const { dir, listing } of listings) {
      if (!Array.isArray(listing)) continue;
      for (const { file, version } of listing) {
        live.add(file);
        let state = this.#states.get(file);
        if (!state || state.version !== version) {
          state = readState(dir.source, file, version);
          this.#states.set(file, state);
        }
        all.push(state);
      }
    }
    for (const file of this.#states.keys()) if (!live.has(file)) this.#states.delete(file);
    return all;
  }

  #indexOf(current: View): SourceIndex & { routinesKey(): string } {
    const readable = () => current.files().filter((s) => s.input !== null);
    const index = {
      declaring: (id: string): SourceFile[] =>
        (onlyBundledMayDefine(id) ? this.#bundledStates() : readable())
          .filter((s) => s.id === id).map((s) => s.input!),
      routineFiles: (): SourceFile[] =>
        readable().filter((s) => s.id !== null && isRoutineId(s.id)).map((s) => s.input!),
      parse,
      routinesKey: () => sha256(...index.routineFiles().map((f) => stateOf.get(f)!.digest)),
    };
    return index;
  }

  /** Compiles through the cache; an entry that used routines is valid while they are the same. */
  async #compile(
    parsed: Extract<ParsedSource, { ok: true }>,
    routines: { build(): ReadonlyMap<string, WorkflowFile>; key(): string },
  ): Promise<LoadResult> {
    const digest = stateOf.get(parsed.input)!.digest;
    const hit = this.#compiled.get(digest);
    if (hit && (hit.routines === null || hit.routines === routines.key())) return hit.result;
    const lazy = new LazyRoutines(routines.build);
    const result = await compileParsed(parsed, lazy);
    this.#compiled.set(digest, { routines: lazy.used ? routines.key() : null, result });
    return result;
  }

  /** Every source in precedence order, parsed (a folder that failed to list is its error). */
  #parsedAll(current: View): ParsedSource[] {
    const all: ParsedSource[] = this.#bundledStates().map((state) => parse(state.input!));
    const files = current.files();
    let next = this.#bundled.length;
    for (const { listing } of current.listings) {
      if (!Array.isArray(listing)) {
        all.push(listing);
        continue;
      }
      for (const state of files.slice(next, next += listing.length)) {
        all.push(state.readError ?? parse(state.input!));
      }
    }
    return all;
  }

  async #loadAll(current: View, more: ExtraLoad): Promise<LoadedSet> {
    const all = this.#parsedAll(current);
    const routines = routinesAmong(all);
    const index = this.#indexOf(current);
    const workflows: LoadedWorkflow[] = [];
    const errors: WorkflowLoadError[] = [];
    for (const parsed of all) {
      const item = parsed.ok
        ? await this.#compile(parsed, { build: () => routines, key: index.routinesKey })
        : parsed;
      if (item.ok) workflows.push(item.workflow);
      else errors.push(item.error);
    }
    return resolveCatalog([...workflows, ...more.workflows], [...errors, ...more.errors]);
  }

  async #findOne(current: View, workflowId: string): Promise<LoadedWorkflow | null> {
    const index = this.#indexOf(current);
    const routines = { build: () => indexRoutines(index), key: index.routinesKey };
    return await findInIndex(index, workflowId, (parsed) => this.#compile(parsed, routines));
  }

  /** The folders' own versions: adding, removing or renaming a file changes them. */
  #dirVersions(): string {
    return this.#dirs.map(({ dir }) => fileVersion("dir", dir)).join("|");
  }

  /** The files an answer was read from: its own, and the routines' when it used them. */
  #watchedFiles(current: View, workflow: LoadedWorkflow): Watched[] | undefined {
    const own = this.#states.get(workflow.file);
    if (!own?.input) return undefined;
    const usedRoutines = this.#compiled.get(own.digest)?.routines !== null;
    const inputs = usedRoutines
      ? [own.input, ...this.#indexOf(current).routineFiles()]
      : [own.input];
    return inputs.flatMap((input) => {
      const state = this.#states.get(input.file);
      return state ? [{ source: input.source, file: input.file, version: state.version }] : [];
    });
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
    const bundledOnly: View = { key: "", listings: [], files: () => this.#bundledStates() };
    const workflow = await this.#findOne(bundledOnly, workflowId);
    if (!workflow) return null;
    const state = this.#bundledStates().find((s) => s.input!.file === workflow.file)!;
    if (this.#compiled.get(state.digest)?.routines !== null) return undefined;
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
    const watched = workflow && this.#watchedFiles(current, workflow);
    if (watched) this.#listed.watch.set(workflowId, watched);
    else this.#listed.watch.delete(workflowId);
    return workflow;
  }
}
