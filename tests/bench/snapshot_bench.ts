/**
 * Snapshots' cost (issue 36), in process on a real libSQL file: in a git repository of 10,000
 * files, an advance with a few files changed since the last (its snapshot and diff included),
 * beside `git status --porcelain` on the same tree and an advance in a folder outside git,
 * taken in turns so each ratio is of one machine state; and a restore of 100 changed files.
 *
 *   deno run -A tests/bench/snapshot_bench.ts [--files 10000] [--samples 30] [--out FILE]
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { openWaymark } from "../../mod.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { restoreWorkspace } from "../../engine/use_cases/restore_workspace.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { WorkspaceObservation } from "../../engine/model/workspace.ts";
import { observeWorkspace } from "../../tools/context/workspace.ts";
import { gitSnapshots } from "../../tools/snapshots/mod.ts";
import { git } from "../helpers/git_repo.ts";
import { LONG_ID, longWorkflow, r3, stats } from "./common.ts";

/** What the scenario measured (ms samples). */
export interface SnapshotResult {
  /** Files in the repository. */
  files: number;
  /** `git status --porcelain` on the tree. */
  status: number[];
  /** An advance in the repository, a few files changed. */
  advanceGit: number[];
  /** An advance outside git. */
  advanceNoGit: number[];
  /** The same with snapshots off: what an advance cost before them. */
  advanceOff: number[];
  /** A restore of 100 changed files. */
  restore100: number[];
}

async function makeRepo(dir: string, files: number): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await git(dir, "init", "-q", "-b", "main");
  for (let d = 0; d < files / 100; d++) {
    await Deno.mkdir(join(dir, `d${d}`));
    await Promise.all(
      Array.from(
        { length: 100 },
        (_, i) =>
          Deno.writeTextFile(join(dir, `d${d}`, `f${i}.txt`), `file ${d}/${i}\n`.repeat(20)),
      ),
    );
  }
  // files older than the index, as in a working repository: none is "racily clean", which
  // would make git hash every file again until the index is rewritten
  await new Promise((r) => setTimeout(r, 1100));
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "base");
  await git(dir, "status", "--porcelain"); // the index's stat cache, as a user's would be
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

type Walk = { deps: EngineDeps; at: StepResponse; ws: WorkspaceObservation };

async function walker(deps: EngineDeps, folder: string): Promise<Walk> {
  const ws = await observeWorkspace(folder);
  const started = await startWorkflow(deps, { workflowId: LONG_ID }, { workspace: ws });
  if (!started.ok) throw new Error(started.error.message);
  return { deps, at: started.value, ws };
}

async function advance(w: Walk): Promise<number> {
  const [ms, next] = await timed(() =>
    continueWorkflow(w.deps, {
      stateToken: w.at.stateToken,
      ackToken: w.at.ackToken!,
      output: { notesMarkdown: "done" },
    }, { workspace: w.ws })
  );
  if (!next.ok) throw new Error(next.error.message);
  w.at = next.value;
  return ms;
}

/** Runs the scenario. */
export async function snapshotBench(
  o: { files: number; samples: number },
): Promise<SnapshotResult> {
  const tmp = await Deno.makeTempDir({ prefix: "waymark-snapbench-" });
  try {
    const repo = join(tmp, "repo");
    const plain = join(tmp, "plain");
    await makeRepo(repo, o.files);
    const home = join(tmp, "home");
    await Deno.mkdir(join(plain, ".waymark", "workflows"), { recursive: true });
    await Deno.writeTextFile(
      join(plain, ".waymark", "workflows", "bench_long.json"),
      longWorkflow(o.samples * 4 + 20),
    );
    const waymark = await openWaymark({ home, workspace: plain });
    const result: SnapshotResult = {
      files: o.files,
      status: [],
      advanceGit: [],
      advanceNoGit: [],
      advanceOff: [],
      restore100: [],
    };
    try {
      // on whatever the environment says (the test helpers turn them off for the checkout)
      const deps = { ...waymark.deps, snapshots: gitSnapshots() };
      const inGit = await walker(deps, repo);
      const outside = await walker(deps, plain);
      const off = await walker({ ...waymark.deps, snapshots: undefined }, plain);
      for (let i = 0; i < o.samples + 3; i++) {
        for (let k = 0; k < 3; k++) {
          await Deno.writeTextFile(join(repo, `d${k}`, "f0.txt"), `changed ${i}\n`);
        }
        const [s] = await timed(() => git(repo, "status", "--porcelain"));
        const g = await advance(inGit);
        const n = await advance(outside);
        const f = await advance(off);
        if (i < 3) continue; // warm-up
        result.status.push(s);
        result.advanceGit.push(g);
        result.advanceNoGit.push(n);
        result.advanceOff.push(f);
      }
      const target = inGit.at.stateToken;
      for (let i = 0; i < Math.min(o.samples, 10); i++) {
        for (let k = 0; k < 100; k++) {
          const dirs = o.files / 100;
          const file = join(repo, `d${k % dirs}`, `f${1 + Math.floor(k / dirs)}.txt`);
          await Deno.writeTextFile(file, `r ${i} ${k}\n`);
        }
        const [ms, done] = await timed(() =>
          restoreWorkspace(deps, { stateToken: target }, { workspace: inGit.ws })
        );
        if (!done.ok) throw new Error(done.error.message);
        if (done.value.counts.written !== 100) {
          throw new Error(`restored ${done.value.counts.written}`);
        }
        result.restore100.push(ms);
      }
    } finally {
      await waymark.close();
    }
    return result;
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** The report's lines: medians, and the advance over `git status` of the same run. */
export function snapshotReport(r: SnapshotResult): string {
  const p = (xs: number[]) => r3(stats(xs).p50);
  const ratio = r3(stats(r.advanceGit).p50 / stats(r.status).p50);
  return [
    `snapshots (${r.files} files, medians): git status --porcelain ${p(r.status)} ms; ` +
    `advance in git ${p(r.advanceGit)} ms (${ratio}× git status, target ≤ 3×); ` +
    `advance outside git ${p(r.advanceNoGit)} ms (snapshots off ${
      p(r.advanceOff)
    } ms); restore of 100 files ${p(r.restore100)} ms (target < 1000)`,
  ].join("\n");
}

/** The scenario's JSON: medians, the ratio to `git status`, and the targets' verdicts. */
export function snapshotJson(r: SnapshotResult): Record<string, unknown> {
  const p = (xs: number[]) => r3(stats(xs).p50);
  const ratio = r3(stats(r.advanceGit).p50 / stats(r.status).p50);
  return {
    files: r.files,
    medians: {
      gitStatus: p(r.status),
      advanceGit: p(r.advanceGit),
      advanceNoGit: p(r.advanceNoGit),
      advanceSnapshotsOff: p(r.advanceOff),
      restore100: p(r.restore100),
    },
    ratioAdvanceOverStatus: ratio,
    targets: { advanceUnder3xStatus: ratio <= 3, restoreUnder1s: p(r.restore100) < 1000 },
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      files: { type: "string", default: "10000" },
      samples: { type: "string", default: "30" },
      out: { type: "string" },
    },
  });
  const result = await snapshotBench({
    files: Number(values.files),
    samples: Number(values.samples),
  });
  console.log(snapshotReport(result));
  const json = snapshotJson(result);
  console.log(JSON.stringify(json));
  if (values.out) await Deno.writeTextFile(values.out, JSON.stringify(json, null, 2));
}
