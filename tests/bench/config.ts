/**
 * The bench's settings: full or quick mode, sample counts, the levels of prior advances.
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { ROOT } from "./session.ts";

/** The bench's scenarios, in the order a run takes them (`--only` picks some). */
export const SCENARIOS = [
  "cold",
  "long",
  "first",
  "list",
  "client",
  "viewer",
  "resume",
  "snapshots",
  "deepwork",
  "hosts",
  "model",
  "http",
] as const;

/** One scenario. */
export type Scenario = typeof SCENARIOS[number];

/** What a run does. */
export interface Config {
  /** The scenarios run (all unless `--only` names some). */
  only: ReadonlySet<Scenario>;
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
      only: { type: "string" },
    },
  });
  const only = values.only ? values.only.split(",").map((s) => s.trim()) : [...SCENARIOS];
  const unknown = only.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`--only: unknown ${unknown}; scenarios: ${SCENARIOS}`);
  const quick = values.quick === true;
  const samples = values.samples ? Number(values.samples) : quick ? 50 : 200;
  if (!Number.isInteger(samples) || samples < 2) throw new Error(`--samples must be ≥ 2`);
  const levels = quick ? [10, 1_000] : [10, 1_000, 10_000];
  const maxLevel = levels[levels.length - 1]!;
  return {
    config: {
      only: new Set(only as Scenario[]),
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
