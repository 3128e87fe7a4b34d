/**
 * The bench's settings: full or quick mode, sample counts, the levels of prior advances.
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { ROOT } from "./session.ts";

/** What a run does. */
export interface Config {
  /** Full or quick. */
  mode: "full" | "quick";
  /** Rounds of interleaved cold starts. */
  coldStarts: number;
  /** Fresh sessions per first-call scenario. */
  firstCalls: number;
  /** Samples of start_workflow and of each level's operations. */
  samples: number;
  /** Unmeasured start_workflow calls first. */
  warmup: number;
  /** Advances, replays and rehydrates on a throwaway run before measuring. */
  longWarmup: number;
  /** Prior advances at which the long run is measured. */
  levels: number[];
  /** Steps of the generated workflow (more than the run ever takes). */
  longSteps: number;
  /** Whether the client advertises roots. */
  roots: boolean;
  /** Where the long session's server writes a V8 CPU profile (`--cpu-prof DIR`), if anywhere. */
  cpuProf?: string;
}

/** Reads the command line. */
export function config(
  argv: string[],
): { config: Config; keep: boolean; out: string; db: string | undefined } {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      "no-roots": { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      samples: { type: "string" },
      out: { type: "string" },
      "cpu-prof": { type: "string" },
      db: { type: "string" },
    },
  });
  const quick = values.quick === true;
  const samples = values.samples ? Number(values.samples) : quick ? 50 : 200;
  if (!Number.isInteger(samples) || samples < 2) throw new Error(`--samples must be ≥ 2`);
  const levels = quick ? [10, 1_000] : [10, 1_000, 10_000];
  const maxLevel = levels[levels.length - 1]!;
  return {
    config: {
      mode: quick ? "quick" : "full",
      coldStarts: quick ? 5 : 15,
      firstCalls: quick ? 3 : 9,
      samples,
      warmup: quick ? 10 : 20,
      longWarmup: quick ? 50 : 200,
      levels,
      longSteps: quick ? maxLevel + samples + 200 : Math.max(10_600, maxLevel + samples + 200),
      roots: values["no-roots"] !== true,
      cpuProf: values["cpu-prof"],
    },
    keep: values.keep === true,
    out: values.out ?? join(ROOT, "bench-results", "bench.json"),
    db: values.db,
  };
}
