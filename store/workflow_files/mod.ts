/**
 * Workflow sources on disk (user, project, extra directories) plus the bundled files, loaded
 * through the engine's pure loader. Every call lists the directories and stats each file (the
 * drift check needs their current state); what a file version yields is kept
 * (`workflow_memo.ts`):
 *
 * - its declared id and the digest of its text: in memory per file version, and, with a
 *   {@linkcode WorkflowCache}, between processes by version (`workflow_cache.ts`), so a new
 *   process finds one workflow without reading the other files, and a `waymark.*` id reads no
 *   directory file at all;
 * - its text and parse, only once something needs them (a candidate not compiled before, a
 *   routine to compile against);
 * - its outcome (compiled workflow, hash and warnings, or load error) and summary, by digest,
 *   with the routines' key when the compiler used routines: so a file compiles once, not once
 *   per process, and listing reads summaries only;
 * - the full set (`load`) and the summaries (`summaries`) of the last listing, so repeated
 *   listings compile nothing.
 * @module
 */
import { join } from "node:path";
import { compareText } from "../../engine/common/collate.ts";
import type { WorkflowSource } from "../../engine/model/ports.ts";
import type { WorkflowSummary } from "../../engine/answers/responses.ts";
import { summarize } from "../../engine/use_cases/list_workflows.ts";
import { SOURCE_KINDS } from "../../engine/model/vocabulary.ts";
import {
  type LoadedSet,
  type LoadedWorkflow,
  parseSourceFile,
  resolveCatalog,
  type SourceFile,
} from "../../engine/workflow/catalog.ts";
import { isRoutineId } from "../../engine/workflow/compile.ts";
import { onlyBundledMayDefine } from "../../engine/workflow/workflow_ids.ts";
import type { WorkflowLoadError } from "../../engine/workflow/parse.ts";
import { type IndexedFile, sha256, type WorkflowCache } from "./cache.ts";
import { keyOf, WorkflowMemo } from "./memo.ts";
import { withOverlays } from "./overlays.ts";
import {
  type FileState,
  fileVersion,
  indexedState,
  listDir,
  type ListedFile,
  type Listing,
  readState,
  ROUTINES_SUBDIR,
  type SourceDir,
  textState,
} from "./states.ts";

export type { SourceDir } from "./states.ts";
export { COMPILED_CACHE_ENTRIES } from "./memo.ts";

/** A folder and its `routines/` subfolder, listed as folders of the same source. */
function withRoutinesDir(dir: SourceDir): SourceDir[] {
  return [dir, { ...dir, dir: join(dir.dir, ROUTINES_SUBDIR) }];
}

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

/** What `summaries` answers. */
type Summaries = { workflows: WorkflowSummary[]; errors: WorkflowLoadError[] };

/** What one call sees: the listings, and their files' states (bundled first). */
interface View {
  key: string;
  listings: { dir: SourceDir; listing: Listing }[];
  files(): Promise<FileState[]>;
}

/**
 * Creates a workflow source over bundled files and directories, in precedence order, with the
 * overlays in those directories layered over it.
 */
export function createWorkflowSource(
  bundled: readonly SourceFile[],
  dirs: readonly SourceDir[],
  options: WorkflowSourceOptions = {},
): WorkflowSource {
  return withOverlays(new FolderSource(bundled, dirs, options), { dirs, bundled });
}

const byPrecedence = (a: FileState, b: FileState) =>
  SOURCE_KINDS.indexOf(a.source) - SOURCE_KINDS.indexOf(b.source) || compareText(a.file, b.file);

const listingErrors = (current: View): WorkflowLoadError[] =>
  current.listings.flatMap(({ listing }) => Array.isArray(listing) ? [] : [listing.error]);

/** Bundled files and folders, compiled on demand with the caches described above. */
class FolderSource implements WorkflowSource {
  readonly #bundled: readonly SourceFile[];
  readonly #dirs: readonly SourceDir[];
  readonly #extra?: ExtraWorkflows;
  readonly #memo: WorkflowMemo;
  // read on first use, not at start-up (their digests cost a millisecond)
  #bundledRead: Promise<FileState[]> | null = null;
  readonly #states = new Map<string, FileState>();
  #last: { key: string; set: LoadedSet } | null = null;
  #lastSummaries: { key: string; value: Summaries } | null = null;
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
    this.#dirs = dirs.flatMap(withRoutinesDir);
    this.#extra = options.extra;
    this.#memo = new WorkflowMemo(options.cache);
  }

  #bundledStates(): Promise<FileState[]> {
    return this.#bundledRead ??= this.#memo.indexed(this.#bundled.map((input) => input.file))
      .then((indexed) => this.#readBundled(indexed));
  }

  /** Bundled states: the id from the index when it knows this text, else from a parse. */
  #readBundled(indexed: ReadonlyMap<string, IndexedFile>): FileState[] {
    const salt = this.#memo.salt;
    return this.#bundled.map((input) => {
      const version = `bundled:${sha256(salt, input.source, input.file, input.text)}`;
      const row = indexed.get(keyOf(input.source, input.file));
      if (row?.version === version) return { ...indexedState(row, input.source), input };
      const parsed = parseSourceFile(input); // no validation: cheap (see parseSourceFile)
      const state = textState(input, { version, salt, id: parsed.ok ? parsed.file.id : null });
      state.parsed = parsed;
      this.#memo.remember(state, 0);
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
    const listed: { dir: SourceDir; file: ListedFile }[] = [];
    for (const { dir, listing } of listings) {
      if (Array.isArray(listing)) { for (const file of listing) listed.push({ dir, file }); }
    }
    const stale = listed.filter(({ file }) =>
      this.#states.get(file.file)?.version !== file.version
    );
    // one query for the bundled files too, when they have not been read yet
    const unread = this.#bundledRead ? [] : this.#bundled.map((input) => input.file);
    const indexed = await this.#memo.indexed([...unread, ...stale.map(({ file }) => file.file)]);
    this.#bundledRead ??= Promise.resolve(this.#readBundled(indexed));
    const bundled = await this.#bundledRead;
    for (const { dir, file } of stale) {
      const row = indexed.get(keyOf(dir.source, file.file));
      const state = row?.version === file.version
        ? indexedState(row, dir.source)
        : readState(dir.source, file, this.#memo.salt);
      this.#memo.remember(state, file.mtimeMs);
      this.#states.set(file.file, state);
    }
    const live = new Set(listed.map(({ file }) => file.file));
    for (const file of this.#states.keys()) if (!live.has(file)) this.#states.delete(file);
    return [...bundled, ...listed.map(({ file }) => this.#states.get(file.file)!)];
  }

  async #loadAll(current: View, more: ExtraLoad): Promise<LoadedSet> {
    const files = await current.files();
    const routines = this.#memo.routinesOf(files);
    const stored = await this.#memo.storedOutcomes(files);
    const workflows: LoadedWorkflow[] = [];
    const errors = listingErrors(current);
    for (const state of files) {
      const item = await this.#memo.outcome(state, routines, stored);
      if (item.ok) workflows.push(item.workflow);
      else errors.push(item.error);
    }
    await this.#memo.save();
    return resolveCatalog([...workflows, ...more.workflows], [...errors, ...more.errors]);
  }

  /** As {@linkcode #loadAll}, in summaries: no compiled workflow is read from the cache. */
  async #summarizeAll(current: View, more: ExtraLoad): Promise<Summaries> {
    const files = await current.files();
    const routines = this.#memo.routinesOf(files);
    const stored = await this.#memo.storedSummaries(files);
    const entry = (summary: WorkflowSummary, file: string) => ({ ...summary, file, summary });
    const entries = more.workflows.map((w) => entry(summarize(w), w.file));
    const errors = listingErrors(current);
    for (const state of files) {
      const item = await this.#memo.listed(state, routines, stored);
      if (item.ok) entries.push(entry(item.summary, state.file));
      else errors.push(item.error);
    }
    await this.#memo.save();
    const set = resolveCatalog(entries, [...errors, ...more.errors]);
    return { workflows: set.workflows.map((e) => e.summary), errors: set.errors };
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
    const routines = this.#memo.routinesOf(files);
    const stored = await this.#memo.storedOutcomes(candidates);
    let found: LoadedWorkflow | null = null;
    for (const state of candidates) {
      const result = await this.#memo.outcome(state, routines, stored);
      if (result.ok && result.workflow.id === workflowId) {
        found = result.workflow;
        break;
      }
    }
    await this.#memo.save();
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
    const routineStates = this.#memo.usedRoutines(own.digest)
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

  /** What a listing depends on: the folders' files at their versions, and the extra load. */
  #catalogKey(current: View, more: ExtraLoad): string {
    return JSON.stringify([
      current.key,
      more.workflows.map((w) => `${w.id}:${w.hash}:${w.file}`),
      more.errors,
    ]);
  }

  /** Every workflow from every source, precedence applied, and every load error. */
  async load(): Promise<LoadedSet> {
    const current = this.#view();
    const more = this.#extra ? await this.#extra() : NO_EXTRA;
    const key = this.#catalogKey(current, more);
    if (this.#last?.key !== key) this.#last = { key, set: await this.#loadAll(current, more) };
    return this.#last.set;
  }

  /** What `load` lists, summarised, from kept summaries where the cache has them. */
  async summaries(): Promise<Summaries> {
    const current = this.#view();
    const more = this.#extra ? await this.#extra() : NO_EXTRA;
    const key = this.#catalogKey(current, more);
    if (this.#lastSummaries?.key !== key) {
      this.#lastSummaries = { key, value: await this.#summarizeAll(current, more) };
    }
    return this.#lastSummaries.value;
  }

  /**
   * A `waymark.*` id is only ever a bundled file's, and those cannot change: no listing, and the
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
    if (this.#memo.usedRoutines(state.digest)) return undefined;
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
