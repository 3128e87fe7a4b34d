/**
 * Restoring a snapshot: refuse (changing nothing) during a merge, rebase, cherry-pick, revert or
 * bisect, in a sparse checkout, when the snapshot is not in this repository or not the run's;
 * else snapshot the files as they are (`before`, the undo), diff `before` against the target
 * inside the workspace folder, remove the files created since, and write the differing ones
 * from a temporary index (`checkout-index`), so ignored files, HEAD, the branch, the index and
 * the stash are never touched.
 * @module
 */
import { lstat, mkdtemp, readdir, rm, rmdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  type RestoreOutcome,
  type RestoreRefusal,
  SNAPSHOT_LIMITS,
} from "../../engine/model/snapshots.ts";
import { gitState } from "../context/workspace.ts";
import { parseRaw, type RawEntry } from "./changes.ts";
import { gitWhy, runGit } from "./git_process.ts";
import { commitTree, keepRef, repoFacts, runRefs, writeTree } from "./take.ts";

type Refused = { ok: false; refusal: RestoreRefusal };
type Restored = { ok: true; value: RestoreOutcome } | Refused;

const refuse = (reason: RestoreRefusal["reason"], message: string): Refused => ({
  ok: false,
  refusal: { reason, message },
});

/** Files in the git folder that say an operation is under way. */
const IN_PROGRESS: [string, string][] = [
  ["MERGE_HEAD", "a merge"],
  ["rebase-merge", "a rebase"],
  ["rebase-apply", "a rebase or am"],
  ["CHERRY_PICK_HEAD", "a cherry-pick"],
  ["REVERT_HEAD", "a revert"],
  ["BISECT_LOG", "a bisect"],
];

const exists = (path: string) => lstat(path).then(() => true, () => false);

/** The refusal that applies before anything is read, or `null`. */
async function precheck(
  workspace: string,
  at: { runId: string; commit: string; deadline: number },
): Promise<Refused | null> {
  const found = await repoFacts(workspace, at.deadline);
  if (!found.ok) return refuse("not_a_repository", `${found.notice.message}; nothing to restore`);
  for (const [file, what] of IN_PROGRESS) {
    if (await exists(join(found.facts.gitDir, file))) {
      return refuse(
        "git_operation_in_progress",
        `${what} is in progress in ${found.facts.top}; finish or abort it, then restore (nothing was changed)`,
      );
    }
  }
  const [object, ref, sparse] = await Promise.all([
    runGit(workspace, ["cat-file", "-e", `${at.commit}^{commit}`], { deadline: at.deadline }),
    runGit(workspace, ["rev-parse", "-q", "--verify", `${runRefs(at.runId)}${at.commit}`], {
      deadline: at.deadline,
    }),
    runGit(workspace, ["config", "--bool", "core.sparseCheckout"], { deadline: at.deadline }),
  ]);
  if (object.code !== 0) {
    return refuse(
      "snapshot_not_in_repository",
      `snapshot ${at.commit} is not in the repository at ${found.facts.top} (was the run begun on another machine?); nothing was changed`,
    );
  }
  if (ref.code !== 0) {
    return refuse(
      "snapshot_not_in_run",
      `${at.commit} is not a snapshot of this run; pass a snapshot the run recorded (nothing was changed)`,
    );
  }
  if (sparse.out.trim() === "true") {
    return refuse(
      "sparse_checkout",
      "the repository has a sparse checkout; restoring could write files outside it, so nothing was changed",
    );
  }
  return null;
}

/** What to do with each differing path, `before` → target. */
async function plan(workspace: string, raw: RawEntry[]) {
  const write: string[] = [];
  const remove: string[] = [];
  const skipped: { path: string; reason: string }[] = [];
  for (const e of raw) {
    if (e.srcMode === "160000" || e.dstMode === "160000") {
      skipped.push({ path: e.path, reason: "a submodule (its commit is not restored)" });
    } else if (e.status === "D") remove.push(e.path);
    else if (e.status === "A" && await exists(join(workspace, e.path))) {
      // not in `before`, yet on disk: an ignored file is in the way
      skipped.push({ path: e.path, reason: "an ignored file is in the way (left as it is)" });
    } else {
      if (e.status === "T") remove.push(e.path);
      write.push(e.path);
    }
  }
  return { write, remove, skipped };
}

/** Removes the folders that `paths`' removal left empty, up to the workspace folder. */
async function pruneEmpty(workspace: string, paths: string[]): Promise<void> {
  const folders = [...new Set(paths.map((p) => dirname(p)))].filter((d) => d !== ".");
  folders.sort((a, b) => b.length - a.length);
  for (let dir of folders) {
    while (dir !== "." && dir !== "") {
      const full = join(workspace, dir);
      const left = await readdir(full).catch(() => null);
      if (left === null || left.length > 0) break;
      await rmdir(full).catch(() => {});
      dir = dirname(dir);
    }
  }
}

/** The target's tree in a temporary index (read while the rest is checked), for `checkout-index`. */
async function targetIndex(
  workspace: string,
  at: { commit: string; tmp: string; deadline: number },
): Promise<{ GIT_INDEX_FILE: string } | null> {
  const env = { GIT_INDEX_FILE: join(at.tmp, "index") };
  const read = await runGit(workspace, ["read-tree", at.commit], { deadline: at.deadline, env });
  return read.code === 0 ? env : null;
}

/** Writes `paths` from the target's index into the workspace; why not, or `null`. */
async function writeFiles(
  workspace: string,
  at: { env: { GIT_INDEX_FILE: string } | null; paths: string[]; deadline: number },
): Promise<string | null> {
  if (at.paths.length === 0) return null;
  if (!at.env) return "the snapshot's files could not be read";
  const out = await runGit(workspace, ["checkout-index", "-f", "-z", "--stdin"], {
    deadline: at.deadline,
    env: at.env,
    input: at.paths.map((p) => `${p}\0`).join(""),
  });
  return out.code === 0 ? null : gitWhy(out);
}

const listed = <T>(items: T[]) => items.slice(0, SNAPSHOT_LIMITS.restoreListed);

/** The files as they are, as a tree (written while the refusals are checked). */
async function currentTree(
  workspace: string,
  deadline: number,
): Promise<{ ok: true; tree: string; head: string | null } | Refused> {
  const found = await repoFacts(workspace, deadline);
  if (!found.ok) return refuse("not_a_repository", found.notice.message);
  const tree = await writeTree(workspace, { facts: found.facts, deadline });
  if ("code" in tree) {
    return refuse(
      "no_before_snapshot",
      `the files as they are could not be read (${gitWhy(tree)}); nothing was changed`,
    );
  }
  if (tree.unreadable.length > 0) {
    return refuse(
      "unreadable_files",
      `the server cannot read ${tree.unreadable.length} file(s) (${
        tree.unreadable.slice(0, 5).join(", ")
      }); restoring could lose their content, so nothing was changed`,
    );
  }
  return { ok: true, tree: tree.tree, head: (await gitState(workspace)).gitHeadSha };
}

/** What the restore does, `before` (a tree, or the kept commit) → the target. */
async function planFrom(
  workspace: string,
  at: { from: string; commit: string; deadline: number },
): Promise<Awaited<ReturnType<typeof plan>> | Refused> {
  const diff = await runGit(
    workspace,
    ["diff-tree", "-r", "-z", "--raw", "--no-renames", "--relative", at.from, at.commit],
    { deadline: at.deadline },
  );
  if (diff.code !== 0) {
    return refuse(
      "no_before_snapshot",
      `the snapshots could not be compared (${gitWhy(diff)}); nothing was changed`,
    );
  }
  return await plan(workspace, parseRaw(diff.out).raw);
}

/** The answer's lists and counts. */
function outcomeOf(
  todo: Awaited<ReturnType<typeof plan>>,
  at: { commit: string; before: string | null; dryRun: boolean },
): RestoreOutcome {
  const rewritten = todo.write.filter((p) => todo.remove.includes(p)).length;
  return {
    restored: at.commit,
    before: at.before,
    dryRun: at.dryRun,
    written: listed(todo.write),
    deleted: listed(todo.remove.filter((p) => !todo.write.includes(p))),
    skipped: listed(todo.skipped),
    counts: {
      written: todo.write.length,
      deleted: todo.remove.length - rewritten,
      skipped: todo.skipped.length,
    },
  };
}

/**
 * Restores `commit` of run `runId` in `workspace` (see the module's doc). The refusals, the
 * current files' tree and the target's index are read at once; only then is `before` kept.
 */
export async function restoreSnapshot(
  workspace: string,
  at: { runId: string; commit: string; dryRun: boolean; budgetMs: number },
): Promise<Restored> {
  // a restore is asked for, not on the way of a step: it may take longer than a snapshot
  const deadline = Date.now() + Math.max(at.budgetMs, 60_000);
  const tmp = await mkdtemp(join(tmpdir(), "waymark-restore-"));
  try {
    const [refused, current, env] = await Promise.all([
      precheck(workspace, { ...at, deadline }),
      currentTree(workspace, deadline),
      at.dryRun ? null : targetIndex(workspace, { commit: at.commit, tmp, deadline }),
    ]);
    if (refused) return refused;
    if (!current.ok) return current;
    if (at.dryRun) {
      const todo = await planFrom(workspace, { from: current.tree, commit: at.commit, deadline });
      if ("ok" in todo) return todo;
      return { ok: true, value: outcomeOf(todo, { ...at, before: null }) };
    }
    const before = await commitTree(workspace, { ...current, runId: at.runId, deadline });
    if (typeof before !== "string") {
      return refuse(
        "no_before_snapshot",
        `the files as they are could not be kept first (${gitWhy(before)}); nothing was changed`,
      );
    }
    const [notKept, todo] = await Promise.all([
      keepRef(workspace, { sha: before, runId: at.runId, deadline }),
      planFrom(workspace, { from: before, commit: at.commit, deadline }),
    ]);
    if (notKept) {
      return refuse(
        "no_before_snapshot",
        `the files as they are could not be kept first (${gitWhy(notKept)}); nothing was changed`,
      );
    }
    if ("ok" in todo) return todo;
    for (const path of todo.remove) await rm(join(workspace, path), { force: true });
    await pruneEmpty(workspace, todo.remove);
    const failed = await writeFiles(workspace, { env, paths: todo.write, deadline });
    if (failed) {
      return refuse(
        "write_failed",
        `some files could not be written (${failed}); restore snapshot ${before} to undo what was changed`,
      );
    }
    return { ok: true, value: outcomeOf(todo, { ...at, before }) };
  } finally {
    await rm(tmp, { recursive: true, force: true }).catch(() => {});
  }
}
