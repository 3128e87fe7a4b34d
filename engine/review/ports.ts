/**
 * What the review pipeline needs from a workspace: its changed files (from git, in the
 * adapter), its rule files, and reading and hashing files inside it. All paths are project
 * paths (`/`-separated, relative to the workspace root); the adapter never lets one leave it.
 * @module
 */
import type { NamedSchema } from "./named_schemas.ts";
import type { RuleProblem } from "./rule.ts";

/** What changed, or why that cannot be told. */
export type Changes =
  | {
    ok: true;
    /** Changed files that exist (deleted ones left out), sorted. */
    files: string[];
    /** What committed changes were taken since (a commit or ref), or `null` when none were. */
    base: string | null;
  }
  | { ok: false; message: string };

/** A workspace as the review pipeline reads it. */
export interface ReviewWorkspace {
  /** The workspace root (absolute), for messages. */
  readonly root: string;
  /**
   * The files changed: committed since the merge-base with `main` or `master` (or since
   * `baseRef`), staged, unstaged, and untracked files not ignored; deleted files left out.
   */
  changes(options: { baseRef?: string }): Promise<Changes>;
  /** Every `.deepreview` file in the workspace that is not ignored, sorted. */
  ruleFiles(): Promise<string[]>;
  /** Every file under `folder` that is not ignored (to name unchanged matching files). */
  list(folder: string): Promise<string[]>;
  /** SHA-256 (hex) of a file's content, or `null` when it is not a readable file in the root. */
  hash(path: string): Promise<string | null>;
  /** A file's text, at most `maxBytes` of it, and its full size; `null` when unreadable. */
  read(path: string, maxBytes: number): Promise<{ text: string; size: number } | null>;
}

/** Named schemas: the project's, configured folders' and the bundled set, precedence applied. */
export interface NamedSchemaSource {
  /** The schemas visible from a workspace root, and the problems of those that did not load. */
  load(root: string): Promise<{ schemas: NamedSchema[]; problems: RuleProblem[] }>;
}
