/**
 * Workspace snapshots: at a run's start and at every acknowledgement and checkpoint, an adapter
 * records the workspace's files as a git commit of its own (never touching the user's HEAD,
 * branch, index, stash or work tree) and what changed since the parent node's snapshot. The
 * engine records that as a `snapshot_recorded` event on the node the call created, says in the
 * answer when no snapshot was taken, and restores a node's snapshot through the same port.
 * @module
 */
import { z } from "npm:zod@4.6.7";

/** Caps of what one snapshot event carries (documented in docs/snapshots.md). */
export const SNAPSHOT_LIMITS = {
  /** Bytes of unified diff kept per node; the rest is cut with a marker. */
  diffBytes: 32 * 1024,
  /** Changed files listed per node; the counts still cover all of them. */
  files: 500,
  /** How long a snapshot may take by default before the step goes on without one. */
  budgetMs: 3000,
  /** Paths listed in a restore's answer per list; the counts cover all of them. */
  restoreListed: 200,
} as const;

/** Why a node has no snapshot, or an incomplete one (`notice.code`). */
export const SNAPSHOT_NOTICES = [
  "SNAPSHOT_NO_GIT",
  "SNAPSHOT_NOT_A_REPOSITORY",
  "SNAPSHOT_OVER_BUDGET",
  "SNAPSHOT_PARTIAL",
  "SNAPSHOT_FAILED",
] as const;

/** The workspace as one snapshot recorded it. */
export const workspaceSnapshotSchema = z.object({
  commit: z.string().nullable().describe("The snapshot commit (40 hex), or null when none."),
  head: z.string().nullable().describe("The user's HEAD then."),
  branch: z.string().nullable().describe("The user's branch then (null: detached or unknown)."),
  dirty: z.boolean().describe("Whether the files differed from HEAD."),
  workspace: z.string().describe("The workspace folder (absolute)."),
});
/** The workspace as one snapshot recorded it. */
export type WorkspaceSnapshot = z.infer<typeof workspaceSnapshotSchema>;

/** A file changed between two snapshots. */
export interface ChangedFile {
  /** Its path, relative to the workspace folder. */
  path: string;
  /** What happened to it. */
  status: "added" | "modified" | "deleted";
  /** Lines added (0 for a binary file). */
  linesAdded: number;
  /** Lines removed (0 for a binary file). */
  linesRemoved: number;
}

/** What changed between the parent node's snapshot and this one. */
export interface SnapshotChanges {
  /** Files added, modified and deleted (all of them, also past the listed ones). */
  added: number;
  /** See `added`. */
  modified: number;
  /** See `added`. */
  deleted: number;
  /** Lines added and removed over every text file. */
  linesAdded: number;
  /** See `linesAdded`. */
  linesRemoved: number;
  /** The changed files, at most {@linkcode SNAPSHOT_LIMITS}`.files`. */
  files: ChangedFile[];
  /** The unified diff, cut to {@linkcode SNAPSHOT_LIMITS}`.diffBytes` with a marker. */
  diff: string;
  /** Whether the diff (or the file list) was cut. */
  diffTruncated: boolean;
}

/** Why there is no snapshot, or what it left out. */
export interface SnapshotNotice {
  /** One of {@linkcode SNAPSHOT_NOTICES}. */
  code: typeof SNAPSHOT_NOTICES[number];
  /** What it means, in words. */
  message: string;
}

/** What one snapshot took: the `snapshot_recorded` event's body. */
export interface SnapshotTaken {
  /** The snapshot. */
  snapshot: WorkspaceSnapshot;
  /** Changes since the parent's snapshot; `null` at a root or when the parent has none. */
  changes: SnapshotChanges | null;
  /** Present when no snapshot was taken or it is incomplete. */
  notice?: SnapshotNotice;
}

/** One change a restore makes (or would make). */
export interface RestoreChange {
  /** Relative to the workspace folder. */
  path: string;
  /** `write`: set to the snapshot's content; `delete`: created since, removed. */
  action: "write" | "delete";
}

/** What a restore did (or, dry, would do). */
export interface RestoreOutcome {
  /** The snapshot restored. */
  restored: string;
  /** The snapshot of the files as they were just before (restore it to undo); dry: `null`. */
  before: string | null;
  /** Whether nothing was changed. */
  dryRun: boolean;
  /** Files written (at most {@linkcode SNAPSHOT_LIMITS}`.restoreListed`). */
  written: string[];
  /** Files removed (created since the snapshot). */
  deleted: string[];
  /** Files left alone, with why (an ignored file in the way, a submodule). */
  skipped: { path: string; reason: string }[];
  /** Counts over every file, listed or not. */
  counts: { written: number; deleted: number; skipped: number };
}

/** Why a restore refused (`details.reason` of its `RESTORE_REFUSED` error). */
export const RESTORE_REFUSALS = [
  "no_snapshot",
  "not_a_repository",
  "workspace_mismatch",
  "git_operation_in_progress",
  "snapshot_not_in_repository",
  "snapshot_not_in_run",
  "sparse_checkout",
  "unreadable_files",
  "no_before_snapshot",
  "write_failed",
] as const;

/** A refusal of the adapter's, before anything changed. */
export interface RestoreRefusal {
  /** Which one. */
  reason: typeof RESTORE_REFUSALS[number];
  /** What is wrong and how to recover. */
  message: string;
}

/** How the current files differ from a node's snapshot (a comparison; nothing is recorded). */
export interface WorkspaceComparison {
  /** Files that differ. */
  files: number;
  /** Lines added and removed to get from the snapshot to the files now. */
  linesAdded: number;
  /** See `linesAdded`. */
  linesRemoved: number;
}

/** The commit changes are counted from, or how to find it. */
export type SnapshotParent = string | null | (() => Promise<string | null>);

/**
 * The snapshot port: git behind it, run as a process without a shell. Never throws; every
 * failure is a notice (taking) or a refusal (restoring).
 */
export interface WorkspaceSnapshots {
  /** Whether steps take snapshots (off by the user's choice: restores still work). */
  readonly taking: boolean;
  /**
   * Takes a snapshot of `workspace` for a run, with the changes since `parent` (a commit, asked
   * for only inside a repository, so a call outside git reads nothing more).
   */
  take(
    workspace: string,
    at: { runId: string; parent: SnapshotParent; budgetMs?: number },
  ): Promise<SnapshotTaken>;
  /** How the files now differ from a snapshot; `null` when that cannot be told in time. */
  compare(workspace: string, commit: string): Promise<WorkspaceComparison | null>;
  /** Restores `commit` (a snapshot of run `runId`) in `workspace`, or says why not. */
  restore(
    workspace: string,
    at: { runId: string; commit: string; dryRun: boolean },
  ): Promise<{ ok: true; value: RestoreOutcome } | { ok: false; refusal: RestoreRefusal }>;
  /** Removes every snapshot ref of the given runs in `workspace`'s repository. */
  forget(workspace: string, runIds: readonly string[]): Promise<number>;
}

/** The marker a cut diff ends with. */
export function diffMarker(keptBytes: number): string {
  return `\n[diff truncated: the first ${keptBytes} bytes kept; see the file list for every change]\n`;
}

/** The call that restores a snapshot (the undo of a restore, or the rewind of a fork). */
const restoreCallSchema = z.object({
  name: z.literal("restore_workspace"),
  arguments: z.object({ stateToken: z.string(), snapshot: z.string().optional() }),
});

/** The answer of `restore_workspace` (and `waymark restore --json`). */
export const restoreResponseSchema = z.object({
  restored: z.string().describe("The snapshot the files now match."),
  nodeId: z.string(),
  dryRun: z.boolean(),
  before: z.string().nullable().describe("The files as they were; `undo` restores it."),
  written: z.array(z.string()),
  deleted: z.array(z.string()).describe("Created since the snapshot, removed."),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  counts: z.object({ written: z.number(), deleted: z.number(), skipped: z.number() }),
  undo: restoreCallSchema.optional(),
});
/** The answer of `restore_workspace`. */
export type RestoreResponse = z.infer<typeof restoreResponseSchema>;

/** How the files on disk differ from the node an answer stands at, when they do. */
export const workspaceDiffersSchema = z.object({
  files: z.number().int(),
  lines: z.number().int(),
  call: restoreCallSchema,
}).describe("The files differ from this node's snapshot; make `call` to rewind them too.");

/** A restore's answer as text: what changed (or would), and the undo. */
export function renderRestore(r: RestoreResponse): string {
  const verb = r.dryRun ? "Would write" : "Wrote";
  const lines = [
    `${verb} ${r.counts.written} file(s), ${
      r.dryRun ? "would remove" : "removed"
    } ${r.counts.deleted}, skipped ${r.counts.skipped}; snapshot ${r.restored}.`,
    ...r.written.map((p) => `  write  ${p}`),
    ...r.deleted.map((p) => `  remove ${p}`),
    ...r.skipped.map((s) => `  skip   ${s.path}: ${s.reason}`),
  ];
  if (r.undo) lines.push(`Undo: restore_workspace ${JSON.stringify(r.undo.arguments)}`);
  return lines.join("\n");
}
