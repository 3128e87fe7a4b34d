/**
 * The team service's throughput: advances per second, and each advance's latency (p50, p99) as
 * an agent sees it, with one, two and three `serve --http --stateless` replicas on one
 * PostgreSQL (the bench's server, `postgres_db.ts`) behind the tests' round-robin proxy, under
 * fifty concurrent agents authenticated with personal access tokens. Each agent starts a run
 * of a long generated workflow and acknowledges step after step through a real MCP client
 * (v2 SDK) for the measured window; the agents run in this process.
 *
 *   deno task bench:replicas [--agents 50] [--seconds 20] [--replicas 1,2,3] [--out FILE]
 *
 * Prints a table and, with `--out`, writes the JSON. All replicas, the proxy, PostgreSQL and
 * the agents share this machine's cores, so the figures say what one machine does; replicas on
 * their own machines add their cores.
 * @module
 */
import { parseArgs } from "node:util";
import { r3, stats } from "./common.ts";
import { startBenchPostgres } from "./postgres_db.ts";
import { type ReplicaClient, replicaClient, startReplicas } from "../helpers/replicas.ts";
import { ok } from "../helpers/server.ts";

const WORKFLOW = { id: "project.bench_replicas", steps: 5_000 };

function log(line: string): void {
  console.error(`[bench:replicas] ${line}`);
}

/** One level's figures. */
interface Level {
  replicas: number;
  agents: number;
  seconds: number;
  advances: number;
  perSecond: number;
  p50: number;
  p99: number;
  retries: number;
}

/** One agent: a run, advanced until `until`; the latency of each advance. */
async function agent(client: ReplicaClient, until: { end: number }): Promise<number[]> {
  let tip = ok(await client.call("start_workflow", { workflowId: WORKFLOW.id }));
  const latencies: number[] = [];
  while (performance.now() < until.end && !tip.isComplete) {
    const t0 = performance.now();
    tip = ok(
      await client.call("continue_workflow", {
        stateToken: tip.stateToken,
        ackToken: tip.ackToken,
        output: { notesMarkdown: `did ${tip.pending.stepId}` },
      }),
    );
    latencies.push(performance.now() - t0);
  }
  return latencies;
}

async function level(
  pg: Awaited<ReturnType<typeof startBenchPostgres>>,
  at: { replicas: number; agents: number; seconds: number },
): Promise<Level> {
  const set = await startReplicas(pg, { count: at.replicas, workflow: WORKFLOW });
  const clients: ReplicaClient[] = [];
  try {
    const tokens = await Promise.all(["bench-a", "bench-b", "bench-c"].map((n) => set.pat(n)));
    for (let i = 0; i < at.agents; i++) {
      // no call is given up while the window lasts: a queue is measured, not retried
      clients.push(replicaClient(set.url, tokens[i % tokens.length]!, { tryTimeoutMs: 300_000 }));
    }
    // a warm-up: every agent's connection and first start, before the window opens
    await Promise.all(clients.map((c) => c.call("list_workflows", {})));
    const until = { end: performance.now() + at.seconds * 1000 };
    const started = performance.now();
    const samples = (await Promise.all(clients.map((c) => agent(c, until)))).flat();
    const elapsed = (performance.now() - started) / 1000;
    const s = stats(samples);
    const why = new Map<string, number>();
    for (const c of clients) for (const [k, n] of c.reasons) why.set(k, (why.get(k) ?? 0) + n);
    if (why.size > 0) log(`calls sent again: ${JSON.stringify(Object.fromEntries(why))}`);
    return {
      ...at,
      advances: samples.length,
      perSecond: r3(samples.length / elapsed),
      p50: r3(s.p50),
      p99: r3(s.p99),
      retries: clients.reduce((n, c) => n + c.retries, 0),
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await set.stop();
  }
}

function table(levels: readonly Level[]): string {
  const head = "replicas  agents  advances  advances/s  p50 ms  p99 ms  retries";
  const rows = levels.map((l) =>
    [
      String(l.replicas).padStart(8),
      String(l.agents).padStart(6),
      String(l.advances).padStart(8),
      l.perSecond.toFixed(1).padStart(10),
      l.p50.toFixed(1).padStart(6),
      l.p99.toFixed(1).padStart(6),
      String(l.retries).padStart(7),
    ].join("  ")
  );
  return [head, ...rows].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      agents: { type: "string", default: "50" },
      seconds: { type: "string", default: "20" },
      replicas: { type: "string", default: "1,2,3" },
      out: { type: "string" },
    },
  });
  const agents = Number(values.agents);
  const seconds = Number(values.seconds);
  const counts = values.replicas.split(",").map(Number);
  const pg = await startBenchPostgres();
  const levels: Level[] = [];
  try {
    for (const replicas of counts) {
      log(`${replicas} replica(s), ${agents} agents, ${seconds} s`);
      levels.push(await level(pg, { replicas, agents, seconds }));
    }
  } finally {
    await pg.stop();
  }
  console.log(table(levels));
  const json = JSON.stringify({ bench: "replicas", cores: navigator.hardwareConcurrency, levels });
  console.log(json);
  if (values.out) await Deno.writeTextFile(values.out, `${json}\n`);
}
