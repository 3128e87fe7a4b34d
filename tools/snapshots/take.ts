/**
 * Taking a snapshot: the user's index is copied into a temporary folder (so git reuses its
 * stat cache and hashes only changed files), `git add -A` runs against that copy
 * (`GIT_INDEX_FILE`), the tree is written and committed with fixed dates (the same files give
 * the same commit, so two servers cannot collide) and kept under `refs/waymark/<run>/<commit>`.
 * The user's HEAD, branch, index, stash and files are never written.
 * @module
 */
import { copyFile, lstat, mkdtemp, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type {
  SnapshotNotice,
  SnapshotParent,
  SnapshotTaken,
  WorkspaceSnapshot,
} from "../../engine/model/snapshots.ts";
import { changesBetween } from "./changes.ts";
import { type GitRun, gitWhy, runGit } from "./git_process.ts";

/** Where a workspace's repository is, asked once per workspace. */
export interface RepoFacts {
  /** The work tree's top folder. */
  top: string;
  /** This work tree's git folder (where its `index` and `HEAD` are). */
  gitDir: string;
}

/** Identity and fixed dates of snapshot commits: the same tree and parent give the same commit. */
const COMMIT_ENV = {
  GIT_AUTHOR_NAME: "waymark",
  GIT_AUTHOR_EMAIL: "waymark@localhost",
  GIT_COMMITTER_NAME: "waymark",
  GIT_COMMITTER_EMAIL: "waymark@localhost",
  GIT_AUTHOR_DATE: "@0 +0000",
  GIT_COMMITTER_DATE: "@0 +0000",
} as const;

/** The ref namespace of one run's snapshots. */
export function runRefs(runId: string): string {
  return `refs/waymark/${runId}/`;
}

/** Whether `folder` or a parent has a `.git`: a few `lstat`s, no process (outside git, cheap). */
async function insideGit(folder: string): Promise<boolean> {
  let dir = folder;
  for (;;) {
    if (await lstat(join(dir, ".git")).then(() => true, () => false)) return true;
    const parent = dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}

type Facts = { ok: true; facts: RepoFacts } | { ok: false; notice: SnapshotNotice };

/** Facts found, by workspace: one `rev-parse` per workspace and process, not per snapshot. */
const FOUND = new Map<string, RepoFacts>();

/** The repository facts of a workspace, or the notice why there are none. */
export async function repoFacts(workspace: string, deadline: number): Promise<Facts> {
  const known = FOUND.get(workspace);
  if (known) return { ok: true, facts: known };
  const found = await findFacts(workspace, deadline);
  if (found.ok) {
    if (FOUND.size >= 64) FOUND.clear();
    FOUND.set(workspace, found.facts);
  }
  return found;
}

async function findFacts(workspace: string, deadline: number): Promise<Facts> {
  if (!await insideGit(workspace)) {
    return notice("SNAPSHOT_NOT_A_REPOSITORY", `${workspace} is not in a git repository`);
  }
  const run = await runGit(workspace, ["rev-parse", "--show-toplevel", "--absolute-git-dir"], {
    deadline,
  });
  if (run.missing) return notice("SNAPSHOT_NO_GIT", "git is not on PATH");
  if (run.timedOut) return notice("SNAPSHOT_OVER_BUDGET", "no snapshot: over the time budget");
  if (run.code !== 0) return notice("SNAPSHOT_NOT_A_REPOSITORY", gitWhy(run));
  const [top, gitDir] = run.out.trim().split("\n");
  return { ok: true, facts: { top: top!, gitDir: gitDir! } };
}

function notice(code: SnapshotNotice["code"], message: string): Facts {
  return { ok: false, notice: { code, message } };
}

/** Paths `git add --ignore-errors` could not read. */
function unreadable(add: GitRun): string[] {
  return [
    ...add.err.matchAll(
      /^error: (?:open|read|unable to index file)\W+([^'"\n]+?)['"]?(?:\)|:|$)/gm,
    ),
  ]
    .map((m) => m[1]!);
}

/**
 * Copies the user's index with its modification time: git trusts an entry's stat data only for
 * files older than the index file, so a copy dated now would hide a same-size edit made in the
 * second the index was written ("racy git"). Dated as the original (read before the copy, so
 * a rewrite meanwhile only makes more entries checked by content), it checks what git checks.
 */
async function copyIndex(from: string, to: string): Promise<void> {
  const info = await stat(from).catch(() => null);
  if (!info) return; // no index yet: an empty one
  await copyFile(from, to);
  await utimes(to, info.atime, info.mtime);
}

/** The tree of the workspace's files now, written from a copy of the user's index. */
export async function writeTree(
  workspace: string,
  at: { facts: RepoFacts; deadline: number },
): Promise<{ tree: string; unreadable: string[] } | GitRun> {
  const tmp = await mkdtemp(join(tmpdir(), "waymark-snap-"));
  try {
    const env = { GIT_INDEX_FILE: join(tmp, "index") };
    await copyIndex(join(at.facts.gitDir, "index"), env.GIT_INDEX_FILE);
    const add = await runGit(workspace, ["add", "-A", "--ignore-errors", "--", "."], {
      deadline: at.deadline,
      env,
    });
    const skipped = add.code === 0 ? [] : unreadable(add);
    if (add.code !== 0 && (skipped.length === 0 || add.timedOut)) return add;
    const tree = await runGit(workspace, ["write-tree"], { deadline: at.deadline, env });
    if (tree.code !== 0) return tree;
    return { tree: tree.out.trim(), unreadable: skipped };
  } finally {
    await rm(tmp, { recursive: true, force: true }).catch(() => {});
  }
}

/** HEAD commits' trees, asked once per commit (HEAD moves seldom; a snapshot is taken often). */
const TREES = new Map<string, string>();

/** The tree of commit `head`, or `null`. */
async function treeOf(
  workspace: string,
  at: { head: string | null; deadline: number },
): Promise<string | null> {
  if (at.head === null) return null;
  const known = TREES.get(at.head);
  if (known) return known;
  const run = await runGit(workspace, ["rev-parse", `${at.head}^{tree}`], at);
  if (run.code !== 0) return null;
  if (TREES.size >= 256) TREES.clear();
  TREES.set(at.head, run.out.trim());
  return run.out.trim();
}

/** Commits `tree` with HEAD as its parent; the commit, or the failure. */
export async function commitTree(
  workspace: string,
  at: { tree: string; head: string | null; runId: string; deadline: number },
): Promise<string | GitRun> {
  const parent = at.head ? ["-p", at.head] : [];
  const message = `waymark snapshot of run ${at.runId}`;
  const commit = await runGit(
    workspace,
    ["commit-tree", "--no-gpg-sign", at.tree, ...parent, "-m", message],
    { deadline: at.deadline, env: COMMIT_ENV },
  );
  return commit.code === 0 ? commit.out.trim() : commit;
}

/** How long past the budget the ref's check may take: one `git rev-parse`. */
const REF_CHECK_GRACE_MS = 1000;

/** Keeps `sha` under the run's refs; `null` when kept, else the failure. */
export async function keepRef(
  workspace: string,
  at: { sha: string; runId: string; deadline: number },
): Promise<GitRun | null> {
  const ref = `${runRefs(at.runId)}${at.sha}`;
  const kept = await runGit(workspace, ["update-ref", ref, at.sha], { deadline: at.deadline });
  if (kept.code === 0) return null;
  // another server kept the same snapshot at the same moment, or the budget killed git after it
  // wrote the ref: the ref holds it either way (asked past the budget too, so that a snapshot
  // answered as not taken never leaves a ref behind)
  const there = await runGit(workspace, ["rev-parse", "-q", "--verify", ref], {
    deadline: Math.max(at.deadline, Date.now() + REF_CHECK_GRACE_MS),
  });
  return there.code === 0 && there.out.trim() === at.sha ? null : kept;
}

/** Takes one snapshot (see the module's doc); never throws. */
export async function takeSnapshot(
  workspace: string,
  at: {
    runId: string;
    parent: SnapshotParent;
    budgetMs: number;
    branch: string | null;
    head: string | null;
  },
): Promise<SnapshotTaken> {
  const deadline = Date.now() + at.budgetMs;
  const none = (n: SnapshotNotice): SnapshotTaken => ({
    snapshot: { commit: null, head: null, branch: at.branch, dirty: false, workspace },
    changes: null,
    notice: n,
  });
  const found = await repoFacts(workspace, deadline);
  if (!found.ok) return none(found.notice);
  const failed = (run: GitRun) =>
    none({
      code: run.timedOut
        ? "SNAPSHOT_OVER_BUDGET"
        : run.missing
        ? "SNAPSHOT_NO_GIT"
        : "SNAPSHOT_FAILED",
      message: run.timedOut
        ? `no snapshot: it took longer than ${at.budgetMs} ms; the step went on without one`
        : `no snapshot: ${gitWhy(run)}`,
    });
  // the parent is looked up (in the store) while git works
  const parent = typeof at.parent === "function" ? at.parent().catch(() => null) : at.parent;
  const written = await writeTree(workspace, { facts: found.facts, deadline });
  if ("code" in written) return failed(written);
  const commit = await commitTree(workspace, {
    tree: written.tree,
    head: at.head,
    runId: at.runId,
    deadline,
  });
  if (typeof commit !== "string") return failed(commit);
  // the ref and the diff at once: each is a process of its own
  const [kept, headsTree, changes] = await Promise.all([
    keepRef(workspace, { sha: commit, runId: at.runId, deadline }),
    treeOf(workspace, { head: at.head, deadline }),
    (async () => {
      const from = await parent;
      return from === null ? null : await changesBetween(workspace, { from, to: commit }, deadline);
    })(),
  ]);
  if (kept) return failed(kept);
  const snapshot: WorkspaceSnapshot = {
    commit,
    head: at.head,
    branch: at.branch,
    dirty: written.tree !== headsTree,
    workspace,
  };
  const taken: SnapshotTaken = { snapshot, changes };
  if (written.unreadable.length > 0) {
    taken.notice = {
      code: "SNAPSHOT_PARTIAL",
      message:
        `the snapshot keeps the last staged version (or none) of ${written.unreadable.length} file(s) the server cannot read: ${
          written.unreadable.slice(0, 5).join(", ")
        }`,
    };
  }
  return taken;
}
