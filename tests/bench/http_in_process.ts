/**
 * The team service's HTTP app without a network: the app `serve --http --stateless` serves
 * (personal tokens, the MCP SDK per request, the tool, the store on a throwaway PostgreSQL
 * server), its `fetch` called directly by concurrent agents in this process. It prints calls per
 * second and the CPU this process and PostgreSQL spent per call, so the app's own cost can be
 * told from the network's, the relay's and the agents' (`http_bench.ts` measures them all
 * together). `--replay` sends every agent's first acknowledgement again and again: a replay
 * runs one statement, so what it costs is mostly the HTTP app itself.
 *
 *   deno run -A tests/bench/http_in_process.ts [--agents 8] [--seconds 6] [--replay]
 *     [--steps 10600]     the generated workflow's length
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openWaymark } from "../../mod.ts";
import { resolveAuthSettings, sqlPersonalTokens } from "../../store/mod.ts";
import { createAuthGate } from "../../web/auth/mod.ts";
import { createMcpHttpApp, createOps, storeProbe } from "../../web/mcp_http.ts";
import { LONG_ID, longWorkflow, stats } from "./common.ts";
import { advanceArgs, type Step, step } from "./session.ts";
import { startBenchPostgres } from "./postgres_db.ts";
import { cpuMs, postgresPids } from "./http_bench.ts";
import { personalToken } from "../helpers/auth_service.ts";
import { toolCallRequest } from "../helpers/tool_call_request.ts";

const HOST = "127.0.0.1:8080";
const RESOURCE = "https://waymark.bench/mcp";
const SCOPE = "waymark";

type Call = (name: string, args: Record<string, unknown>) => Promise<Step>;

/** A workspace with the generated workflow, in a git checkout (every call reads its HEAD). */
async function workspace(dir: string, steps: number): Promise<string> {
  const ws = join(dir, "workspace");
  await Deno.mkdir(join(ws, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(
    join(ws, ".waymark", "workflows", "bench_long.json"),
    longWorkflow(steps),
  );
  await Deno.mkdir(join(ws, ".git", "refs", "heads"), { recursive: true });
  await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
  await Deno.writeTextFile(join(ws, ".git", "refs", "heads", "main"), `${"5".repeat(40)}\n`);
  return ws;
}

/** The app as `serve --http --stateless --personal-tokens` builds it, and a way to call it. */
async function service(home: string, url: string): Promise<{ call: Call; close(): Promise<void> }> {
  const token = await personalToken(home, { name: "bench", scope: SCOPE, extra: ["--db", url] });
  const waymark = await openWaymark({ home, dbUrl: url });
  const auth = resolveAuthSettings(undefined, {
    resource: RESOURCE,
    scopes: [SCOPE],
    personalTokens: true,
  });
  if (!auth.ok) throw new Error(auth.message);
  const gate = createAuthGate({
    settings: auth.settings!,
    personalTokens: sqlPersonalTokens(waymark.store.db, waymark.deps),
  });
  const ops = createOps(storeProbe(waymark.store as Parameters<typeof storeProbe>[0]));
  const { app } = createMcpHttpApp(
    (taskOwner) =>
      waymark.mcpServer({
        taskOwner,
        commandsNeedRoots: true,
        stateless: true,
        onToolCall: ops.toolCall,
      }),
    { port: () => 8080, stateless: true, auth: gate, ops },
  );
  let id = 0;
  const call: Call = async (name, args) => {
    const response = await app.fetch(toolCallRequest({ host: HOST, token, id: ++id }, name, args));
    const text = await response.text();
    const result = JSON.parse(text).result;
    if (!result || result.isError) throw new Error(`${name} failed: ${text.slice(0, 300)}`);
    return step(result, name);
  };
  return { call, close: () => waymark.close() };
}

/** One agent: starts a run, then advances it (or replays its first advance) until `until`. */
async function agent(call: Call, at: { until: number; replay: boolean }): Promise<number[]> {
  let tip = await call("start_workflow", { workflowId: LONG_ID });
  const first = advanceArgs(tip);
  const samples: number[] = [];
  while (performance.now() < at.until) {
    const t0 = performance.now();
    if (at.replay && samples.length > 0) await call("continue_workflow", first);
    else tip = await call("continue_workflow", samples.length === 0 ? first : advanceArgs(tip));
    samples.push(performance.now() - t0);
  }
  return samples;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      agents: { type: "string", default: "8" },
      seconds: { type: "string", default: "6" },
      steps: { type: "string", default: "10600" },
      replay: { type: "boolean", default: false },
    },
  });
  const agents = Number(values.agents);
  const tmp = await Deno.makeTempDir({ prefix: "waymark-http-ip-" });
  const pg = await startBenchPostgres();
  try {
    Deno.chdir(await workspace(tmp, Number(values.steps)));
    const app = await service(join(tmp, "home"), await pg.createDatabase());
    const run = (until: number) =>
      Promise.all(
        Array.from({ length: agents }, () => agent(app.call, { until, replay: values.replay })),
      );
    await run(performance.now() + 1500); // warm-up: compiled queries, the pinned snapshot
    const pids = postgresPids(pg.dir);
    const cpu0 = { self: cpuMs([Deno.pid]), pg: cpuMs(pids) };
    const t0 = performance.now();
    const all = (await run(t0 + Number(values.seconds) * 1000)).flat();
    const seconds = (performance.now() - t0) / 1000;
    const self = (cpuMs([Deno.pid]) - cpu0.self) / all.length;
    const server = (cpuMs(pids) - cpu0.pg) / all.length;
    const s = stats(all);
    const load = Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
    console.log(
      `${values.replay ? "replay" : "advance"}, ${agents} agents in process: ${all.length} in ` +
        `${seconds.toFixed(1)} s, ${(all.length / seconds).toFixed(0)}/s, p50 ${
          s.p50.toFixed(2)
        } ms, p99 ${s.p99.toFixed(2)} ms; CPU per call: app ${self.toFixed(2)} ms, ` +
        `PostgreSQL ${server.toFixed(2)} ms (load ${load})`,
    );
    await app.close();
  } finally {
    await pg.stop();
    await Deno.remove(tmp, { recursive: true });
  }
}
