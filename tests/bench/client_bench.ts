/**
 * What a client pays, beside what the raw rows measure: the same calls through the v1
 * TypeScript SDK client (`@modelcontextprotocol/sdk`, the client most hosts embed), which
 * compiles every tool's `outputSchema` when it lists tools and validates every result against
 * it, with its own floor (the SDK echo server driven by the same client); and the bytes a client
 * receives: `tools/list` of the default profile and each kind of answer on a 300-step workflow.
 * @module
 */
import { join } from "node:path";
import { Client } from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
import { StdioClientTransport } from "npm:@modelcontextprotocol/sdk@1.32.2/client/stdio.js";
import { type Stats, stats } from "./common.ts";
import { plainWorkflow } from "../helpers/workflows.ts";
import { BenchFailure, callTool, handshake, ROOT, spawnSubject, timed } from "./session.ts";

/** The depth the bytes and the v1 client's deeper rows are measured at (docs/performance.md). */
export const DEPTH = 300;
/** Advances, replays and rehydrates on a throwaway run before the v1 client's are measured. */
const WARMUP = 30;
/** The generated workflow those runs walk. */
export const CLIENT_ID = "project.bench_client";

/** What the client scenario measured. */
export interface ClientResult {
  /** v1 client: spawn → connected → `tools/list` answered and its schemas compiled (ms). */
  cold: { floor: number[]; waymark: number[] };
  /** v1 client: the echo floor's call, one beside each call measured (ms). */
  floorCall: number[];
  /** v1 client: advance latency by the prior advances its samples start from (10, 100, 300 or more). */
  advance: Record<string, number[]>;
  /** v1 client: replays of the last advance, after the last level. */
  replay: number[];
  /** v1 client: rehydrates after the last level. */
  rehydrate: number[];
  /** Bytes of each answer's JSON-RPC line, by what was asked (median where sampled). */
  bytes: Record<string, number>;
}

type Tool = { structuredContent?: Record<string, unknown>; isError?: boolean };
type At = { stateToken: string; ackToken?: string; pending: { stepId: string } | null };

/** A v1 SDK client on a spawned subject: waymark's `main.ts serve`, or the echo floor. */
async function v1Client(
  subject: "echo" | "main_ts",
  at: { home: string; cwd: string },
): Promise<Client> {
  const args = subject === "echo"
    ? ["run", "-A", "--quiet", join(ROOT, "tests", "bench", "echo_server.ts")]
    : ["run", "-A", "--quiet", join(ROOT, "main.ts"), "serve", "--home", at.home];
  const client = new Client({ name: "waymark-bench-v1", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args,
      cwd: at.cwd,
      env: { ...Deno.env.toObject(), NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stderr: "pipe",
    }),
  );
  return client;
}

async function v1Call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args }) as Tool;
  if (result.isError || !result.structuredContent) {
    throw new BenchFailure(
      `${name} through the v1 client: ${JSON.stringify(result).slice(0, 300)}`,
    );
  }
  return result.structuredContent;
}

const ack = (at: At) => ({
  stateToken: at.stateToken,
  ackToken: at.ackToken,
  output: { notesMarkdown: `Done ${at.pending?.stepId}.` },
});

/** Cold starts through the v1 client, the floor's and waymark's taken in turns. */
async function v1ColdStarts(rounds: number, at: { home: string; cwd: string }) {
  const one = async (subject: "echo" | "main_ts") => {
    const [ms, client] = await timed(async () => {
      const client = await v1Client(subject, at);
      await client.listTools();
      return client;
    });
    await client.close();
    return ms;
  };
  await one("echo");
  await one("main_ts");
  const cold = { floor: [] as number[], waymark: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    cold.floor.push(await one("echo"));
    cold.waymark.push(await one("main_ts"));
  }
  return cold;
}

/**
 * Advances at each depth, then replays and rehydrates at the last, through one v1 client; each
 * call taken in turn with an echo call to the floor through another, so a machine that gets
 * busier or quieter shifts both alike.
 */
async function v1Calls(samples: number, at: { home: string; cwd: string }) {
  const client = await v1Client("main_ts", at);
  const echo = await v1Client("echo", at);
  try {
    await client.listTools();
    await echo.listTools();
    const floor: number[] = [];
    const paired = async (args: Record<string, unknown>) => {
      floor.push((await timed(() => v1Call(echo, "echo", { text: "Done s001." })))[0]);
      return await timed(() => v1Call(client, "continue_workflow", args));
    };
    // a throwaway run first, so the measured one meets a warm server and client
    let step = await v1Call(client, "start_workflow", { workflowId: CLIENT_ID }) as At;
    for (let i = 0; i < WARMUP; i++) {
      const args = ack(step);
      step = await v1Call(client, "continue_workflow", args) as At;
      await v1Call(client, "continue_workflow", args);
      await v1Call(client, "continue_workflow", { stateToken: step.stateToken });
      await v1Call(echo, "echo", { text: "Done s001." });
    }
    step = await v1Call(client, "start_workflow", { workflowId: CLIENT_ID }) as At;
    let prior = 0;
    const advance: Record<string, number[]> = {};
    let last: Record<string, unknown> = {};
    for (const depth of [10, 100, DEPTH]) {
      while (prior < depth) {
        step = await v1Call(client, "continue_workflow", ack(step)) as At;
        prior++;
      }
      const at: number[] = (advance[prior] = []); // by the prior advances its samples start from
      for (let i = 0; i < samples; i++) {
        last = ack(step);
        const [ms, next] = await paired(last);
        at.push(ms);
        step = next as At;
      }
      prior += samples;
    }
    const replay: number[] = [];
    const rehydrate: number[] = [];
    for (let i = 0; i < samples; i++) replay.push((await paired(last))[0]);
    for (let i = 0; i < samples; i++) {
      rehydrate.push((await paired({ stateToken: step.stateToken }))[0]);
    }
    return { advance, replay, rehydrate, floorCall: floor };
  } finally {
    await client.close();
    await echo.close();
  }
}

/** The bytes of each kind of answer, read off the wire by the raw client. */
async function answerBytes(samples: number, at: { home: string; cwd: string }) {
  const rpc = spawnSubject({ subject: "main_ts", home: at.home, cwd: at.cwd, roots: true });
  try {
    await handshake(rpc, true);
    await rpc.request("tools/list", {});
    const bytes: Record<string, number> = { "tools/list": rpc.lastResponseBytes };
    let step = (await callTool(rpc, "start_workflow", { workflowId: CLIENT_ID }))
      .structuredContent as unknown as At;
    bytes.start_workflow = rpc.lastResponseBytes;
    for (let i = 0; i < DEPTH; i++) {
      step = (await callTool(rpc, "continue_workflow", ack(step))).structuredContent as never;
    }
    const sizes = { advance: [] as number[], replay: [] as number[], rehydrate: [] as number[] };
    for (let i = 0; i < samples; i++) {
      const args = ack(step);
      step = (await callTool(rpc, "continue_workflow", args)).structuredContent as never;
      sizes.advance.push(rpc.lastResponseBytes);
      await callTool(rpc, "continue_workflow", args);
      sizes.replay.push(rpc.lastResponseBytes);
      await callTool(rpc, "continue_workflow", { stateToken: step.stateToken });
      sizes.rehydrate.push(rpc.lastResponseBytes);
    }
    for (const [kind, s] of Object.entries(sizes)) bytes[kind] = stats(s).p50;
    return bytes;
  } finally {
    await rpc.close();
  }
}

/** Runs the client scenario in `dirs.workspace` (the generated workflow is written there). */
export async function clientBench(
  options: { home: string; workspace: string; rounds: number; samples: number },
  log: (line: string) => void,
): Promise<ClientResult> {
  const file = join(options.workspace, ".waymark", "workflows", "bench_client.json");
  await Deno.writeTextFile(file, plainWorkflow(CLIENT_ID, DEPTH + 4 * options.samples + 10));
  const at = { home: options.home, cwd: options.workspace };
  const bytes = await answerBytes(Math.min(options.samples, 20), at);
  log(`client: bytes of tools/list and of each answer at ${DEPTH} prior advances`);
  const cold = await v1ColdStarts(options.rounds, at);
  log(`client: ${options.rounds} rounds of v1-client cold starts, floor and waymark in turns`);
  const calls = await v1Calls(options.samples, at);
  log(`client: v1-client calls at 10, 100 and ${DEPTH} prior advances, each beside a floor call`);
  return { cold, bytes, ...calls };
}

/** The v1 client's medians. */
export function clientStats(r: ClientResult): Record<string, Stats> {
  return {
    "v1: floor: cold start (SDK echo)": stats(r.cold.floor),
    "v1: floor: echo call": stats(r.floorCall),
    "v1: cold start: main.ts serve": stats(r.cold.waymark),
    ...Object.fromEntries(
      Object.entries(r.advance).map(([d, s]) => [`v1: advance @${d}`, stats(s)]),
    ),
    "v1: replay (last level)": stats(r.replay),
    "v1: rehydrate (last level)": stats(r.rehydrate),
  };
}
