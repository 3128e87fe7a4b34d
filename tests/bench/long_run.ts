/**
 * One long-lived `waymark serve` session: `start_workflow` latency, then ONE run of the generated
 * long workflow measured at each level of prior advances (advance, then replaying each of those
 * advances, then rehydrating), a control run started at the end, and the server's resident
 * memory after 100 advances and after the last level.
 * @module
 */
import type { StdioRpc } from "./stdio_rpc.ts";
import { LONG_ID, r3 } from "./common.ts";
import {
  advanceArgs,
  BenchFailure,
  callTool,
  handshake,
  rssKib,
  spawnSubject,
  type Step,
  step,
  timed,
  withStderr,
} from "./session.ts";
import type { Config } from "./config.ts";

const START_ID = "waymark.code_review";

/** One level's samples (ms). */
export interface LevelResult {
  /** Prior advances on the run when the level was measured. */
  prior: number;
  /** Advance latencies. */
  advance: number[];
  /** Replay latencies (the same calls again). */
  replay: number[];
  /** Rehydrate latencies. */
  rehydrate: number[];
  /** Replays whose response differed from the recorded one. */
  replayMismatches: number;
}

/** What the long session measured. */
export interface SessionResult {
  /** start_workflow latencies. */
  start: number[];
  /** The first start of the long workflow (pins its snapshot). */
  firstLongStartMs: number;
  /** The measured levels. */
  levels: LevelResult[];
  /** The control run. */
  control: LevelResult;
  /** Advances driven between levels. */
  drives: { from: number; to: number; ms: number; perAdvanceMs: number }[];
  /** Server RSS (KiB) after N advances on the measured run, by N. */
  rss: Record<string, number | null>;
  /** Replays that differed, over every level. */
  replayMismatches: number;
}

/** A run being advanced, counting its advances and noting RSS at the given counts. */
class Run {
  prior = 0;
  readonly rss: Record<string, number | null> = {};
  constructor(readonly rpc: StdioRpc, public at: Step, readonly rssAt: readonly number[]) {}

  async advance(): Promise<[number, Record<string, unknown>, string]> {
    const args = advanceArgs(this.at);
    const [ms, result] = await timed(() => callTool(this.rpc, "continue_workflow", args));
    this.at = step(result, "advance");
    this.prior++;
    if (this.rssAt.includes(this.prior)) this.rss[String(this.prior)] = rssKib(this.rpc.pid);
    return [ms, args, JSON.stringify(result.structuredContent)];
  }
}

async function measureLevel(run: Run, samples: number): Promise<LevelResult> {
  const prior = run.prior;
  const advance: number[] = [];
  const replay: number[] = [];
  const rehydrate: number[] = [];
  const pairs: { args: Record<string, unknown>; response: string }[] = [];
  for (let i = 0; i < samples; i++) {
    const [ms, args, response] = await run.advance();
    advance.push(ms);
    pairs.push({ args, response });
  }
  let replayMismatches = 0;
  for (const pair of pairs) {
    const [ms, result] = await timed(() => callTool(run.rpc, "continue_workflow", pair.args));
    replay.push(ms);
    if (JSON.stringify(result.structuredContent) !== pair.response) replayMismatches++;
  }
  const expected = run.at.pending?.stepId;
  for (let i = 0; i < samples; i++) {
    const [ms, result] = await timed(() =>
      callTool(run.rpc, "continue_workflow", { stateToken: run.at.stateToken })
    );
    rehydrate.push(ms);
    const got = step(result, "rehydrate");
    if (got.pending?.stepId !== expected) {
      throw new BenchFailure(`rehydrate returned ${got.pending?.stepId}, expected ${expected}`);
    }
  }
  return { prior, advance, replay, rehydrate, replayMismatches };
}

async function startSamples(rpc: StdioRpc, cfg: Config): Promise<number[]> {
  for (let i = 0; i < cfg.warmup; i++) {
    step(await callTool(rpc, "start_workflow", { workflowId: START_ID }), "start");
  }
  const start: number[] = [];
  for (let i = 0; i < cfg.samples; i++) {
    const [ms, result] = await timed(() =>
      callTool(rpc, "start_workflow", { workflowId: START_ID })
    );
    step(result, "start_workflow");
    start.push(ms);
  }
  return start;
}

/** A throwaway run: advances, replays and rehydrates, so the measured run starts warm. */
async function warmUp(rpc: StdioRpc, at: Step, count: number): Promise<void> {
  const run = new Run(rpc, at, []);
  const pairs: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) pairs.push((await run.advance())[1]);
  for (const args of pairs) await callTool(rpc, "continue_workflow", args);
  for (let i = 0; i < count; i++) {
    await callTool(rpc, "continue_workflow", { stateToken: run.at.stateToken });
  }
}

async function measuredRun(rpc: StdioRpc, cfg: Config, log: (line: string) => void) {
  const last = cfg.levels[cfg.levels.length - 1]!;
  const started = await callTool(rpc, "start_workflow", { workflowId: LONG_ID });
  const run = new Run(rpc, step(started, "start long"), [100, last]);
  const levels: LevelResult[] = [];
  const drives: SessionResult["drives"] = [];
  for (const level of cfg.levels) {
    if (run.prior > level) throw new Error(`level ${level} is below ${run.prior}; fewer samples`);
    const from = run.prior;
    const t0 = performance.now();
    while (run.prior < level) {
      await run.advance();
      if (run.prior % 1000 === 0) log(`  driving… ${run.prior} prior advances`);
    }
    const ms = performance.now() - t0;
    if (level > from) {
      drives.push({ from, to: level, ms: r3(ms), perAdvanceMs: r3(ms / (level - from)) });
    }
    levels.push(await measureLevel(run, cfg.samples));
    log(`measured at ${level.toLocaleString("en-US")} prior advances`);
  }
  return { levels, drives, rss: run.rss };
}

/** Runs the long session on `home` with `workspace` as the project. */
export async function longSession(
  cfg: Config,
  dirs: { home: string; workspace: string; log: (line: string) => void },
): Promise<SessionResult> {
  const { log } = dirs;
  const rpc = spawnSubject({
    subject: "main_ts",
    home: dirs.home,
    cwd: dirs.workspace,
    roots: cfg.roots,
    denoFlags: cfg.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${cfg.cpuProf}`] : [],
  });
  try {
    await handshake(rpc, cfg.roots);
    await rpc.request("tools/list", {});
    const start = await startSamples(rpc, cfg);
    log(`start_workflow ×${cfg.samples}`);
    const [firstLongStartMs, firstLong] = await timed(() =>
      callTool(rpc, "start_workflow", { workflowId: LONG_ID })
    );
    await warmUp(rpc, step(firstLong, "start long (warm-up)"), cfg.longWarmup);
    log(`warm-up: ${cfg.longWarmup} advances, replays and rehydrates on a throwaway run`);
    const measured = await measuredRun(rpc, cfg, log);
    const ctl = new Run(
      rpc,
      step(await callTool(rpc, "start_workflow", { workflowId: LONG_ID }), "ctl"),
      [],
    );
    while (ctl.prior < cfg.levels[0]!) await ctl.advance();
    const control = await measureLevel(ctl, cfg.samples);
    log(`control: a new run measured at ${cfg.levels[0]} prior advances`);
    const replayMismatches = [...measured.levels, control].reduce(
      (n, l) => n + l.replayMismatches,
      0,
    );
    return { start, firstLongStartMs, control, replayMismatches, ...measured };
  } catch (error) {
    throw withStderr(error, rpc);
  } finally {
    await rpc.close();
  }
}
