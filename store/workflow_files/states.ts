/**
 * The workflow source's view of files: folder listings with each file's version (from `stat`),
 * and per file version its declared id, the digest of its text, and the text itself once read.
 * A state built from the persistent index has no text until something needs it.
 * @module
 */
import { isOverlayName } from "../../engine/workflow/overlay_schema.ts";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { SourceKind } from "../../engine/model/vocabulary.ts";
import {
  declaredId,
  type ParsedSource,
  parseSourceFile,
  type SourceFile,
} from "../../engine/workflow/catalog.ts";
import type { WorkflowLoadError } from "../../engine/workflow/parse.ts";
import { type IndexedFile, RECENT_EDIT_MS, sha256 } from "./cache.ts";

/** A directory of workflow files and its source kind. */
export interface SourceDir {
  /** Source kind (decides precedence and whether `waymark.*` is allowed). */
  source: Exclude<SourceKind, "bundled">;
  /** The directory. */
  dir: string;
}

/** A listed file: its path, version, and modification time (for the recent-edit rule). */
export interface ListedFile {
  /** Path. */
  file: string;
  /** Source kind, modification and change times, size and inode (or `…:missing`). */
  version: string;
  /** Modification time (ms since the epoch), `0` when unknown. */
  mtimeMs: number;
}

/** A directory's files, or why it could not be listed. */
export type Listing = ListedFile[] | { ok: false; error: WorkflowLoadError };

/** A file's version: what its `stat` says (any edit, rename over it or touch changes it). */
export function fileVersion(source: string, file: string): string {
  return statVersion(source, file).version;
}

function statVersion(source: string, file: string): { version: string; mtimeMs: number } {
  // runs on every call: a missing file costs ~1 µs here, where a failing stat builds an error
  if (!existsSync(file)) return { version: `${source}:missing`, mtimeMs: 0 };
  try {
    const s = statSync(file);
    return {
      version: `${source}:${s.mtimeMs}:${s.ctimeMs}:${s.size}:${s.ino}`,
      mtimeMs: s.mtimeMs,
    };
  } catch {
    return { version: `${source}:missing`, mtimeMs: 0 };
  }
}

// Listing and stat-ing run on every call (the drift check needs the files' current state);
// the synchronous calls cost microseconds where their async forms cost a scheduler hop each.
/**
 * A workflow folder's routines may live in its `routines/` subfolder (WorkRail's layout); the
 * source lists it as a folder of the same kind, and `workflows validate` looks there too.
 */
export const ROUTINES_SUBDIR = "routines";

/**
 * A directory's workflow files (`.json`, `.jsonc`; not `.schema.json`, nor the overlays that
 * `overlays.ts` reads), sorted, with versions.
 */
export function listDir({ source, dir }: SourceDir): Listing {
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
  return names.filter((n) =>
    /\.jsonc?$/.test(n) && !n.endsWith(".schema.json") && !isOverlayName(n)
  ).sort().map(
    (name) => {
      const file = join(dir, name);
      return { file, ...statVersion(source, file) };
    },
  );
}

/** One file version: its declared id, digest, and (once read) text and parse. */
export interface FileState {
  /** Source kind. */
  source: SourceKind;
  /** Path, or `bundled:<name>`. */
  file: string;
  /** The version this state is of. */
  version: string;
  /** The id the text declares, or `null`. */
  id: string | null;
  /** Digest of compiler, source, path and text (`""` when unreadable). */
  digest: string;
  /** The text, once read. */
  input?: SourceFile;
  /** Why the file could not be read. */
  readError?: { ok: false; error: WorkflowLoadError };
  /** The parse, once made. */
  parsed?: ParsedSource;
  /** Whether the persistent index lacks this state (so it is saved). */
  unindexed: boolean;
}

/** A state from text just read. */
export function textState(
  input: SourceFile,
  options: { version: string; salt: string; id?: string | null },
): FileState {
  return {
    source: input.source,
    file: input.file,
    version: options.version,
    id: options.id === undefined ? declaredId(input.text) : options.id,
    digest: sha256(options.salt, input.source, input.file, input.text),
    input,
    unindexed: true,
  };
}

/** A state from the persistent index (no text yet). */
export function indexedState(row: IndexedFile, source: SourceKind): FileState {
  return {
    source,
    file: row.path,
    version: row.version,
    id: row.workflowId,
    digest: row.digest,
    unindexed: false,
  };
}

/** Reads a folder's file into a state (or the state of a file that cannot be read). */
export function readState(
  source: SourceDir["source"],
  listed: { file: string; version: string },
  salt: string,
): FileState {
  const { file, version } = listed;
  try {
    return textState({ source, file, text: readFileSync(file, "utf8") }, { version, salt });
  } catch (error) {
    return {
      source,
      file,
      version,
      id: null,
      digest: "",
      unindexed: false,
      readError: {
        ok: false,
        error: { file, issues: [{ path: "", message: `cannot read file: ${String(error)}` }] },
      },
    };
  }
}

/**
 * The text of a state built from the index, read now. Should the file have changed since its
 * version was taken, the state takes the new text's id and digest, and a version no listing
 * gives, so the next call reads the file again.
 */
export function ensureText(state: FileState, salt: string): SourceFile | null {
  if (state.input || state.readError) return state.input ?? null;
  const fresh = readState(state.source as SourceDir["source"], state, salt);
  if (fresh.readError) {
    Object.assign(state, { readError: fresh.readError, version: `${state.source}:unread` });
    return null;
  }
  if (fresh.digest !== state.digest) {
    Object.assign(state, { id: fresh.id, digest: fresh.digest, version: `${state.source}:moved` });
  }
  state.input = fresh.input;
  return state.input!;
}

/** The parse of a state's text, made once (the read error when the text cannot be read). */
export function parseState(state: FileState, salt: string): ParsedSource {
  if (state.parsed) return state.parsed;
  const input = ensureText(state, salt);
  return state.parsed = input ? parseSourceFile(input) : state.readError!;
}

/** The index row of a state, unless it is unreadable or its file was modified too recently. */
export function indexRow(state: FileState, mtimeMs: number, now: number): IndexedFile | null {
  if (!state.unindexed || state.readError || now - mtimeMs < RECENT_EDIT_MS) return null;
  return {
    source: state.source,
    path: state.file,
    version: state.version,
    digest: state.digest,
    workflowId: state.id,
  };
}

/** A least-recently-used map of at most `limit` entries. */
export class Lru<K, V> {
  readonly #map = new Map<K, V>();
  /** Creates an empty map that keeps at most `limit` entries. */
  constructor(readonly limit: number) {}
  /** The value, now most recently used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }
  /** Sets a value, dropping the least recently used beyond the limit. */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.limit) this.#map.delete(this.#map.keys().next().value!);
  }
}
