/**
 * The `http` scenario of `deno task bench`: the team service's advance beside the same advance
 * over stdio, in the same run, on the same kind of store (the bench's `--db`). Over stdio: a
 * spawned `serve` spoken to in raw JSON-RPC. Over HTTP: `serve --http --stateless`,
 * authenticated with a personal access token (as a team runs it), spoken to in raw JSON-RPC
 * POSTs on one keep-alive connection per agent (no client SDK on the timed path). Then eight
 * agents, each on its own connection, advance their own runs on that one replica for a window:
 * advances per second, p50 and p99, and the CPU time the replica (and PostgreSQL, on
 * `--db postgres`) and the agents' own client spent per advance, from `/proc`, so capacity per
 * core, and what two cores would make were they the bench's alone, can be read off.
 * @module
 */
import { join } from "node:path";
import { LONG_ID, r3, type Stats, stats } from "./common.ts";
import { advanceArgs, callTool, handshake, spawnSubject, type Step, step } from "./session.ts";
import { startHttpServer } from "../helpers/http_server.ts";
import { personalToken } from "../helpers/auth_service.ts";

/** What the scenario measured. */
export interface HttpResult {
  /** Advance over stdio, ms. */
  stdio: Stats;
  /** Advance over HTTP on one keep-alive connection, ms. */
  http: Stats;
  /** Eight (`agents`) concurrent agents on one replica. */
  load: {
    agents: number;
    seconds: number;
    advances: number;
    perSecond: number;
    latency: Stats;
    /** CPU ms the replica spent per advance. */
    replicaCpuMs: number;
    /** CPU ms PostgreSQL spent per advance (every one of its processes), or null on libSQL. */
    postgresCpuMs: number | null;
    /** CPU ms the agents' own HTTP client (this process) spent per advance. */
    clientCpuMs: number;
  };
  /** CPU ms the stdio server spent per advance (the single-agent samples). */
  stdioCpuMs: number;
  /** CPU ms the replica spent per advance of the single agent. */
  httpCpuMs: number;
}

const RESOURCE = "https://waymark.bench/mcp";
const SCOPE = "waymark";
/** `sysconf(_SC_CLK_TCK)` on Linux. */
const TICKS_PER_S = 100;

/** CPU time (ms) of `pids`, and of their reaped children, from `/proc/<pid>/stat`. */
export function cpuMs(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime, stime, cutime, cstime: fields 14-17 of stat(5), 12-15 after the name
      ticks += [11, 12, 13, 14].reduce((n, i) => n + Number(fields[i]), 0);
    } catch { /* gone */ }
  }
  return ticks * (1000 / TICKS_PER_S);
}

/** The postmaster of the server in `pgDir` and its children (backends, workers). */
export function postgresPids(pgDir: string): number[] {
  const master = Number(
    Deno.readTextFileSync(join(pgDir, "data", "postmaster.pid")).split("\n")[0],
  );
  const children: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === master) children.push(Number(entry.name));
    } catch { /* gone */ }
  }
  return [master, ...children];
}

/** One agent's connection: raw JSON-RPC tool calls POSTed on one keep-alive HTTP connection. */
class HttpAgent {
  readonly #client = Deno.createHttpClient({ poolMaxIdlePerHost: 1 });
  #id = 0;
  constructor(readonly url: URL, readonly token: string) {}

  async call(name: string, args: Record<string, unknown>): Promise<Step> {
    const response = await fetch(this.url, {
      method: "POST",
      client: this.#client,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        authorization: `Bearer ${this.token}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: ++this.#id,
        method: "tools/call",
        params: { name, arguments: args },
      }),
    });
    const text = await response.text();
    const data = response.headers.get("content-type")?.startsWith("text/event-stream")
      ? text.split("\n").find((l) => l.startsWith("data: "))?.slice(6) ?? ""
      : text;
    const result = JSON.parse(data).result;
    if (!result || result.isError) {
      throw new Error(`${name} over HTTP failed (${response.status}): ${text.slice(0, 300)}`);
    }
    return step(result, name);
  }

  close(): void {
    this.#client.close();
  }
}

async function advances(
  agent: { call(name: string, args: Record<string, unknown>): Promise<Step> },
  at: { n?: number; until?: number },
): Promise<number[]> {
  let tip = await agent.call("start_workflow", { workflowId: LONG_ID });
  const samples: number[] = [];
  while (at.n !== undefined ? samples.length < at.n : performance.now() < at.until!) {
    const t0 = performance.now();
    tip = await agent.call("continue_workflow", advanceArgs(tip));
    samples.push(performance.now() - t0);
  }
  return samples;
}

type Agent = { call(name: string, args: Record<string, unknown>): Promise<Step> };

/**
 * One advance over each transport in turn, `samples` times, so both see the same moments of a
 * shared machine's load; and the CPU each server spent on its advances.
 */
async function interleaved(
  stdio: { agent: Agent; pid: number },
  http: { agent: Agent; pid: number },
  at: { samples: number; warmup: number },
): Promise<{ stdio: number[]; http: number[]; stdioCpuMs: number; httpCpuMs: number }> {
  await advances(stdio.agent, { n: at.warmup });
  await advances(http.agent, { n: at.warmup });
  const tips = [
    await stdio.agent.call("start_workflow", { workflowId: LONG_ID }),
    await http.agent.call("start_workflow", { workflowId: LONG_ID }),
  ];
  const out = { stdio: [] as number[], http: [] as number[], stdioCpuMs: 0, httpCpuMs: 0 };
  for (let i = 0; i < at.samples; i++) {
    for (const [k, side] of [["stdio", stdio], ["http", http]] as const) {
      const j = k === "stdio" ? 0 : 1;
      const cpu0 = cpuMs([side.pid]);
      const t0 = performance.now();
      tips[j] = await side.agent.call("continue_workflow", advanceArgs(tips[j]!));
      out[k].push(performance.now() - t0);
      out[k === "stdio" ? "stdioCpuMs" : "httpCpuMs"] += cpuMs([side.pid]) - cpu0;
    }
  }
  out.stdioCpuMs /= at.samples;
  out.httpCpuMs /= at.samples;
  return out;
}

/** Runs the scenario: `pgDir` is the bench's PostgreSQL server, when on `--db postgres`. */
export async function httpBench(
  dirs: { homes: string; workspace: string },
  at: {
    samples: number;
    warmup: number;
    agents: number;
    seconds: number;
    pgDir?: string;
    /** Where the replica writes a V8 CPU profile, if anywhere. */
    cpuProf?: string;
    log: (line: string) => void;
  },
): Promise<HttpResult> {
  const rpc = spawnSubject({
    subject: "main_ts",
    home: join(dirs.homes, "http-stdio"),
    cwd: dirs.workspace,
    roots: true,
  });
  await handshake(rpc, true);
  const stdioAgent = {
    call: async (name: string, args: Record<string, unknown>) =>
      step(await callTool(rpc, name, args), name),
  };
  const home = join(dirs.homes, "http-service");
  const db = Deno.env.get("WAYMARK_DB_URL");
  const server = await startHttpServer(home, {
    cwd: dirs.workspace,
    denoArgs: at.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${at.cpuProf}`] : [],
    args: [
      "--stateless",
      "--auth-resource",
      RESOURCE,
      "--auth-scope",
      SCOPE,
      "--personal-tokens",
    ],
  });
  const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  const token = await personalToken(home, {
    name: "bench",
    scope: SCOPE,
    extra: db ? ["--db", db] : [],
  });
  const agents = Array.from({ length: at.agents }, () => new HttpAgent(url, token));
  try {
    const one = await interleaved(
      { agent: stdioAgent, pid: rpc.pid },
      { agent: agents[0]!, pid: server.pid },
      at,
    );
    await rpc.close();
    const http = stats(one.http);
    at.log(`http: advance p50 ${http.p50.toFixed(2)} ms; ${at.agents} agents for ${at.seconds} s`);
    await Promise.all(agents.map((a) => advances(a, { n: 5 })));
    const pgPids = at.pgDir ? postgresPids(at.pgDir) : [];
    const cpu0 = { replica: cpuMs([server.pid]), pg: cpuMs(pgPids), client: cpuMs([Deno.pid]) };
    const t0 = performance.now();
    const until = t0 + at.seconds * 1000;
    const all = (await Promise.all(agents.map((a) => advances(a, { until })))).flat();
    const seconds = (performance.now() - t0) / 1000;
    const replicaCpuMs = (cpuMs([server.pid]) - cpu0.replica) / all.length;
    const postgresCpuMs = at.pgDir ? (cpuMs(pgPids) - cpu0.pg) / all.length : null;
    const clientCpuMs = (cpuMs([Deno.pid]) - cpu0.client) / all.length;
    return {
      stdio: stats(one.stdio),
      http,
      stdioCpuMs: r3(one.stdioCpuMs),
      httpCpuMs: r3(one.httpCpuMs),
      load: {
        agents: at.agents,
        seconds: r3(seconds),
        advances: all.length,
        perSecond: r3(all.length / seconds),
        latency: stats(all),
        replicaCpuMs: r3(replicaCpuMs),
        postgresCpuMs: postgresCpuMs === null ? null : r3(postgresCpuMs),
        clientCpuMs: r3(clientCpuMs),
      },
    };
  } finally {
    for (const a of agents) a.close();
    await rpc.close();
    await server.stop();
  }
}

/** The scenario's lines for the report. */
export function httpReport(r: HttpResult, load: readonly number[]): string {
  const l = r.load;
  const pgCpu = l.postgresCpuMs === null ? "" : `, PostgreSQL ${l.postgresCpuMs.toFixed(2)} ms`;
  const service = l.replicaCpuMs + (l.postgresCpuMs ?? 0);
  return [
    `team service over HTTP (authenticated --stateless, one keep-alive connection; load ${
      load.map((x) => x.toFixed(1)).join(" ")
    }):`,
    `  advance p50: stdio ${r.stdio.p50.toFixed(2)} ms, HTTP ${r.http.p50.toFixed(2)} ms (${
      (r.http.p50 / r.stdio.p50).toFixed(2)
    }× stdio); p99 ${r.stdio.p99.toFixed(2)} / ${r.http.p99.toFixed(2)} ms`,
    `  ${l.agents} agents, one replica, ${l.seconds.toFixed(1)} s: ${l.advances} advances, ${
      l.perSecond.toFixed(0)
    }/s, p50 ${l.latency.p50.toFixed(2)} ms, p99 ${l.latency.p99.toFixed(2)} ms`,
    `  CPU per advance, one agent: stdio server ${r.stdioCpuMs.toFixed(2)} ms, replica ${
      r.httpCpuMs.toFixed(2)
    } ms; ${l.agents} agents: replica ${l.replicaCpuMs.toFixed(2)} ms${pgCpu} (≈ ${
      (1000 / service).toFixed(0)
    } advances/s per core), the agents' client ${l.clientCpuMs.toFixed(2)} ms`,
    `  so two cores given to it alone would make about ${
      (2000 / (service + l.clientCpuMs)).toFixed(0)
    } advances/s (2000 / ${(service + l.clientCpuMs).toFixed(2)} ms, at this run's load)`,
  ].join("\n");
}
