/**
 * What the workflow source keeps between processes, so the first call of a session neither reads
 * every workflow file nor compiles any it has compiled before:
 *
 * - an index: a file (source and path) at a version (for a folder's file, its modification and
 *   change times, size and inode; for a bundled file, the digest of its text) → the id it
 *   declares and the digest of its text;
 * - outcomes: by that digest, what loading the file gave (its compiled workflow, hash and
 *   warnings, or its load error), and the routines it was compiled against when it used any.
 *
 * A digest covers the compiler ({@linkcode compilerIdentity}), the source kind, the path and
 * the text, so an outcome is only reused for the same text at the same place under the same
 * compiler. Each kind of row is bounded ({@linkcode WORKFLOW_CACHE_ROWS}); the oldest written go
 * first. The cache is never the truth: a row that cannot be read, or an outcome whose checksum
 * fails, is a miss, and a write that fails is dropped.
 * @module
 */
import { readdirSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import type { WorkflowSummary } from "../../engine/answers/responses.ts";
import type { LoadResult } from "../../engine/workflow/catalog.ts";
import { COMPILED_FORMAT } from "../../engine/workflow/compiled.ts";
import type { WorkflowLoadError } from "../../engine/workflow/parse.ts";

/** How many index rows, and how many outcomes, the cache keeps at most. */
export const WORKFLOW_CACHE_ROWS = 2000;

/**
 * A file modified this recently (ms) is not indexed by its version: a second edit within the
 * file system's timestamp granularity could leave the version unchanged. It is read again by
 * the next process, and indexed once it is older.
 */
export const RECENT_EDIT_MS = 3000;

/** A file as the index knows it. */
export interface IndexedFile {
  /** Source kind. */
  source: string;
  /** Path, or `bundled:<name>`. */
  path: string;
  /** The version the row is valid for. */
  version: string;
  /** Digest of compiler, source, path and text. */
  digest: string;
  /** The id the text declares, or `null`. */
  workflowId: string | null;
}

/** What listing shows of an outcome: the workflow's summary, or the load error. */
export type ListedOutcome =
  | { ok: true; summary: WorkflowSummary }
  | { ok: false; error: WorkflowLoadError };

/** Something kept under a text's digest, with the routines it was compiled against. */
export interface Stored<T> {
  /** The text's digest. */
  digest: string;
  /** The routines' key when compiling read routines, else `null`. */
  routinesKey: string | null;
  /** What is kept. */
  value: T;
}

/** What loading a text gave, and what listing shows of it. */
export interface StoredOutcome {
  /** The text's digest. */
  digest: string;
  /** The routines' key when compiling read routines, else `null`. */
  routinesKey: string | null;
  /** The outcome. */
  result: LoadResult;
  /** Its summary (or error), which listing reads instead of the whole outcome. */
  listed: ListedOutcome;
}

/** Where the workflow source keeps its index and outcomes (the store's `workflow_*` tables). */
export interface WorkflowCache {
  /** The index rows of these paths (any source). */
  files(paths: readonly string[]): Promise<IndexedFile[]>;
  /** The outcomes stored under these digests (undecodable ones left out). */
  outcomes(digests: readonly string[]): Promise<Stored<LoadResult>[]>;
  /** The summaries (or errors) stored under these digests (undecodable ones left out). */
  summaries(digests: readonly string[]): Promise<Stored<ListedOutcome>[]>;
  /** Writes index rows and outcomes (replacing rows with the same keys), then trims to the bound. */
  save(rows: { files: readonly IndexedFile[]; outcomes: readonly StoredOutcome[] }): Promise<void>;
}

/** SHA-256 over parts, each ended by a NUL. */
export function sha256(...parts: string[]): string {
  // one `update`: each call into node:crypto costs more than hashing a short part
  return createHash("sha256").update(`${parts.join("\0")}\0`).digest("hex");
}

function statLine(path: string): string {
  try {
    const info = statSync(path);
    return `${path}:${info.mtimeMs}:${info.size}`;
  } catch {
    return `${path}:-`;
  }
}

/** The format of what the cache stores: bump it when stored values or digests change shape. */
const CACHE_FORMAT = 1;

/**
 * The engine's folders whose sources the compiler and a workflow's summary depend on: the
 * language itself and everything it imports (not the run machinery nor the use-cases).
 */
const COMPILER_FOLDERS = [
  "model",
  "common",
  "answers",
  "gates",
  "verification",
  "access",
  "workflow",
  "deepwork",
].map((name) => `../../engine/${name}/`);

/**
 * What identifies the compiler, so an upgrade (or, in a checkout, an edit of the engine) never
 * reuses an outcome of another: the compiled and cache formats, this module's URL and file, the
 * running executable (`deno`, or a compiled waymark), and, where the engine's sources lie beside
 * this module, each source of the folders the compiler reads (`COMPILER_FOLDERS`) and the
 * summary's (`list_workflows.ts`), by modification time and size. About 60 `stat`s, once per
 * process.
 * `moduleUrl` stands for this module's URL (tests point it into a scratch tree).
 */
export function compilerIdentity(moduleUrl: string = import.meta.url): string {
  const parts = [`format ${COMPILED_FORMAT} cache ${CACHE_FORMAT}`, moduleUrl];
  parts.push(statLine(process.execPath));
  if (!moduleUrl.startsWith("file:")) return sha256(...parts);
  parts.push(statLine(fileURLToPath(moduleUrl)));
  for (const folder of COMPILER_FOLDERS) {
    let dir: string;
    let names: string[];
    try {
      dir = fileURLToPath(new URL(folder, moduleUrl));
      names = readdirSync(dir).filter((n) => n.endsWith(".ts")).sort();
    } catch {
      continue; // a bundle or a binary: no sources beside it
    }
    for (const name of names) parts.push(statLine(join(dir, name)));
  }
  parts.push(
    statLine(fileURLToPath(new URL("../../engine/use_cases/list_workflows.ts", moduleUrl))),
  );
  return sha256(...parts);
}

/**
 * An outcome as stored: its JSON after the JSON's SHA-256, so a row damaged on disk (SQLite does
 * not checksum its pages) is a miss, never a compiled workflow pinned under a hash it no longer
 * matches. Summaries are stored as plain JSON: they are only shown, and a hash per summary would
 * cost a listing of 100 files about 1.5 ms.
 */
export function seal(value: LoadResult): string {
  const json = JSON.stringify(value);
  return `${sha256(json)}:${json}`;
}

/** A stored outcome whose checksum holds, or `null` (read as a miss). */
export function unseal(text: string): LoadResult | null {
  const json = text.slice(65);
  if (text[64] !== ":" || sha256(json) !== text.slice(0, 64)) return null;
  return parsed<LoadResult>(json);
}

/** A stored value's JSON, or `null` when it is not an outcome or summary (read as a miss). */
export function parsed<T extends { ok: boolean }>(json: string): T | null {
  try {
    const value = JSON.parse(json);
    return typeof value?.ok === "boolean" ? value : null;
  } catch {
    return null;
  }
}
