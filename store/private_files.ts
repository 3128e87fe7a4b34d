/**
 * What waymark keeps is its user's alone: notes and context hold secrets. The home is created
 * 0700 and every file waymark writes (the database, backups, exported bundles, the keyring)
 * 0600; SQLite gives a database's `-wal` and `-shm` files the database file's mode, so creating
 * the database 0600 covers them. Doctor reports looser modes and `--repair` tightens them.
 * @module
 */
import { chmod, lstat, mkdir, stat, writeFile } from "node:fs/promises";
import { closeSync, constants, openSync } from "node:fs";
import process from "node:process";

/** The mode of waymark's home. */
export const PRIVATE_DIR_MODE = 0o700;
/** The mode of every file waymark writes. */
export const PRIVATE_FILE_MODE = 0o600;

/** Whether file modes mean anything here (not on Windows). */
const MODES_APPLY = process.platform !== "win32"; // node:process: the npm build runs on Node

/** What is at `path` without following a symbolic link, or `null` when nothing is. */
async function entryAt(path: string) {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * What is wrong with the home, without creating anything: a file, or a symbolic link that leads
 * nowhere or to a file, said with what to do; `null` for a folder or nothing there yet.
 */
export async function homeProblem(home: string): Promise<string | null> {
  const entry = await entryAt(home);
  if (entry?.isSymbolicLink()) {
    const target = await stat(home).catch(() => null);
    if (!target) {
      return `the waymark home ${home} is a symbolic link to something that does not exist; create its target folder, or point WAYMARK_HOME (or --home) elsewhere`;
    }
    return target.isDirectory() ? null : notAFolder(home);
  }
  return entry && !entry.isDirectory() ? notAFolder(home) : null;
}

/**
 * Makes sure the home is a folder (created 0700 when missing): a file or a symbolic link that
 * leads nowhere is refused with what is there and what to do, instead of mkdir's `EEXIST`.
 */
export async function prepareHome(home: string): Promise<void> {
  const problem = await homeProblem(home);
  if (problem) throw new Error(problem);
  if (!(await entryAt(home))) await mkdir(home, { recursive: true, mode: PRIVATE_DIR_MODE });
}

function notAFolder(home: string): string {
  return `the waymark home ${home} is a file, not a folder; move it away, or point WAYMARK_HOME (or --home) elsewhere`;
}

/**
 * Creates `path` as a new, empty file with mode 0600. Anything already there (a symbolic link
 * that leads nowhere included) is refused: the file is never written through a link.
 */
export function createPrivateFile(path: string): void {
  const flags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY;
  closeSync(openSync(path, flags, PRIVATE_FILE_MODE));
}

/** Creates the file of a new database 0600 (an empty file is a new database to SQLite). */
export function createDatabaseFile(path: string): void {
  try {
    createPrivateFile(path);
  } catch (error) {
    // there already, or a folder that does not exist yet: the driver says what it finds
    const code = (error as { code?: string }).code;
    if (code !== "EEXIST" && code !== "ENOENT") throw error;
  }
}

/** Writes `text` to `path` (replacing it) and leaves it 0600. */
export async function writePrivateFile(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: PRIVATE_FILE_MODE });
  if (MODES_APPLY) await chmod(path, PRIVATE_FILE_MODE);
}

/** A file or folder whose mode lets others read or write it. */
export interface LooseMode {
  /** The path. */
  path: string;
  /** Its mode (permission bits), as `0644`. */
  mode: string;
  /** The mode it should have. */
  expected: string;
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * The home and waymark's files (the database and the files beside it; missing ones are
 * skipped) whose modes let others in; with `repair`, set to 0700 and 0600 as they are found.
 * Symbolic links are not followed.
 */
export async function looseModes(
  home: string,
  options: { files: readonly string[]; repair: boolean },
): Promise<LooseMode[]> {
  if (!MODES_APPLY) return [];
  const found: LooseMode[] = [];
  const check = async (path: string, want: number) => {
    const entry = await entryAt(path);
    if (!entry || entry.isSymbolicLink() || (entry.mode & 0o077) === 0) return;
    found.push({ path, mode: octal(entry.mode), expected: octal(want) });
    if (options.repair) await chmod(path, want);
  };
  if ((await entryAt(home))?.isDirectory()) await check(home, PRIVATE_DIR_MODE);
  for (const path of options.files) await check(path, PRIVATE_FILE_MODE);
  return found;
}
