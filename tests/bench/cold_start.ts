/**
 * Cold starts and the floor. Each subject (the SDK echo server, `deno task start`,
 * `deno run main.ts serve`, the single-file build) is spawned, handshaken and asked for
 * `tools/list`, in rounds that take the subjects in turn, so a machine that gets busier or
 * quieter during the run shifts them all alike. The floor's call latency is measured on one
 * long-lived echo server, as waymark's calls are on one long-lived session.
 * @module
 */
import { join } from "node:path";
import { StdioRpc } from "./stdio_rpc.ts";
import { type Stats, stats } from "./common.ts";
import {
  BenchFailure,
  callTool,
  handshake,
  type SpawnSpec,
  spawnSubject,
  type Subject,
  timed,
  withStderr,
} from "./session.ts";

/** One cold start: spawn → initialize answered → tools/list answered, in ms. */
export interface ColdSample {
  /** Spawn to the `initialize` response. */
  initializeMs: number;
  /** Spawn to the `tools/list` response. */
  toolsListMs: number;
}

/** Spawns, handshakes, lists tools, closes. */
export async function coldStart(spec: SpawnSpec): Promise<ColdSample> {
  const t0 = performance.now();
  const rpc = spawnSubject(spec);
  try {
    await handshake(rpc, spec.roots);
    const initializeMs = performance.now() - t0;
    const listed = await rpc.request("tools/list", {}) as { tools?: unknown[] };
    const toolsListMs = performance.now() - t0;
    if (!Array.isArray(listed.tools) || listed.tools.length === 0) {
      throw new BenchFailure(`${spec.subject}: tools/list returned no tools`);
    }
    return { initializeMs, toolsListMs };
  } catch (error) {
    throw withStderr(error, rpc);
  } finally {
    await rpc.close();
  }
}

/** Cold starts of several subjects, interleaved round by round. */
export async function coldStarts(
  specs: readonly SpawnSpec[],
  rounds: number,
  log: (line: string) => void,
): Promise<Map<Subject, ColdSample[]>> {
  const out = new Map<Subject, ColdSample[]>(specs.map((s) => [s.subject, []]));
  for (const spec of specs) await coldStart(spec); // warm Deno's caches; unmeasured
  for (let round = 0; round < rounds; round++) {
    for (const spec of specs) out.get(spec.subject)!.push(await coldStart(spec));
  }
  log(`cold starts: ${rounds} rounds of ${specs.map((s) => s.subject).join(", ")}`);
  return out;
}

/** The floor's call latency: `echo` on one long-lived SDK server. */
export async function floorCalls(
  cwd: string,
  options: { warmup: number; samples: number },
): Promise<Stats> {
  const rpc = spawnSubject({ subject: "echo", home: "", cwd, roots: false });
  try {
    await handshake(rpc, false);
    await rpc.request("tools/list", {});
    const args = { text: "Done s001." };
    for (let i = 0; i < options.warmup; i++) await callEcho(rpc, args);
    const samples: number[] = [];
    for (let i = 0; i < options.samples; i++) {
      samples.push((await timed(() => callEcho(rpc, args)))[0]);
    }
    return stats(samples);
  } catch (error) {
    throw withStderr(error, rpc);
  } finally {
    await rpc.close();
  }
}

async function callEcho(rpc: StdioRpc, args: { text: string }): Promise<void> {
  const result = await callTool(rpc, "echo", args);
  if ((result.structuredContent as { text?: string }).text !== args.text) {
    throw new BenchFailure("the echo floor did not echo");
  }
}

/** Builds the single-file bundle into `dir` (as `deno task bundle` does) and returns its path. */
export async function buildBundle(dir: string): Promise<string> {
  const { bundle } = await import("../../scripts/bundle.ts");
  const file = join(dir, "waymark.js");
  await bundle(file);
  return file;
}
