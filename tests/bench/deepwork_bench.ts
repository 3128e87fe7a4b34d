/**
 * DeepWork's `finished_step` over stdio next to `continue_workflow` on the same job: a
 * generated step-list job (one file output per step) is driven in the deepwork profile with
 * `finished_step` and, on a second server over the same store, as the ordinary workflow
 * `bench.long` with `continue_workflow`, both timed after 10 and after many prior steps (the
 * cost must not grow with the run's depth).
 *
 *   deno run -A tests/bench/deepwork_bench.ts [--quick]
 *
 * `mcp_bench.ts` calls {@linkcode deepworkBench} after its own phases. Reported, not enforced.
 * @module
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { StdioRpc } from "./stdio_rpc.ts";
import { r3, type Stats, stats } from "./common.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
/** Calls made on a first, abandoned run before measuring. */
const WARMUP = 40;

/** One measured row. */
export interface DeepworkRow {
  /** `finished_step` or `continue_workflow`. */
  operation: string;
  /** Steps finished before the samples. */
  prior: number;
  /** Latency. */
  stats: Stats;
}

/** What the DeepWork benchmark measured. */
export interface DeepworkBenchResult {
  /** Rows, by operation then depth. */
  rows: DeepworkRow[];
}

function jobYaml(steps: number): string {
  const lines = ["name: bench", "summary: A long job for the benchmark", "steps:"];
  for (let i = 1; i <= steps; i++) {
    lines.push(
      `  - id: s${i}`,
      `    name: Step ${i}`,
      `    instructions: Do step ${i}.`,
      "    outputs:",
      "      out: {type: file, description: The step's file, required: true}",
    );
  }
  lines.push("workflows:", "  - name: long", "    summary: Every step", "    steps:");
  for (let i = 1; i <= steps; i++) lines.push(`      - s${i}`);
  return `${lines.join("\n")}\n`;
}

async function server(home: string, workspace: string, profile: string): Promise<StdioRpc> {
  const rpc = StdioRpc.spawn({
    command: Deno.execPath(),
    args: [
      "run",
      "-A",
      "--quiet",
      MAIN,
      "serve",
      "--home",
      home,
      "--profile",
      profile,
      "--no-quality-gate",
    ],
    cwd: workspace,
    env: { NO_COLOR: "1" },
    roots: null,
  });
  await rpc.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "waymark-bench", version: "1.0.0" },
  });
  await rpc.notify("notifications/initialized");
  return rpc;
}

type Result = {
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  content?: { text: string }[];
};

async function call(
  rpc: StdioRpc,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const result = await rpc.request("tools/call", { name, arguments: args }) as Result;
  if (result.isError || !result.structuredContent) {
    throw new Error(`${name} failed: ${result.content?.[0]?.text?.slice(0, 300)}`);
  }
  return result.structuredContent;
}

/** Drives `next` to each level and times `samples` calls there. */
async function levels(
  next: () => Promise<void>,
  at: { levels: number[]; samples: number },
): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  let done = 0;
  for (const level of at.levels) {
    while (done < level) {
      await next();
      done++;
    }
    const times: number[] = [];
    for (let i = 0; i < at.samples; i++) {
      const t0 = performance.now();
      await next();
      times.push(performance.now() - t0);
      done++;
    }
    out.set(level, times);
  }
  return out;
}

/** Runs the benchmark in temporary folders. */
export async function deepworkBench(
  options: { quick: boolean; log?: (line: string) => void },
): Promise<DeepworkBenchResult> {
  const at = { levels: options.quick ? [10, 200] : [10, 1_000], samples: options.quick ? 30 : 100 };
  const steps = at.levels.at(-1)! + at.samples + 10;
  const home = await Deno.makeTempDir({ prefix: "waymark-dwbench-home-" });
  const workspace = await Deno.makeTempDir({ prefix: "waymark-dwbench-ws-" });
  const rows: DeepworkRow[] = [];
  try {
    await Deno.mkdir(join(workspace, ".deepwork/jobs/bench"), { recursive: true });
    await Deno.writeTextFile(join(workspace, ".deepwork/jobs/bench/job.yml"), jobYaml(steps));
    await Deno.writeTextFile(join(workspace, "out.md"), "# out\n");
    options.log?.(`deepwork: finished_step through a ${steps}-step job`);
    const dw = await server(home, workspace, "deepwork");
    try {
      // a warm-up run, abandoned, so the measured run starts on a warm process
      await call(dw, "start_workflow", {
        goal: "warm-up",
        job_name: "bench",
        workflow_name: "long",
      });
      for (let i = 0; i < WARMUP; i++) {
        await call(dw, "finished_step", { outputs: { out: "out.md" }, notes: `warm-up ${i}` });
      }
      await call(dw, "abort_workflow", { explanation: "warm-up done" });
      await call(dw, "start_workflow", { goal: "bench", job_name: "bench", workflow_name: "long" });
      let n = 0;
      const finished = await levels(async () => {
        await call(dw, "finished_step", { outputs: { out: "out.md" }, notes: `step ${++n}` });
      }, at);
      for (const [prior, t] of finished) {
        rows.push({ operation: "finished_step", prior, stats: stats(t) });
      }
    } finally {
      await dw.close();
    }
    options.log?.("deepwork: continue_workflow through the same job as bench.long");
    const plain = await server(home, workspace, "default");
    try {
      let tokens = await call(plain, "start_workflow", { workflowId: "bench.long" });
      const advance = async () => {
        tokens = await call(plain, "continue_workflow", {
          stateToken: tokens.stateToken,
          ackToken: tokens.ackToken,
          output: {
            notesMarkdown: "done",
            artifacts: [{ kind: "wr.job_outputs", outputs: { out: "out.md" } }],
          },
        });
      };
      for (let i = 0; i < WARMUP; i++) await advance();
      tokens = await call(plain, "start_workflow", { workflowId: "bench.long" });
      const continued = await levels(advance, at);
      for (const [prior, t] of continued) {
        rows.push({ operation: "continue_workflow", prior, stats: stats(t) });
      }
    } finally {
      await plain.close();
    }
    return { rows };
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
}

/** The result as a table. */
export function deepworkReport(r: DeepworkBenchResult): string {
  const lines = [
    "DeepWork finished_step next to continue_workflow (same job, stdio, one file output per step):",
    `  ${"operation".padEnd(18)} ${"prior".padStart(6)} ${"n".padStart(4)} ${
      "p50 ms".padStart(9)
    } ${"p99 ms".padStart(9)}`,
  ];
  for (const row of r.rows) {
    lines.push(
      `  ${row.operation.padEnd(18)} ${String(row.prior).padStart(6)} ${
        String(row.stats.n).padStart(4)
      } ${row.stats.p50.toFixed(3).padStart(9)} ${row.stats.p99.toFixed(3).padStart(9)}`,
    );
  }
  return lines.join("\n");
}

/** The result as JSON for `bench-results/bench.json`. */
export function deepworkJson(r: DeepworkBenchResult): Record<string, unknown> {
  return {
    rows: r.rows.map((row) => ({
      operation: row.operation,
      prior: row.prior,
      n: row.stats.n,
      p50: r3(row.stats.p50),
      p99: r3(row.stats.p99),
    })),
  };
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { quick: { type: "boolean" } } });
  const result = await deepworkBench({
    quick: values.quick === true,
    log: (l) => console.error(l),
  });
  console.log(deepworkReport(result));
}
