/**
 * What changed between two snapshot commits, from `git diff-tree` (raw and numstat in one run,
 * the patch in another, cut to the byte budget), limited to the workspace folder.
 * @module
 */
import { Buffer } from "node:buffer";
import {
  type ChangedFile,
  diffMarker,
  SNAPSHOT_LIMITS,
  type SnapshotChanges,
} from "../../engine/model/snapshots.ts";
import { runGit } from "./git_process.ts";

/** One entry of `diff-tree --raw -z`: modes, status and path. */
export interface RawEntry {
  /** Mode before (`000000`: absent). */
  srcMode: string;
  /** Mode after (`000000`: absent). */
  dstMode: string;
  /** `A`, `M`, `D` or `T`. */
  status: string;
  /** Relative to the folder the diff was limited to. */
  path: string;
}

/** Parses `diff-tree -r -z --raw [--numstat]` output: raw entries, and numstat by path. */
export function parseRaw(out: string): { raw: RawEntry[]; numstat: Map<string, [number, number]> } {
  const parts = out.split("\0");
  const raw: RawEntry[] = [];
  const numstat = new Map<string, [number, number]>();
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.startsWith(":")) {
      const [srcMode, dstMode, , , status] = part.slice(1).split(" ");
      raw.push({ srcMode: srcMode!, dstMode: dstMode!, status: status!, path: parts[++i]! });
    } else if (part.includes("\t")) {
      const [added, removed, path] = part.split("\t");
      const n = (s: string | undefined) => (s === "-" || s === undefined ? 0 : Number(s));
      numstat.set(path!, [n(added), n(removed)]);
    }
  }
  return { raw, numstat };
}

const STATUS: Record<string, ChangedFile["status"]> = { A: "added", D: "deleted" };

/** Most bytes read of one diff run: the stats and the start of the patch. */
const DIFF_READ = 1024 * 1024;

/**
 * The raw and numstat records (NUL-separated) and the patch, from one `diff-tree` run: the
 * records end at the first empty record, the patch follows. When the records alone fill the
 * read, they are read again on their own.
 */
async function statsAndPatch(
  cwd: string,
  commits: { from: string; to: string },
  deadline: number,
): Promise<{ stats: string; patch: string; cut: boolean } | null> {
  const common = ["diff-tree", "-r", "--no-renames", "--relative", "--no-color", "-z"];
  const both = await runGit(
    cwd,
    [...common, "--raw", "--numstat", "-p", commits.from, commits.to],
    { deadline, maxOut: DIFF_READ },
  );
  if (both.code !== 0 && !both.cut) return null;
  const end = both.out.indexOf("\0\0");
  if (end >= 0) {
    return { stats: both.out.slice(0, end + 1), patch: both.out.slice(end + 2), cut: both.cut };
  }
  if (!both.cut) return { stats: both.out, patch: "", cut: false };
  const stats = await runGit(cwd, [...common, "--raw", "--numstat", commits.from, commits.to], {
    deadline,
  });
  return stats.code === 0 ? { stats: stats.out, patch: "", cut: true } : null;
}

/** The changes from `from` to `to` inside `cwd` (paths relative to it), or `null` past the deadline. */
export async function changesBetween(
  cwd: string,
  commits: { from: string; to: string },
  deadline: number,
): Promise<SnapshotChanges | null> {
  const parts = await statsAndPatch(cwd, commits, deadline);
  if (!parts) return null;
  const { raw, numstat } = parseRaw(parts.stats);
  const patch = { out: parts.patch, cut: parts.cut };
  const budget = SNAPSHOT_LIMITS.diffBytes;
  const changes: SnapshotChanges = {
    added: 0,
    modified: 0,
    deleted: 0,
    linesAdded: 0,
    linesRemoved: 0,
    files: [],
    diff: "",
    diffTruncated: false,
  };
  for (const entry of raw) {
    const status = STATUS[entry.status] ?? "modified";
    const [linesAdded, linesRemoved] = numstat.get(entry.path) ?? [0, 0];
    changes[status]++;
    changes.linesAdded += linesAdded;
    changes.linesRemoved += linesRemoved;
    if (changes.files.length < SNAPSHOT_LIMITS.files) {
      changes.files.push({ path: entry.path, status, linesAdded, linesRemoved });
    } else changes.diffTruncated = true;
  }
  const cut = patch.cut || Buffer.byteLength(patch.out) > budget;
  if (cut) {
    // a cut through a character leaves a replacement character: drop it
    const kept = Buffer.from(patch.out).subarray(0, budget).toString("utf8").replace(
      /\uFFFD+$/,
      "",
    );
    changes.diff = kept + diffMarker(Buffer.byteLength(kept));
    changes.diffTruncated = true;
  } else changes.diff = patch.out;
  return changes;
}
