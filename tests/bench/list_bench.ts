/**
 * `list_workflows` with the bundled library (every workflow and routine in `workflows/`, no user
 * or project files): the call an agent makes to choose a workflow. Measured in one session after
 * a first, unmeasured call (the answer an agent gets while it works), and as the first call of
 * fresh sessions (which also compiles the library, or reads it from the cache the first session
 * wrote).
 *
 *   deno run -A tests/bench/list_bench.ts [--samples N] [--rounds N]   this row alone
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { type Stats, stats } from "./common.ts";
import { BenchFailure, callTool, handshake, spawnSubject, timed, withStderr } from "./session.ts";

async function listOnce(rpc: ReturnType<typeof spawnSubject>): Promise<number> {
  const [ms, result] = await timed(() => callTool(rpc, "list_workflows", {}));
  const listed = (result.structuredContent as { workflows: unknown[] }).workflows.length;
  if (listed !== BUNDLED_WORKFLOWS.length) {
    throw new BenchFailure(`list_workflows listed ${listed}, not the ${BUNDLED_WORKFLOWS.length}`);
  }
  return ms;
}

/** Warm calls in one session, and first calls of `rounds` fresh sessions, on one home. */
export async function listBench(
  options: { home: string; cwd: string; samples: number; rounds: number; log(line: string): void },
): Promise<{ warm: Stats; first: Stats }> {
  const spawn = () =>
    spawnSubject({ subject: "main_ts", home: options.home, cwd: options.cwd, roots: true });
  const first: number[] = [];
  for (let round = 0; round <= options.rounds; round++) {
    const rpc = spawn();
    try {
      await handshake(rpc, true);
      await rpc.request("tools/list", {});
      await rpc.request("resources/list", {}); // answered once start-up is over
      const ms = await listOnce(rpc);
      if (round > 0) first.push(ms); // round 0 creates the database and fills the cache
    } catch (error) {
      throw withStderr(error, rpc);
    } finally {
      await rpc.close();
    }
  }
  const rpc = spawn();
  const warm: number[] = [];
  try {
    await handshake(rpc, true);
    await listOnce(rpc);
    for (let i = 0; i < options.samples; i++) warm.push(await listOnce(rpc));
  } catch (error) {
    throw withStderr(error, rpc);
  } finally {
    await rpc.close();
  }
  options.log(
    `list_workflows: ${BUNDLED_WORKFLOWS.length} bundled files, ${options.samples} warm calls, ${options.rounds} fresh sessions`,
  );
  return { warm: stats(warm), first: stats(first) };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      samples: { type: "string", default: "200" },
      rounds: { type: "string", default: "9" },
    },
  });
  const tmp = await Deno.makeTempDir({ prefix: "waymark-list-bench-" });
  try {
    const cwd = join(tmp, "workspace");
    await Deno.mkdir(cwd);
    const result = await listBench({
      home: join(tmp, "home"),
      cwd,
      samples: Number(values.samples),
      rounds: Number(values.rounds),
      log: (line) => console.error(`[list] ${line}`),
    });
    for (const [name, s] of Object.entries(result)) {
      console.log(
        `list_workflows (bundled library, ${name})`.padEnd(44) +
          `p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  min ${s.min.toFixed(2)} ms`,
      );
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}
