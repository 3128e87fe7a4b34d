/**
 * The MCP latency benchmark: spawns `waymark serve` as an MCP client would (a child process
 * over stdio, cwd = a temp workspace) and talks newline-delimited JSON-RPC to it directly, so
 * no client SDK sits on the timed path.
 *
 * Measures cold start (spawn → initialize → tools/list answered), `start_workflow`,
 * `resume_session` over 10,000 sessions (`resume_bench.ts`), and, in
 * ONE run of a generated ~10,600-step project workflow, advance / replay / rehydrate latency at
 * 10, 1,000 and 10,000 prior advances. Prints a table and writes `bench-results/bench.json`.
 *
 *   deno task bench            full run (a few minutes on 2 cores)
 *   deno task bench --quick    smoke run (max 1,000 prior advances, fewer samples)
 *
 * Other flags: `--no-roots` (do not advertise the roots capability), `--keep` (keep the temp
 * dirs and print where they are), `--samples N`, `--out FILE`.
 *
 * `tests/bench/in_process.ts` runs the same calls in-process (no transport) and times every SQL
 * statement, to split a stdio latency into transport and engine time.
 *
 * Targets are reported, never enforced: the exit code is non-zero only when something actually
 * fails (an error response, a crash, a timeout).
 * @module
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { dirname, join, relative } from "node:path";
import { RpcError, StdioRpc } from "./stdio_rpc.ts";
import { LONG_ID, longWorkflow, r3, type Stats, stats } from "./common.ts";
import { TARGET_VIEWER_MS, VIEWER_SESSION, viewerBench, viewerJson } from "./viewer_bench.ts";
import { resumeBench, resumeJson, resumeReport } from "./resume_bench.ts";
import { deepworkBench, deepworkJson, deepworkReport } from "./deepwork_bench.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = join(ROOT, "main.ts");
const PROTOCOL_VERSION = "2025-06-18";
const START_ID = "wr.code_review";

/** Targets from the issue. */
const TARGET_ADVANCE_P50_MS = 2;
const TARGET_RATIO = 1.3;

interface Config {
  mode: "full" | "quick";
  coldStarts: number;
  startSamples: number;
  warmup: number;
  longWarmup: number;
  samples: number;
  levels: number[];
  longSteps: number;
  roots: boolean;
}

function config(argv: string[]): { config: Config; keep: boolean; out: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      "no-roots": { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      samples: { type: "string" },
      out: { type: "string" },
    },
  });
  const quick = values.quick === true;
  const samples = values.samples ? Number(values.samples) : quick ? 50 : 200;
  if (!Number.isInteger(samples) || samples < 2) {
    throw new Error(`--samples must be an integer ≥ 2`);
  }
  const levels = quick ? [10, 1_000] : [10, 1_000, 10_000];
  const maxLevel = levels[levels.length - 1]!;
  return {
    config: {
      mode: quick ? "quick" : "full",
      coldStarts: quick ? 3 : 5,
      startSamples: samples,
      warmup: quick ? 10 : 20,
      longWarmup: quick ? 50 : 200,
      samples,
      levels,
      // the measured window after the last level plus a margin, so the run never completes
      longSteps: quick ? maxLevel + samples + 200 : Math.max(10_600, maxLevel + samples + 200),
      roots: values["no-roots"] !== true,
    },
    keep: values.keep === true,
    out: values.out ?? join(ROOT, "bench-results", "bench.json"),
  };
}

// ---------------------------------------------------------------------------------------------
// talking to the server

interface ToolResult {
  content?: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

interface Step {
  stateToken: string;
  ackToken?: string;
  pending: { stepId: string } | null;
  isComplete: boolean;
}

class BenchFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchFailure";
  }
}

function spawnServer(home: string, workspace: string, roots: boolean): StdioRpc {
  return StdioRpc.spawn({
    command: Deno.execPath(),
    args: ["run", "-A", "--quiet", MAIN, "serve", "--home", home],
    cwd: workspace,
    env: { NO_COLOR: "1" },
    roots: roots ? [{ uri: new URL(`file://${workspace}/`).href, name: "workspace" }] : null,
  });
}

async function handshake(rpc: StdioRpc, roots: boolean): Promise<void> {
  await rpc.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: roots ? { roots: { listChanged: true } } : {},
    clientInfo: { name: "waymark-bench", version: "1.0.0" },
  });
  await rpc.notify("notifications/initialized");
}

async function callTool(
  rpc: StdioRpc,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  const result = await rpc.request("tools/call", { name, arguments: args }) as ToolResult;
  if (result.isError) {
    const error = (result.structuredContent as { error?: { code?: string } } | undefined)?.error;
    throw new BenchFailure(
      `${name} returned an error${error?.code ? ` (${error.code})` : ""}: ${
        result.content?.[0]?.text?.slice(0, 500)
      }`,
    );
  }
  if (!result.structuredContent) throw new BenchFailure(`${name} returned no structuredContent`);
  return result;
}

function step(result: ToolResult, what: string): Step {
  const s = result.structuredContent as unknown as Step;
  if (typeof s.stateToken !== "string") {
    throw new BenchFailure(`${what}: no stateToken in the response`);
  }
  return s;
}

/** Times one call; performance.now() around the request, response parsed. */
async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

function advanceArgs(at: Step): Record<string, unknown> {
  if (!at.ackToken || !at.pending) {
    throw new BenchFailure("the long run has no pending step to acknowledge");
  }
  return {
    stateToken: at.stateToken,
    ackToken: at.ackToken,
    output: { notesMarkdown: `Done ${at.pending.stepId}.` },
  };
}

// ---------------------------------------------------------------------------------------------
// phases

async function coldStart(
  home: string,
  workspace: string,
  roots: boolean,
): Promise<{ initializeMs: number; toolsListMs: number; tools: number }> {
  const t0 = performance.now();
  const rpc = spawnServer(home, workspace, roots);
  try {
    await handshake(rpc, roots);
    const initializeMs = performance.now() - t0;
    const listed = await rpc.request("tools/list", {}) as { tools?: unknown[] };
    const toolsListMs = performance.now() - t0;
    if (!Array.isArray(listed.tools) || listed.tools.length === 0) {
      throw new BenchFailure("tools/list returned no tools");
    }
    return { initializeMs, toolsListMs, tools: listed.tools.length };
  } catch (error) {
    throw withStderr(error, rpc);
  } finally {
    await rpc.close();
  }
}

function withStderr(error: unknown, rpc: StdioRpc): Error {
  const tail = rpc.stderrTail();
  const base = error instanceof Error ? error : new Error(String(error));
  if (tail.trim() && !base.message.includes("--- server stderr")) {
    base.message += `\n--- server stderr (last lines) ---\n${tail}`;
  }
  return base;
}

interface LevelResult {
  prior: number;
  advance: number[];
  replay: number[];
  rehydrate: number[];
  replayMismatches: number;
}

async function measureLevel(
  rpc: StdioRpc,
  at: Step,
  prior: number,
  samples: number,
): Promise<{ result: LevelResult; at: Step }> {
  const advance: number[] = [];
  const replay: number[] = [];
  const rehydrate: number[] = [];
  const pairs: { args: Record<string, unknown>; response: string }[] = [];
  for (let i = 0; i < samples; i++) {
    const args = advanceArgs(at);
    const [ms, result] = await timed(() => callTool(rpc, "continue_workflow", args));
    advance.push(ms);
    pairs.push({ args, response: JSON.stringify(result.structuredContent) });
    at = step(result, "advance");
  }
  let replayMismatches = 0;
  for (const pair of pairs) {
    const [ms, result] = await timed(() => callTool(rpc, "continue_workflow", pair.args));
    replay.push(ms);
    if (JSON.stringify(result.structuredContent) !== pair.response) replayMismatches++;
  }
  const expected = at.pending?.stepId;
  for (let i = 0; i < samples; i++) {
    const [ms, result] = await timed(() =>
      callTool(rpc, "continue_workflow", { stateToken: at.stateToken })
    );
    rehydrate.push(ms);
    const got = step(result, "rehydrate");
    if (got.pending?.stepId !== expected) {
      throw new BenchFailure(
        `rehydrate returned pending ${got.pending?.stepId}, expected ${expected}`,
      );
    }
  }
  return { result: { prior, advance, replay, rehydrate, replayMismatches }, at };
}

// ---------------------------------------------------------------------------------------------
// report

interface Row {
  operation: string;
  prior: number | null;
  stats: Stats;
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

function table(rows: Row[]): string {
  const header = [
    pad("operation", 16),
    pad("prior adv.", 11, true),
    pad("n", 5, true),
    pad("p50 ms", 9, true),
    pad("p99 ms", 9, true),
    pad("mean ms", 9, true),
    pad("max ms", 9, true),
  ];
  const lines = [header.join("  "), "-".repeat(header.join("  ").length)];
  for (const row of rows) {
    lines.push([
      pad(row.operation, 16),
      pad(row.prior === null ? "-" : row.prior.toLocaleString("en-US"), 11, true),
      pad(String(row.stats.n), 5, true),
      pad(row.stats.p50.toFixed(3), 9, true),
      pad(row.stats.p99.toFixed(3), 9, true),
      pad(row.stats.mean.toFixed(3), 9, true),
      pad(row.stats.max.toFixed(3), 9, true),
    ].join("  "));
  }
  return lines.join("\n");
}

function statsJson(s: Stats): Record<string, number> {
  return {
    n: s.n,
    p50: r3(s.p50),
    p99: r3(s.p99),
    mean: r3(s.mean),
    min: r3(s.min),
    max: r3(s.max),
  };
}

async function gitHead(): Promise<{ commit: string | null; dirty: boolean | null }> {
  try {
    const run = async (args: string[]) => {
      const out = await new Deno.Command("git", {
        args,
        cwd: ROOT,
        stdout: "piped",
        stderr: "null",
      }).output();
      return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
    };
    const commit = await run(["rev-parse", "HEAD"]);
    const status = await run(["status", "--porcelain", "--untracked-files=no"]);
    return { commit, dirty: status === null ? null : status.length > 0 };
  } catch {
    return { commit: null, dirty: null };
  }
}

function log(line: string): void {
  console.error(`[bench] ${line}`);
}

// ---------------------------------------------------------------------------------------------
// main

async function main(): Promise<number> {
  const { config: cfg, keep, out } = config(Deno.args);
  const loadavgAtStart = Deno.loadavg();
  const tmp = await Deno.makeTempDir({ prefix: "waymark-bench-" });
  const workspace = join(tmp, "workspace");
  const homes = join(tmp, "homes");
  let server: StdioRpc | null = null;
  let cleaning: Promise<void> | null = null;
  // one cleanup, awaited by whoever asks (the signal handler and the finally block alike)
  const cleanup = (): Promise<void> =>
    cleaning ??= (async () => {
      if (server) await server.close();
      if (keep) log(`kept temp dirs in ${tmp}`);
      else await Deno.remove(tmp, { recursive: true }).catch(() => {});
    })();
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) return;
    interrupted = true;
    log("interrupted; cleaning up");
    cleanup().finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);

  try {
    await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
    await Deno.mkdir(homes, { recursive: true });
    const workflowFile = join(workspace, ".waymark", "workflows", "bench_long.json");
    await Deno.writeTextFile(workflowFile, longWorkflow(cfg.longSteps));
    log(`mode ${cfg.mode}; ${cfg.longSteps} generated steps; workspace ${workspace}`);

    // ---- cold start ---------------------------------------------------------------------------
    log("warming Deno's module cache (one unmeasured spawn)");
    await coldStart(join(homes, "warm"), workspace, cfg.roots);
    const mainHome = join(homes, "main");
    await coldStart(mainHome, workspace, cfg.roots); // creates the main database; unmeasured
    const coldExisting: { initializeMs: number; toolsListMs: number }[] = [];
    const coldFresh: { initializeMs: number; toolsListMs: number }[] = [];
    for (let i = 0; i < cfg.coldStarts; i++) {
      coldExisting.push(await coldStart(mainHome, workspace, cfg.roots));
      coldFresh.push(await coldStart(join(homes, `fresh-${i}`), workspace, cfg.roots));
    }
    log(`cold start: ${cfg.coldStarts}× existing home, ${cfg.coldStarts}× fresh home`);

    // ---- one long-lived session --------------------------------------------------------------
    server = spawnServer(mainHome, workspace, cfg.roots);
    const rpc = server;
    try {
      await handshake(rpc, cfg.roots);
      await rpc.request("tools/list", {});

      // start_workflow on a bundled workflow
      // the first tool call loads and compiles every workflow source, the generated file included
      const [firstCallMs] = await timed(() =>
        callTool(rpc, "start_workflow", { workflowId: START_ID })
      );
      for (let i = 1; i < cfg.warmup; i++) {
        step(await callTool(rpc, "start_workflow", { workflowId: START_ID }), "start");
      }
      const start: number[] = [];
      for (let i = 0; i < cfg.startSamples; i++) {
        const [ms, result] = await timed(() =>
          callTool(rpc, "start_workflow", { workflowId: START_ID })
        );
        step(result, "start_workflow");
        start.push(ms);
      }
      log(`start_workflow ×${cfg.startSamples}`);

      // the first start of the long workflow (its compiled snapshot is stored by hash)
      const [firstLongStartMs, firstLong] = await timed(() =>
        callTool(rpc, "start_workflow", { workflowId: LONG_ID })
      );
      // warm-up on a throwaway long run, so the measured run starts from 10 prior advances
      let warm = step(firstLong, "start long (warm-up)");
      const warmPairs: Record<string, unknown>[] = [];
      for (let i = 0; i < cfg.longWarmup; i++) {
        const args = advanceArgs(warm);
        warmPairs.push(args);
        warm = step(await callTool(rpc, "continue_workflow", args), "warm-up advance");
      }
      for (const args of warmPairs) await callTool(rpc, "continue_workflow", args);
      for (let i = 0; i < cfg.longWarmup; i++) {
        await callTool(rpc, "continue_workflow", { stateToken: warm.stateToken });
      }
      log(`warm-up: ${cfg.longWarmup} advances, replays and rehydrates on a throwaway run`);

      // the measured run
      const [longStartMs, started] = await timed(() =>
        callTool(rpc, "start_workflow", { workflowId: LONG_ID })
      );
      let at = step(started, "start long");
      let prior = 0;
      const levels: LevelResult[] = [];
      const drives: { from: number; to: number; ms: number }[] = [];
      for (const level of cfg.levels) {
        if (prior > level) {
          throw new Error(`level ${level} is below ${prior} prior advances; use fewer samples`);
        }
        const from = prior;
        const t0 = performance.now();
        while (prior < level) {
          at = step(await callTool(rpc, "continue_workflow", advanceArgs(at)), "drive advance");
          prior++;
          if (prior % 1000 === 0) log(`  driving… ${prior.toLocaleString("en-US")} prior advances`);
        }
        if (level > from) drives.push({ from, to: level, ms: performance.now() - t0 });
        const measured = await measureLevel(rpc, at, prior, cfg.samples);
        levels.push(measured.result);
        at = measured.at;
        prior += cfg.samples;
        log(`measured at ${level.toLocaleString("en-US")} prior advances`);
      }

      // control: a second long run started at the end of the session, measured at the first
      // level again, to tell a cost that grows with history from warm-up or drift over time
      let ctl = step(
        await callTool(rpc, "start_workflow", { workflowId: LONG_ID }),
        "start long (control)",
      );
      const ctlLevel = cfg.levels[0]!;
      for (let i = 0; i < ctlLevel; i++) {
        ctl = step(await callTool(rpc, "continue_workflow", advanceArgs(ctl)), "control advance");
      }
      const control = (await measureLevel(rpc, ctl, ctlLevel, cfg.samples)).result;
      log(`control: a new run measured at ${ctlLevel} prior advances`);

      // ---- report ----------------------------------------------------------------------------
      const rows: Row[] = [
        {
          operation: "cold start*",
          prior: null,
          stats: stats(coldExisting.map((c) => c.toolsListMs)),
        },
        {
          operation: "cold start fresh",
          prior: null,
          stats: stats(coldFresh.map((c) => c.toolsListMs)),
        },
        { operation: "start_workflow", prior: null, stats: stats(start) },
      ];
      for (const op of ["advance", "replay", "rehydrate"] as const) {
        for (const level of levels) {
          rows.push({ operation: op, prior: level.prior, stats: stats(level[op]) });
        }
        rows.push({ operation: `${op} (ctl)`, prior: control.prior, stats: stats(control[op]) });
      }
      const first = levels[0]!;
      const last = levels[levels.length - 1]!;
      const advFirst = stats(first.advance).p50;
      const advLast = stats(last.advance).p50;
      const ratio = advLast / advFirst;
      const worstAdvanceP50 = Math.max(...levels.map((l) => stats(l.advance).p50));
      const replayMismatches = [...levels, control].reduce((n, l) => n + l.replayMismatches, 0);

      // the viewer: server time to render a 1,000-node, 20-fork session (in-process)
      log("viewer: building a 1,000-node session with 20 forks and rendering it");
      const viewer = await viewerBench({
        samples: cfg.mode === "quick" ? 15 : 50,
        warmup: cfg.mode === "quick" ? 2 : 5,
        log,
      });
      for (const v of viewer.rows) {
        rows.push({ operation: v.operation, prior: null, stats: v.stats });
      }

      console.log("");
      console.log(
        `waymark MCP stdio benchmark (${cfg.mode}; Deno ${Deno.version.deno}, ${Deno.build.os}/${Deno.build.arch}, ${navigator.hardwareConcurrency} CPUs)`,
      );
      console.log("");
      console.log(table(rows));
      console.log(
        `(ctl): a second ${LONG_ID} run started after the last level, measured at ${ctlLevel} prior advances (control for warm-up and drift over the session).`,
      );
      console.log("");
      console.log(
        "cold start*: spawn → initialize → tools/list answered, existing home; fresh: new home (creates the database).",
      );
      console.log(
        `first tools/call of the session (loads and compiles every workflow file, ${cfg.longSteps}-step one included): ${
          firstCallMs.toFixed(1)
        } ms`,
      );
      console.log(
        `first start of ${LONG_ID} (pins a ${cfg.longSteps}-step snapshot): ${
          firstLongStartMs.toFixed(1)
        } ms; measured run's start: ${longStartMs.toFixed(1)} ms`,
      );
      for (const d of drives) {
        const n = d.to - d.from;
        console.log(
          `driving ${d.from.toLocaleString("en-US")} → ${
            d.to.toLocaleString("en-US")
          }: ${n} advances in ${(d.ms / 1000).toFixed(1)} s (${(d.ms / n).toFixed(3)} ms each)`,
        );
      }
      console.log("");
      const met = (ok: boolean) => ok ? "MET" : "NOT MET";
      console.log("targets (reported only):");
      console.log(
        `  advance p50 ≤ ${TARGET_ADVANCE_P50_MS} ms over stdio: worst level p50 ${
          worstAdvanceP50.toFixed(3)
        } ms → ${met(worstAdvanceP50 <= TARGET_ADVANCE_P50_MS)}`,
      );
      console.log(
        `  advance p50 @${last.prior.toLocaleString("en-US")} / @${
          first.prior.toLocaleString("en-US")
        } ≤ ${TARGET_RATIO}: ${advLast.toFixed(3)} / ${advFirst.toFixed(3)} = ${
          ratio.toFixed(3)
        } → ${met(ratio <= TARGET_RATIO)}${
          last.prior < 10_000 ? " (quick mode: the target is defined at 10,000)" : ""
        }`,
      );
      console.log(
        `  viewer session page (${VIEWER_SESSION.nodes} nodes, ${VIEWER_SESSION.forks} forks) p50 ≤ ${TARGET_VIEWER_MS} ms: ${
          viewer.rows[0]!.stats.p50.toFixed(3)
        } ms → ${met(viewer.met)}`,
      );
      if (replayMismatches > 0) {
        console.log(`  WARNING: ${replayMismatches} replays differed from the recorded response`);
      }
      const serverRequests = { ...rpc.serverRequests };
      if (Object.keys(serverRequests).length > 0) {
        console.log(
          `server → client requests during the session: ${JSON.stringify(serverRequests)}`,
        );
      }

      const git = await gitHead();
      const json = {
        benchmark: "waymark-mcp-stdio",
        timestamp: new Date().toISOString(),
        mode: cfg.mode,
        config: cfg,
        machine: {
          deno: Deno.version,
          os: Deno.build.os,
          arch: Deno.build.arch,
          target: Deno.build.target,
          cpus: navigator.hardwareConcurrency,
          loadavgAtStart,
          loadavgAtEnd: Deno.loadavg(),
          osRelease: Deno.osRelease(),
        },
        git,
        protocolVersion: PROTOCOL_VERSION,
        units: "ms",
        coldStart: {
          existingHome: {
            toolsList: statsJson(stats(coldExisting.map((c) => c.toolsListMs))),
            initialize: statsJson(stats(coldExisting.map((c) => c.initializeMs))),
            samples: coldExisting.map((c) => ({
              initializeMs: r3(c.initializeMs),
              toolsListMs: r3(c.toolsListMs),
            })),
          },
          freshHome: {
            toolsList: statsJson(stats(coldFresh.map((c) => c.toolsListMs))),
            initialize: statsJson(stats(coldFresh.map((c) => c.initializeMs))),
            samples: coldFresh.map((c) => ({
              initializeMs: r3(c.initializeMs),
              toolsListMs: r3(c.toolsListMs),
            })),
          },
        },
        startWorkflow: { workflowId: START_ID, ...statsJson(stats(start)), samples: start.map(r3) },
        longRun: {
          workflowId: LONG_ID,
          steps: cfg.longSteps,
          firstToolCallMs: r3(firstCallMs),
          firstStartMs: r3(firstLongStartMs),
          startMs: r3(longStartMs),
          drives: drives.map((d) => ({
            ...d,
            ms: r3(d.ms),
            perAdvanceMs: r3(d.ms / (d.to - d.from)),
          })),
          levels: levels.map((l) => ({
            prior: l.prior,
            advance: { ...statsJson(stats(l.advance)), samples: l.advance.map(r3) },
            replay: { ...statsJson(stats(l.replay)), samples: l.replay.map(r3) },
            rehydrate: { ...statsJson(stats(l.rehydrate)), samples: l.rehydrate.map(r3) },
            replayMismatches: l.replayMismatches,
          })),
          control: {
            prior: control.prior,
            note: "a second run started after the last level, measured at the first level again",
            advance: { ...statsJson(stats(control.advance)), samples: control.advance.map(r3) },
            replay: { ...statsJson(stats(control.replay)), samples: control.replay.map(r3) },
            rehydrate: {
              ...statsJson(stats(control.rehydrate)),
              samples: control.rehydrate.map(r3),
            },
            replayMismatches: control.replayMismatches,
          },
        },
        table: rows.map((r) => ({ operation: r.operation, prior: r.prior, ...statsJson(r.stats) })),
        targets: {
          advanceP50Ms: {
            target: TARGET_ADVANCE_P50_MS,
            worstLevelP50: r3(worstAdvanceP50),
            met: worstAdvanceP50 <= TARGET_ADVANCE_P50_MS,
          },
          advanceRatio: {
            target: TARGET_RATIO,
            from: first.prior,
            to: last.prior,
            value: r3(ratio),
            met: ratio <= TARGET_RATIO,
            definedAt10000: last.prior >= 10_000,
          },
        },
        viewer: viewerJson(viewer),
        serverRequests,
        notifications: { ...rpc.notifications },
      };
      // resume_session over many sessions, in its own store and server (resume_bench.ts)
      const resume = await resumeBench({
        sessions: cfg.mode === "quick" ? 1_000 : 10_000,
        samples: cfg.mode === "quick" ? 25 : 100,
        log,
      });
      console.log("");
      console.log(resumeReport(resume));
      Object.assign(json, { resumeSession: resumeJson(resume) });
      const deepwork = await deepworkBench({ quick: cfg.mode === "quick", log });
      console.log("");
      console.log(deepworkReport(deepwork));
      Object.assign(json, { deepwork: deepworkJson(deepwork) });
      await Deno.mkdir(dirname(out), { recursive: true });
      await Deno.writeTextFile(out, `${JSON.stringify(json, null, 2)}\n`);
      console.log("");
      console.log(`results: ${relative(Deno.cwd(), out) || out} (${out})`);
      return 0;
    } catch (error) {
      throw withStderr(error, rpc);
    }
  } catch (error) {
    if (interrupted) {
      await cleanup();
      return 130;
    }
    let message = String(error);
    if (error instanceof Error) {
      message = `${error.name}: ${error.message}`;
      if (!(error instanceof BenchFailure || error instanceof RpcError) && error.stack) {
        message += `\n${
          error.stack.split("\n").filter((l) => l.trimStart().startsWith("at ")).join("\n")
        }`;
      }
    }
    console.error(`[bench] FAILED: ${message}`);
    return 1;
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    await cleanup();
  }
}

if (import.meta.main) {
  Deno.exit(await main());
}
