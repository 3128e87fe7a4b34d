/**
 * `resume_session` latency over stdio with many sessions in the store (10,000 by default;
 * 1,000 with `--quick`). The sessions are seeded in-process through the engine (each started
 * and advanced once with notes, in two workspaces), then a real `waymark serve` process is
 * spawned on that database and `resume_session` is timed over JSON-RPC for four query kinds:
 * a rare word from one run's notes, a common word, a session id, and no query (recent runs).
 *
 *   deno run -A tests/bench/resume_bench.ts [--quick] [--sessions N] [--samples N]
 *
 * `mcp_bench.ts` calls {@linkcode resumeBench} after its own phases. Targets are reported,
 * never enforced.
 * @module
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { openWaymark } from "../../mod.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { StdioRpc } from "./stdio_rpc.ts";
import { r3, type Stats, stats } from "./common.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = join(ROOT, "main.ts");
/** The target: p50 of a `resume_session` call over stdio (docs/performance.md). */
export const TARGET_RESUME_P50_MS = 20;

/** What one run of the resume benchmark measured. */
export interface ResumeBenchResult {
  /** Sessions in the store. */
  sessions: number;
  /** Seeding time (in-process), in ms. */
  seedMs: number;
  /** Latency of every sample, all kinds together. */
  overall: Stats;
  /** Latency by query kind. */
  byKind: Record<string, Stats>;
  /** Whether overall p50 ≤ 20 ms. */
  met: boolean;
}

/** A small deterministic PRNG (mulberry32), so every run seeds the same words. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ["ka", "lo", "mi", "ra", "to", "ne", "su", "vi", "do", "pe", "zu", "ha"];

function vocabulary(n: number, rand: () => number): string[] {
  const words = new Set<string>();
  while (words.size < n) {
    const len = 2 + Math.floor(rand() * 3);
    words.add(Array.from({ length: len }, () => SYLLABLES[Math.floor(rand() * 12)]).join(""));
  }
  return [...words];
}

/** Seeds `sessions` sessions, times `resume_session` over stdio, and returns the stats. */
export async function resumeBench(
  options: { sessions: number; samples: number; log?: (line: string) => void },
): Promise<ResumeBenchResult> {
  const log = options.log ?? (() => {});
  const tmp = await Deno.makeTempDir({ prefix: "waymark-resume-bench-" });
  const home = join(tmp, "home");
  const workspaces = [join(tmp, "ws-a"), join(tmp, "ws-b")];
  for (const ws of workspaces) await Deno.mkdir(ws, { recursive: true });
  try {
    const rand = prng(42);
    const words = vocabulary(2000, rand);
    const pick = () => words[Math.floor(rand() * words.length)]!;
    const waymark = await openWaymark({ home });
    const sessionIds: string[] = [];
    const t0 = performance.now();
    try {
      for (let i = 0; i < options.sessions; i++) {
        const workspace = {
          workspace: workspaces[i % 2]!,
          gitBranch: i % 2 ? "feature-b" : "main",
          gitHeadSha: (i % 2 ? "b" : "a").repeat(40),
        };
        const started = await startWorkflow(waymark.deps, {
          workflowId: "waymark.code_review",
          goal: `Review ${pick()} ${pick()} ${i}`,
        }, { workspace });
        if (!started.ok) throw new Error(started.error.message);
        sessionIds.push(started.value.session!.sessionId);
        const notes = `Checked ${Array.from({ length: 20 }, pick).join(" ")}; marker tag${i}.`;
        const advanced = await continueWorkflow(waymark.deps, {
          stateToken: started.value.stateToken,
          ackToken: started.value.ackToken,
          output: { notesMarkdown: notes },
        }, { workspace });
        if (!advanced.ok) throw new Error(advanced.error.message);
        if ((i + 1) % 1000 === 0) log(`  seeded ${(i + 1).toLocaleString("en-US")} sessions`);
      }
    } finally {
      await waymark.close();
    }
    const seedMs = performance.now() - t0;
    log(`seeded ${options.sessions} sessions in ${(seedMs / 1000).toFixed(1)} s`);

    const rpc = StdioRpc.spawn({
      command: Deno.execPath(),
      args: ["run", "-A", "--quiet", MAIN, "serve", "--home", home],
      cwd: workspaces[0]!,
      env: { NO_COLOR: "1" },
      roots: [{ uri: new URL(`file://${workspaces[0]}/`).href }],
    });
    try {
      await rpc.request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: "waymark-resume-bench", version: "1.0.0" },
      });
      await rpc.notify("notifications/initialized");
      const kinds: Record<string, (i: number) => Record<string, unknown>> = {
        "rare word": (i) => ({ query: `tag${(i * 7919) % options.sessions}` }),
        "common word": (i) => ({ query: words[i % words.length] }),
        "session id": (i) => ({ query: sessionIds[(i * 104729) % sessionIds.length] }),
        "no query": () => ({}),
      };
      const call = async (args: Record<string, unknown>) => {
        const result = await rpc.request("tools/call", {
          name: "resume_session",
          arguments: args,
        }) as {
          isError?: boolean;
          structuredContent?: { candidates?: unknown[] };
          content?: { text: string }[];
        };
        if (result.isError || !result.structuredContent?.candidates?.length) {
          throw new Error(`resume_session ${JSON.stringify(args)}: ${result.content?.[0]?.text}`);
        }
      };
      // warm-up: the first call fetches roots and compiles statements
      for (const make of Object.values(kinds)) for (let i = 0; i < 10; i++) await call(make(i));
      const byKind: Record<string, number[]> = {};
      const all: number[] = [];
      for (let i = 0; i < options.samples; i++) {
        for (const [kind, make] of Object.entries(kinds)) {
          const args = make(i + 1000);
          const t = performance.now();
          await call(args);
          const ms = performance.now() - t;
          (byKind[kind] ??= []).push(ms);
          all.push(ms);
        }
      }
      const overall = stats(all);
      return {
        sessions: options.sessions,
        seedMs,
        overall,
        byKind: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, stats(v)])),
        met: overall.p50 <= TARGET_RESUME_P50_MS,
      };
    } finally {
      await rpc.close();
    }
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** The result as a printable table and a target line. */
export function resumeReport(r: ResumeBenchResult): string {
  const row = (name: string, s: Stats) =>
    `  ${name.padEnd(14)} ${String(s.n).padStart(5)} ${s.p50.toFixed(3).padStart(9)} ${
      s.p99.toFixed(3).padStart(9)
    } ${s.mean.toFixed(3).padStart(9)}`;
  return [
    `resume_session over stdio, ${
      r.sessions.toLocaleString("en-US")
    } sessions in the store (seeded in ${(r.seedMs / 1000).toFixed(1)} s):`,
    `  ${"query".padEnd(14)} ${"n".padStart(5)} ${"p50 ms".padStart(9)} ${"p99 ms".padStart(9)} ${
      "mean ms".padStart(9)
    }`,
    ...Object.entries(r.byKind).map(([k, s]) => row(k, s)),
    row("all", r.overall),
    `  target: resume_session p50 ≤ ${TARGET_RESUME_P50_MS} ms at ${
      r.sessions.toLocaleString("en-US")
    } sessions: ${r.overall.p50.toFixed(3)} ms → ${r.met ? "MET" : "NOT MET"}`,
  ].join("\n");
}

/** The result as JSON for `bench-results/bench.json`. */
export function resumeJson(r: ResumeBenchResult): Record<string, unknown> {
  const js = (s: Stats) => ({ n: s.n, p50: r3(s.p50), p99: r3(s.p99), mean: r3(s.mean) });
  return {
    sessions: r.sessions,
    seedMs: r3(r.seedMs),
    overall: js(r.overall),
    byKind: Object.fromEntries(Object.entries(r.byKind).map(([k, s]) => [k, js(s)])),
    target: { p50Ms: TARGET_RESUME_P50_MS, met: r.met },
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      quick: { type: "boolean", default: false },
      sessions: { type: "string" },
      samples: { type: "string" },
    },
  });
  const result = await resumeBench({
    sessions: values.sessions ? Number(values.sessions) : values.quick ? 1_000 : 10_000,
    samples: values.samples ? Number(values.samples) : values.quick ? 25 : 100,
    log: (line) => console.error(`[resume-bench] ${line}`),
  });
  console.log(resumeReport(result));
}
