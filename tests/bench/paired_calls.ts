/**
 * Advance and replay over stdio beside the floor's echo call, warm and interleaved: both
 * servers take `--warmup` calls first, then each sample is one echo call, one advance and one
 * replay of that advance, in turn, so the machine's drift and each process's JIT state weigh on
 * both sides alike (the full bench measures its floor before waymark's warm-up).
 *
 *   deno run -A tests/bench/paired_calls.ts [--samples 300] [--warmup 500] [--steps 3000]
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { advanceArgs, callTool, handshake, spawnSubject, step, timed } from "./session.ts";
import { LONG_ID, longWorkflow, stats } from "./common.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    samples: { type: "string", default: "300" },
    warmup: { type: "string", default: "500" },
    steps: { type: "string", default: "3000" },
  },
});
const [samples, warmup, steps] = [values.samples, values.warmup, values.steps].map(Number);

const tmp = await Deno.makeTempDir({ prefix: "waymark-paired-" });
const workspace = join(tmp, "workspace");
await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
await Deno.writeTextFile(
  join(workspace, ".waymark", "workflows", "bench_long.json"),
  longWorkflow(steps!),
);
const echo = spawnSubject({ subject: "echo", home: "", cwd: workspace, roots: false });
const waymark = spawnSubject({
  subject: "main_ts",
  home: join(tmp, "home"),
  cwd: workspace,
  roots: false,
});
try {
  for (const rpc of [echo, waymark]) {
    await handshake(rpc, false);
    await rpc.request("tools/list", {});
  }
  let at = step(await callTool(waymark, "start_workflow", { workflowId: LONG_ID }), "start");
  const text = { text: "Done s001." };
  const advance = async () => {
    at = step(await callTool(waymark, "continue_workflow", advanceArgs(at)), "advance");
  };
  for (let i = 0; i < warmup!; i++) {
    await callTool(echo, "echo", text);
    await advance();
  }
  const [floor, advances, replays]: number[][] = [[], [], []];
  for (let i = 0; i < samples!; i++) {
    floor.push((await timed(() => callTool(echo, "echo", text)))[0]);
    const before = at;
    advances.push((await timed(advance))[0]);
    replays.push(
      (await timed(() => callTool(waymark, "continue_workflow", advanceArgs(before))))[0],
    );
  }
  const [f, a, r] = [floor, advances, replays].map((s) => stats(s).p50);
  const row = (name: string, ms: number) =>
    `${name} p50 ${ms.toFixed(3)} ms (${(ms / f!).toFixed(2)}× the floor call)`;
  console.log(`floor: echo call p50 ${f!.toFixed(3)} ms`);
  console.log(row("advance", a!));
  console.log(row("replay", r!));
} finally {
  await echo.close();
  await waymark.close();
  await Deno.remove(tmp, { recursive: true });
}
