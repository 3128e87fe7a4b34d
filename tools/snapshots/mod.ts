/**
 * The git adapter of the snapshot port (`engine/snapshots.ts`): take, compare, restore and
 * forget a run's snapshots, with `git` run as a process, never through a shell.
 * @module
 */
import {
  SNAPSHOT_LIMITS,
  type SnapshotNotice,
  type WorkspaceComparison,
  type WorkspaceSnapshots,
} from "../../engine/model/snapshots.ts";
import { parseRaw } from "./changes.ts";
import { runGit } from "./git_process.ts";
import { restoreSnapshot } from "./restore.ts";
import { repoFacts, runRefs, takeSnapshot, writeTree } from "./take.ts";
import { gitState, inGitRepository } from "../context/workspace.ts";

/** Options of {@linkcode gitSnapshots}. */
export interface GitSnapshotsOptions {
  /** How long one snapshot may take (ms); past it the step goes on without one. */
  budgetMs?: number;
  /** Whether steps take snapshots (default on); restores work either way. */
  taking?: boolean;
}

/** How the files now differ from `commit`, within `budgetMs`; `null` when it cannot be told. */
async function compare(
  workspace: string,
  at: { commit: string; budgetMs: number },
): Promise<WorkspaceComparison | null> {
  const deadline = Date.now() + at.budgetMs;
  const found = await repoFacts(workspace, deadline);
  if (!found.ok) return null;
  const tree = await writeTree(workspace, { facts: found.facts, deadline });
  if ("code" in tree) return null;
  const diff = await runGit(
    workspace,
    [
      "diff-tree",
      "-r",
      "-z",
      "--raw",
      "--numstat",
      "--no-renames",
      "--relative",
      at.commit,
      tree.tree,
    ],
    { deadline },
  );
  if (diff.code !== 0) return null;
  const { raw, numstat } = parseRaw(diff.out);
  let linesAdded = 0;
  let linesRemoved = 0;
  for (const [a, r] of numstat.values()) {
    linesAdded += a;
    linesRemoved += r;
  }
  return { files: raw.length, linesAdded, linesRemoved };
}

/** Removes every ref of `runIds` under `refs/waymark/` in `workspace`'s repository. */
async function forget(workspace: string, runIds: readonly string[]): Promise<number> {
  const deadline = Date.now() + 60_000;
  const found = await repoFacts(workspace, deadline);
  if (!found.ok || runIds.length === 0) return 0;
  const refs = await runGit(
    workspace,
    ["for-each-ref", "--format=%(refname)", ...runIds.map((r) => runRefs(r))],
    { deadline },
  );
  const names = refs.out.split("\n").filter((n) => n !== "");
  if (refs.code !== 0 || names.length === 0) return 0;
  const input = names.map((n) => `delete ${n}\n`).join("");
  const gone = await runGit(workspace, ["update-ref", "--stdin"], { deadline, input });
  return gone.code === 0 ? names.length : 0;
}

/** The snapshot port over the `git` on PATH. */
export function gitSnapshots(options: GitSnapshotsOptions = {}): WorkspaceSnapshots {
  const budgetMs = options.budgetMs ?? SNAPSHOT_LIMITS.budgetMs;
  return {
    taking: options.taking ?? true,
    async take(workspace, at) {
      const none = (code: SnapshotNotice["code"], message: string) => ({
        snapshot: { commit: null, head: null, branch: null, dirty: false, workspace },
        changes: null,
        notice: { code, message },
      });
      // outside git an advance costs what it cost before snapshots: no file read, no process
      if (!inGitRepository(workspace)) {
        return none(
          "SNAPSHOT_NOT_A_REPOSITORY",
          `no snapshot: ${workspace} is not in a git repository`,
        );
      }
      try {
        const { gitBranch, gitHeadSha } = await gitState(workspace);
        return await takeSnapshot(workspace, {
          ...at,
          budgetMs: at.budgetMs ?? budgetMs,
          branch: gitBranch,
          head: gitHeadSha,
        });
      } catch (error) {
        // a full temporary folder, a vanished index: the step goes on without a snapshot
        return none("SNAPSHOT_FAILED", `no snapshot: ${(error as Error).message}`);
      }
    },
    compare: (workspace, commit) => compare(workspace, { commit, budgetMs }).catch(() => null),
    restore: (workspace, at) =>
      restoreSnapshot(workspace, { ...at, budgetMs }).catch((error) => ({
        ok: false as const,
        refusal: {
          reason: "write_failed" as const,
          message: `the restore stopped: ${
            (error as Error).message
          }; a restore's before snapshot, when its answer gave one, undoes what was done`,
        },
      })),
    forget,
  };
}
