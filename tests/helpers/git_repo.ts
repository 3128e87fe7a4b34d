/**
 * Real git repositories for the review tests: made in a temporary folder with the `git` on
 * PATH, each change of a kind the review rules must tell apart (committed on a branch, staged,
 * unstaged, untracked, ignored, deleted).
 * @module
 */
import { existsSync } from "node:fs";
import { writeIn } from "./deepwork.ts";

/**
 * Linux's shared-memory tmpfs. A repository of 100,000 files made under /tmp spent 10 to 60 s of
 * system CPU in the disk's journal when other tests wrote at once; in memory well under one.
 */
const MEMORY_DIR = "/dev/shm";

/** Runs git in `dir`; throws with its stderr when it fails. */
export async function git(dir: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-C", dir, ...args],
    env: {
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

/**
 * A new repository on `main` holding `files`, committed; `inMemory` makes it on a tmpfs where
 * there is one (for a tree of very many files).
 */
export async function gitRepo(
  files: Record<string, string>,
  options: { inMemory?: boolean } = {},
): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const parent = options.inMemory && existsSync(MEMORY_DIR) ? MEMORY_DIR : undefined;
  const dir = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "waymark-review-", dir: parent }),
  );
  await git(dir, "init", "-q", "-b", "main");
  for (const [path, text] of Object.entries(files)) await writeIn(dir, path, text);
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "base");
  return { dir, cleanup: () => Deno.remove(dir, { recursive: true }).catch(() => {}) };
}

/** Writes `files` in `dir` and commits them all. */
export async function commitIn(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) await writeIn(dir, path, text);
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "change");
}
