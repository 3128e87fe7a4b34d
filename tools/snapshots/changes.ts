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

/** The changes from `from` to `to` inside `cwd` (paths relative to it), or `null` past the deadline. */
export async function changesBetween(
  cwd: string,
  commits: { from: string; to: string },
  deadline: number,
): Promise<SnapshotChanges | null> {
  const common = ["diff-tree", "-r", "--no-renames", "--relative", "--no-color"];
  const budget = SNAPSHOT_LIMITS.diffBytes;
  const [stats, patch] = await Promise.all([
    runGit(cwd, [...common, "-z", "--raw", "--numstat", commits.from, commits.to], { deadline }),
    runGit(cwd, [...common, "-p", commits.from, commits.to], { deadline, maxOut: budget + 1 }),
  ]);
  if (stats.code !== 0 || (patch.code !== 0 && !patch.cut)) return null;
  const { raw, numstat } = parseRaw(stats.out);
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
