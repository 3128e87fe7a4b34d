/**
 * `waymark hook session-start` as a host runs it: a new process, the hook's JSON on stdin, the
 * text on stdout. Two stores, seeded in-process through the engine: a small one (three open
 * runs in the workspace) and a large one (the same three, plus completed runs in the workspace
 * and runs in other folders), so the reads are seen not to grow with the store. Each is timed
 * from the source (`main.ts`) and from the single-file build (what `deno install` puts on
 * PATH), warm (after one unmeasured run), in rounds that take the subjects in turn beside the
 * floor: `waymark --version` of the same entry, a process that starts and parses its flags.
 *
 *   deno run -A tests/bench/hook_bench.ts [--quick] [--samples N] [--runs N]
 *
 * The target (150 ms warm, docs/hosts.md) is reported, never enforced.
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { openWaymark, type Waymark } from "../../mod.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { writeProjectWorkflow } from "../helpers/workflows.ts";
import { r3, type Stats, stats } from "./common.ts";
import { buildBundle } from "./cold_start.ts";
import { ROOT } from "./session.ts";

/** The target: the hook's p50, warm, from the single-file build. */
export const TARGET_HOOK_P50_MS = 150;

/** A store the hook reads. */
interface Seeded {
  home: string;
  runs: number;
}

/** What the hook bench measured: per entry, the floor and each store's hook, in ms. */
export interface HookBenchResult {
  /** Runs in each store. */
  stores: Record<string, number>;
  /** Wall time by entry (`source`, `bundle`), by subject (`floor`, `hook small`, `hook large`). */
  timings: Record<string, Record<string, Stats>>;
  /** The same runs' CPU time (user + system), where GNU time is there to tell it. */
  cpu: Record<string, Record<string, Stats>> | null;
  /** Whether the bundle's large-store p50 met the target. */
  met: boolean;
}

async function start(waymark: Waymark, workspace: string, goal: string) {
  const started = await startWorkflow(waymark.deps, { workflowId: "project.bench_hook", goal }, {
    workspace: { workspace, gitBranch: "main", gitHeadSha: null },
  });
  if (!started.ok) throw new Error(JSON.stringify(started.error));
  return started.value;
}

/** A home with three open runs in `workspace` and `extra` more runs: half complete there, half elsewhere. */
async function seed(dir: string, at: { workspace: string; extra: number }): Promise<Seeded> {
  const home = join(dir, `home-${at.extra}`);
  const waymark = await openWaymark({ home, workspace: at.workspace });
  try {
    for (let i = 0; i < at.extra; i++) {
      if (i % 2 === 0) {
        await start(waymark, join(dir, `elsewhere-${i % 50}`), `elsewhere ${i}`);
        continue;
      }
      const open = await start(waymark, at.workspace, `done ${i}`);
      const done = await continueWorkflow(waymark.deps, {
        stateToken: open.stateToken,
        ackToken: open.ackToken,
        output: { notesMarkdown: "done" },
      });
      if (!done.ok || !done.value.isComplete) throw new Error("seeding: a run did not complete");
    }
    for (const goal of ["first", "second", "third"]) await start(waymark, at.workspace, goal);
  } finally {
    await waymark.close();
  }
  return { home, runs: at.extra + 3 };
}

/** GNU time, which reports a child's CPU time (user + system); wall time alone where it is missing. */
const GNU_TIME = "/usr/bin/time";
const hasGnuTime = (() => {
  try {
    return Deno.statSync(GNU_TIME).isFile;
  } catch {
    return false;
  }
})();

/** One process run of `args`, stdin `input`: its wall and CPU time in ms (a failure throws). */
async function timedRun(
  entry: string,
  args: string[],
  at: { input: string; cpuFile: string },
): Promise<{ wall: number; cpu: number }> {
  const deno = [Deno.execPath(), "run", "-A", "--quiet", entry, ...args];
  const [command, ...rest] = hasGnuTime
    ? [GNU_TIME, "-f", "%U %S", "-o", at.cpuFile, ...deno]
    : deno;
  const t0 = performance.now();
  const child = new Deno.Command(command!, {
    args: rest,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(at.input));
  await writer.close();
  const out = await child.output();
  const wall = performance.now() - t0;
  const stderr = new TextDecoder().decode(out.stderr);
  if (!out.success || stderr !== "") throw new Error(`${args.join(" ")}: ${out.code} ${stderr}`);
  if (args[0] === "hook" && !new TextDecoder().decode(out.stdout).includes("3. run_")) {
    throw new Error("the hook did not list the three open runs");
  }
  const cpu = hasGnuTime
    ? (await Deno.readTextFile(at.cpuFile)).trim().split(/\s+/).reduce((a, b) => a + Number(b), 0) *
      1000
    : NaN;
  return { wall, cpu };
}

/** Seeds the stores, then times the floor and the hook on each, round by round. */
export async function hookBench(
  options: { samples: number; extra: number; log(line: string): void },
): Promise<HookBenchResult> {
  const dir = await Deno.makeTempDir({ prefix: "waymark-hook-bench-" });
  try {
    const workspace = join(dir, "workspace");
    await Deno.mkdir(join(workspace, ".git"), { recursive: true });
    await writeProjectWorkflow(workspace, { id: "project.bench_hook", steps: 1 });
    options.log(`seeding two stores (3 and ${options.extra + 3} runs)`);
    const small = await seed(dir, { workspace, extra: 0 });
    const large = await seed(dir, { workspace, extra: options.extra });
    const input = JSON.stringify({ cwd: workspace, source: "startup", session_id: "bench" });
    const entries = { source: join(ROOT, "main.ts"), bundle: await buildBundle(dir) };
    const subjects: Record<string, string[]> = {
      floor: ["--version"],
      "hook small": ["hook", "session-start", "--home", small.home],
      "hook large": ["hook", "session-start", "--home", large.home],
    };
    const at = { input, cpuFile: join(dir, "cpu.txt") };
    const samples: Record<string, Record<string, { wall: number; cpu: number }[]>> = {};
    for (const [entry, file] of Object.entries(entries)) {
      samples[entry] = {};
      for (const [name, args] of Object.entries(subjects)) {
        samples[entry][name] = [];
        await timedRun(file, args, at); // warm: Deno's caches, the file system's
      }
    }
    options.log(`${options.samples} rounds`);
    for (let round = 0; round < options.samples; round++) {
      for (const [entry, file] of Object.entries(entries)) {
        for (const [name, args] of Object.entries(subjects)) {
          samples[entry]![name]!.push(await timedRun(file, args, at));
        }
      }
    }
    const summary = (pick: "wall" | "cpu") =>
      Object.fromEntries(
        Object.entries(samples).map(([entry, bySubject]) => [
          entry,
          Object.fromEntries(
            Object.entries(bySubject).map(([n, s]) => [n, stats(s.map((x) => x[pick]))]),
          ),
        ]),
      );
    const timings = summary("wall");
    return {
      stores: { small: small.runs, large: large.runs },
      timings,
      cpu: hasGnuTime ? summary("cpu") : null,
      met: timings.bundle!["hook large"]!.p50 <= TARGET_HOOK_P50_MS,
    };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The result as lines: p50 and p99 per subject, and the hook's cost over the floor. */
export function hookReport(r: HookBenchResult): string {
  const lines = [
    `waymark hook session-start, warm (stores of ${r.stores.small} and ${r.stores.large} runs)`,
    "entry    subject      wall p50   wall p99   over floor   cpu p50   over floor",
  ];
  const cell = (x: number | undefined, width: number) =>
    String(x === undefined || Number.isNaN(x) ? "-" : r3(x)).padStart(width);
  for (const [entry, bySubject] of Object.entries(r.timings)) {
    const cpu = r.cpu?.[entry];
    for (const [name, s] of Object.entries(bySubject)) {
      const floor = name === "floor";
      const wallOver = floor ? undefined : s.p50 - bySubject.floor!.p50;
      const cpuOver = floor || !cpu ? undefined : cpu[name]!.p50 - cpu.floor!.p50;
      lines.push(
        `${entry.padEnd(8)} ${name.padEnd(11)} ${cell(s.p50, 9)} ${cell(s.p99, 10)} ${
          cell(wallOver, 12)
        } ${cell(cpu?.[name]?.p50, 9)} ${cell(cpuOver, 12)}`,
      );
    }
  }
  lines.push(
    `target: the bundle's hook on the large store p50 ≤ ${TARGET_HOOK_P50_MS} ms: ${
      r.met ? "met" : "NOT met"
    }`,
  );
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      quick: { type: "boolean", default: false },
      samples: { type: "string" },
      runs: { type: "string" },
    },
  });
  const samples = Number(values.samples ?? (values.quick ? 10 : 30));
  const extra = Number(values.runs ?? (values.quick ? 200 : 2_000));
  const result = await hookBench({
    samples,
    extra,
    log: (line) => console.error(`[hook bench] ${line}`),
  });
  console.log(hookReport(result));
}
