/**
 * A workspace as the review pipeline reads it, from the local git repository only (never a
 * remote): `git` is run as a program, without a shell, with paths taken relative to the
 * workspace root (a subfolder of a repository, or a worktree, is its own workspace). Files are
 * read and hashed inside the root only (`files.ts`). Outside git, rule files and folders are
 * found by walking the tree; what changed then has to be named.
 * @module
 */
import { execFile } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import type { Changes, ReviewWorkspace } from "../../../engine/review/ports.ts";
import { RULE_FILE_NAME } from "../../../engine/review/rule_file.ts";
import { diskFiles } from "./files.ts";

/** The branches whose merge-base starts a branch's committed changes, in order. */
const MAIN_BRANCHES = ["main", "master"];
/** Most bytes of git output read (a listing of a very large repository). */
const GIT_OUTPUT = 256 * 1024 * 1024;
/** Folders never walked outside git. */
const SKIPPED = new Set([".git", "node_modules"]);

type Git = { ok: true; out: string } | { ok: false; message: string };

function git(root: string, args: readonly string[]): Promise<Git> {
  return new Promise((done) => {
    execFile(
      "git",
      ["-C", root, ...args],
      {
        maxBuffer: GIT_OUTPUT,
        encoding: "utf8",
        env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" },
      },
      (error, stdout, stderr) => {
        if (!error) done({ ok: true, out: stdout });
        else {
          const why = String(stderr || error.message).trim().split("\n")[0];
          done({ ok: false, message: `git ${args[0]} failed: ${why}` });
        }
      },
    );
  });
}

const paths = (out: string) => out.split("\0").filter((p) => p !== "");

async function isFile(root: string, path: string): Promise<boolean> {
  const info = await stat(join(root, path)).catch(() => null);
  return info?.isFile() ?? false;
}

/** The commit committed changes are taken since: the merge-base with `baseRef`, else with main or master. */
async function baseCommit(
  root: string,
  baseRef: string | undefined,
): Promise<{ ok: true; base: string | null } | { ok: false; message: string }> {
  const refs = baseRef !== undefined ? [baseRef] : MAIN_BRANCHES.map((b) => `refs/heads/${b}`);
  // independent questions, asked at once: each git start costs a process
  const [head, ...found] = await Promise.all([
    git(root, ["rev-parse", "--verify", "-q", "HEAD"]),
    ...refs.map((ref) => git(root, ["rev-parse", "--verify", "-q", `${ref}^{commit}`])),
  ]);
  if (!head!.ok) {
    if (baseRef !== undefined) return { ok: false, message: "the repository has no commits yet" };
    return { ok: true, base: null };
  }
  for (const ref of found) {
    if (!ref.ok) continue;
    const base = await git(root, ["merge-base", "HEAD", ref.out.trim()]);
    if (base.ok) return { ok: true, base: base.out.trim() };
  }
  if (baseRef !== undefined) {
    return { ok: false, message: `the base ref ${JSON.stringify(baseRef)} is no commit here` };
  }
  return { ok: true, base: "HEAD" };
}

async function changes(root: string, baseRef: string | undefined): Promise<Changes> {
  const [inside, base] = await Promise.all([
    git(root, ["rev-parse", "--is-inside-work-tree"]),
    baseCommit(root, baseRef),
  ]);
  if (!inside.ok || inside.out.trim() !== "true") {
    return { ok: false, message: "it is not inside a git work tree" };
  }
  if (!base.ok) return base;
  const [tracked, untracked] = await Promise.all([
    base.base === null ? git(root, ["ls-files", "-z", "--cached"]) : git(root, [
      "diff",
      "--name-only",
      "-z",
      "--no-renames",
      "--diff-filter=d",
      "--relative",
      base.base,
      "--",
    ]),
    git(root, ["ls-files", "-z", "--others", "--exclude-standard"]),
  ]);
  if (!tracked.ok) return tracked;
  if (!untracked.ok) return untracked;
  const all = [...new Set([...paths(tracked.out), ...paths(untracked.out)])].sort();
  const present = await Promise.all(all.map((p) => isFile(root, p)));
  return {
    ok: true,
    files: all.filter((_, i) => present[i]),
    base: base.base === "HEAD" ? null : base.base,
  };
}

async function walk(
  root: string,
  folder: string,
  keep: (path: string) => boolean,
): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(join(root, folder), { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const path = folder === "" ? e.name : `${folder}/${e.name}`;
    if (e.isDirectory() && !SKIPPED.has(e.name)) out.push(...await walk(root, path, keep));
    else if (e.isFile() && keep(path)) out.push(path);
  }
  return out.sort();
}

/** Files under `folder` that git does not ignore (tracked or not), else every file walked. */
async function listed(root: string, folder: string, pathspec: string): Promise<string[] | null> {
  const found = await git(root, [
    "ls-files",
    "-z",
    "--cached",
    "--others",
    "--exclude-standard",
    "--",
    pathspec,
  ]);
  if (!found.ok) return null;
  const under = [...new Set(paths(found.out))].sort()
    .filter((p) => folder === "" || p.startsWith(`${folder}/`));
  const present = await Promise.all(under.map((p) => isFile(root, p)));
  return under.filter((_, i) => present[i]);
}

/** The workspace at `root` (absolute). */
export function gitWorkspace(root: string): ReviewWorkspace {
  return {
    root,
    changes: ({ baseRef }) => changes(root, baseRef),
    async ruleFiles() {
      return await listed(root, "", `:(glob)**/${RULE_FILE_NAME}`) ??
        await walk(root, "", (p) => p.split("/").at(-1) === RULE_FILE_NAME);
    },
    async list(folder) {
      return await listed(root, folder, folder === "" ? "." : folder) ??
        await walk(root, folder, () => true);
    },
    async hash(path) {
      const found = await diskFiles.describe(root, path, { hashUpTo: Number.MAX_SAFE_INTEGER });
      return found.ok ? found.facts.sha256 : null;
    },
    async read(path, maxBytes) {
      const found = await diskFiles.describe(root, path, { hashUpTo: -1 });
      if (!found.ok) return null;
      const text = await diskFiles.readText(root, path, Math.max(0, maxBytes));
      if (text === null) return null;
      const whole = found.facts.size <= maxBytes;
      return { text: whole ? text : text.replace(/\uFFFD+$/, ""), size: found.facts.size };
    },
  };
}
