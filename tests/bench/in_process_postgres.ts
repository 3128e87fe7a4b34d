/**
 * In-process profile of a long run on PostgreSQL: the calls `mcp_bench.ts` makes over stdio,
 * through the tool handlers without a transport, on a throwaway local server
 * (`postgres_db.ts`'s settings plus `pg_stat_statements`). Every statement `pg` sends is timed
 * on the client (a round trip: send, server, receive, parse) and, from `pg_stat_statements`,
 * on the server (planning and execution), so a call splits into client CPU, round trips and
 * server time.
 *
 *   deno run -A tests/bench/in_process_postgres.ts [--quick] [--samples N] [--levels 10,1000]
 *     [--setting name=value]…  more server settings (e.g. synchronous_commit=on)
 *     [--explain TEXT]         the custom and generic plans of the statement containing TEXT
 *     [--plans]                the statements whose generic plan runs slower than a custom one
 * @module
 */
// @ts-types="npm:@types/pg@8.23.1"
import pg from "npm:pg@8.23.1";
import net from "node:net";
import { parseArgs } from "node:util";
import { join } from "node:path";
import { openWaymark } from "../../mod.ts";
import { TOOLS } from "../../tools/mod.ts";
import { LONG_ID, longWorkflow, stats } from "./common.ts";
import { startBenchPostgres } from "./postgres_db.ts";
import { placeOf } from "../helpers/answers.ts";

type Op =
  | "advance"
  | "replay"
  | "rehydrate"
  | "start_workflow"
  | "checkpoint_workflow"
  | "resume_session"
  | "branch_steps";
type Tip = {
  session: { runId: string; nodeId: string };
  stateToken: string;
  ackToken?: string;
  checkpointToken: string;
  pending: { stepId: string } | null;
};

/** Client-side time of one statement text: executions and total ms. */
interface Timed {
  n: number;
  ms: number;
}

let timing = new Map<string, Timed>();
/** Socket writes: each batch of statements sent together is one (one round trip). */
let writes = 0;
/** The last parameters each statement text was sent with (for `--explain`). */
const lastValues = new Map<string, { text: string; values?: unknown[] }>();

/** Times every `query` any `pg` client makes and counts socket writes (before any binds them). */
function timeQueries(): void {
  const socket = net.Socket.prototype as unknown as { write: (...a: unknown[]) => boolean };
  const write = socket.write;
  socket.write = function (this: unknown, ...args: unknown[]) {
    writes++;
    return write.apply(this, args);
  };
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const raw = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text: string };
    const text = (typeof first === "string" ? first : first.text).replace(/\s+/g, " ");
    if (typeof first !== "string") {
      lastValues.set(text, first as { text: string; values?: unknown[] });
    }
    const t0 = performance.now();
    const done = () => {
      const t = timing.get(text) ?? { n: 0, ms: 0 };
      t.n++;
      t.ms += performance.now() - t0;
      timing.set(text, t);
    };
    const result = raw.apply(this, args) as Promise<unknown> | undefined;
    result?.then(done, done);
    return result;
  };
}

interface ServerStat {
  query: string;
  calls: number;
  plans: number;
  plan_ms: number;
  exec_ms: number;
}

async function serverStats(admin: pg.Client, reset: boolean): Promise<ServerStat[]> {
  if (reset) {
    await admin.query("SELECT pg_stat_statements_reset()");
    return [];
  }
  const rows = await admin.query<ServerStat>(
    `SELECT query, calls::int, plans::int, total_plan_time AS plan_ms,
       total_exec_time AS exec_ms FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC`,
  );
  return rows.rows;
}

/** CPU ms (user + system) of a process, from `/proc` (in clock ticks of 10 ms). */
function cpuMs(pid: number | "self"): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).replace(/^.*\) /, "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU ms of this process and of the server's backends serving waymark. */
async function cpuNow(admin: pg.Client): Promise<{ client: number; server: number }> {
  const pids = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE application_name = 'waymark'",
  );
  let server = 0;
  for (const { pid } of pids.rows) server += cpuMs(pid);
  return { client: cpuMs("self"), server };
}

interface Cpu {
  client: number;
  server: number;
}

function report(
  op: Op,
  prior: number,
  calls: number[],
  measured: { server: ServerStat[]; cpu: Cpu; writes: number },
): void {
  const { server, cpu } = measured;
  const n = calls.length;
  const sqlN = [...timing.values()].reduce((a, t) => a + t.n, 0) / n;
  const sqlMs = [...timing.values()].reduce((a, t) => a + t.ms, 0) / n;
  const srvMs = server.reduce((a, s) => a + s.exec_ms + s.plan_ms, 0) / n;
  const p50 = stats(calls).p50;
  console.log(
    `\n${op} @${prior}: p50 ${p50.toFixed(3)} ms; per call ${sqlN.toFixed(1)} statements in ` +
      `${(measured.writes / n).toFixed(1)} round trips, ` +
      `${sqlMs.toFixed(3)} ms waiting on them (server ${srvMs.toFixed(3)} ms), ` +
      `mean call ${(calls.reduce((a, b) => a + b, 0) / n).toFixed(3)} ms; CPU per call: ` +
      `waymark ${(cpu.client / n).toFixed(2)} ms, server backends ${
        (cpu.server / n).toFixed(2)
      } ms`,
  );
  const rows = [...timing.entries()].sort((a, b) => b[1].ms - a[1].ms);
  for (const [text, t] of rows) {
    const s = server.find((x) => norm(x.query) === norm(text));
    const srv = s ? `${((s.exec_ms + s.plan_ms) / s.calls).toFixed(3)}/${s.plans}p` : "-";
    console.log(
      `  ${(t.ms / t.n).toFixed(3)} ms ×${(t.n / n).toFixed(1)}  srv ${srv.padEnd(11)} ${
        text.slice(0, 100)
      }`,
    );
  }
}

/** Prints the custom and the generic plan of the last statement whose text contains `part`. */
async function explain(admin: pg.Client, part: string): Promise<void> {
  const key = [...lastValues.keys()].find((t) => t.includes(part));
  if (!key) return console.log(`no statement contains ${part}`);
  const { text, values } = lastValues.get(key)!;
  for (const mode of ["force_custom_plan", "force_generic_plan"]) {
    await admin.query(`SET plan_cache_mode = ${mode}`);
    const query = { name: `explain_${mode}`, text: `EXPLAIN (ANALYZE, COSTS OFF) ${text}`, values };
    const plan = await admin.query(query);
    console.log(`\n${mode}: ${text.slice(0, 100)}`);
    for (const row of plan.rows) console.log(`  ${row["QUERY PLAN"]}`);
  }
  await admin.query("RESET plan_cache_mode");
}

/** Execution ms of `text` under a plan cache mode (EXPLAIN ANALYZE, second run). */
async function planMs(admin: pg.Client, text: string, mode: string): Promise<number> {
  await admin.query(`SET plan_cache_mode = ${mode}`);
  const { text: original, values } = lastValues.get(text)!;
  const query = { text: `EXPLAIN (ANALYZE, FORMAT JSON) ${original}`, values };
  await admin.query(query);
  const [{ "QUERY PLAN": [plan] }] = (await admin.query(query)).rows;
  return plan["Execution Time"];
}

/** Statements whose generic plan (what a named statement may settle on) runs slower. */
async function comparePlans(admin: pg.Client): Promise<void> {
  console.log("\nstatements whose generic plan is slower than their custom plan:");
  for (const text of lastValues.keys()) {
    if (!/^\s*(select|with|insert|update|delete)/i.test(text) || /pg_stat/.test(text)) continue;
    const custom = await planMs(admin, text, "force_custom_plan").catch(() => NaN);
    const generic = await planMs(admin, text, "force_generic_plan").catch(() => NaN);
    if (generic > custom * 2 && generic > 0.1) {
      console.log(`  ${custom.toFixed(3)} → ${generic.toFixed(3)} ms  ${text.slice(0, 110)}`);
    }
  }
  await admin.query("RESET plan_cache_mode");
}

/** A statement's text without parameters and spacing, to match pg_stat_statements' form. */
function norm(text: string): string {
  return text.replace(/\$\d+/g, "?").replace(/\s+/g, "").toLowerCase();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      quick: { type: "boolean", default: false },
      samples: { type: "string" },
      levels: { type: "string" },
      setting: { type: "string", multiple: true },
      explain: { type: "string" },
      plans: { type: "boolean", default: false },
    },
  });
  const quick = values.quick === true;
  const samples = values.samples ? Number(values.samples) : quick ? 50 : 200;
  const levels = values.levels?.split(",").map(Number) ?? (quick ? [10, 1_000] : [10, 10_000]);
  timeQueries();
  const server = await startBenchPostgres([
    "shared_preload_libraries=pg_stat_statements",
    ...values.setting ?? [],
  ]);
  const tmp = await Deno.makeTempDir({ prefix: "waymark-inproc-pg-" });
  const dbUrl = await server.createDatabase();
  const admin = new pg.Client({ connectionString: dbUrl });
  await admin.connect();
  await admin.query("CREATE EXTENSION pg_stat_statements");
  const workspace = join(tmp, "workspace");
  await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
  const steps = levels[levels.length - 1]! + samples * 2 + 400;
  await Deno.writeTextFile(
    join(workspace, ".waymark", "workflows", "bench_long.json"),
    longWorkflow(steps),
  );
  const waymark = await openWaymark({ home: join(tmp, "home"), workspace, dbUrl });
  try {
    const tool = (name: string) => TOOLS.find((t) => t.name === name)!;
    const call = async (name: string, args: Record<string, unknown>) => {
      const parsed = tool(name).parse(args);
      if (!parsed.ok) throw new Error(parsed.error.message);
      const result = await parsed.value.run(waymark.deps);
      if (!result.ok) throw new Error(`${name}: ${result.error.code} ${result.error.message}`);
      result.value.text();
      return result.value.value as unknown as Tip;
    };
    const advanceArgs = (at: Tip) => ({
      stateToken: at.stateToken,
      ackToken: at.ackToken,
      output: { notesMarkdown: `Done ${at.pending!.stepId}.` },
    });
    /** Times `samples` calls made by `fn`, with their statements, round trips and CPU. */
    const measure = async (op: Op, level: number, fn: (i: number) => Promise<void>) => {
      await serverStats(admin, true);
      timing = new Map();
      const times: number[] = [];
      const before = await cpuNow(admin);
      writes = 0;
      for (let i = 0; i < samples; i++) {
        const t0 = performance.now();
        await fn(i);
        times.push(performance.now() - t0);
      }
      const sent = writes;
      const after = await cpuNow(admin);
      const cpu = { client: after.client - before.client, server: after.server - before.server };
      report(op, level, times, { server: await serverStats(admin, false), cpu, writes: sent });
    };
    for (let i = 0; i < 20; i++) {
      await call("start_workflow", { workflowId: "waymark.code_review" });
    }
    await measure("start_workflow", 0, async () => {
      await call("start_workflow", { workflowId: "waymark.code_review" });
    });
    let marked = await call("start_workflow", { workflowId: LONG_ID });
    await measure("checkpoint_workflow", 0, async (i) => {
      marked = await call("checkpoint_workflow", {
        stateToken: marked.stateToken,
        checkpointToken: marked.checkpointToken,
        output: { notesMarkdown: `Checkpoint ${i}.` },
      });
    });
    let at = await call("start_workflow", { workflowId: LONG_ID });
    for (let i = 0; i < 100; i++) at = await call("continue_workflow", advanceArgs(at));
    let prior = 100;
    /** Advances, replays, rehydrates and the tasks view's branch read at `level`. */
    const measureLevel = async (level: number) => {
      const pairs: Record<string, unknown>[] = [];
      await measure("advance", level, async () => {
        pairs.push(advanceArgs(at));
        at = await call("continue_workflow", pairs[pairs.length - 1]!);
      });
      await measure("replay", level, async (i) => {
        await call("continue_workflow", pairs[i]!);
      });
      await measure("rehydrate", level, async () => {
        await call("continue_workflow", { stateToken: at.stateToken });
      });
      // what the MCP tasks view reads after each call over stdio (its plan window)
      await measure("branch_steps", level, async () => {
        await waymark.store.getBranchSteps(placeOf(at).runId, placeOf(at).nodeId, 64);
      });
    };
    for (const level of levels) {
      while (prior < level) {
        at = await call("continue_workflow", advanceArgs(at));
        prior++;
      }
      await measureLevel(level);
      prior += samples;
    }
    // control: a new run at 10 prior advances, beside the long one
    at = await call("start_workflow", { workflowId: LONG_ID });
    for (let i = 0; i < 10; i++) at = await call("continue_workflow", advanceArgs(at));
    console.log("\n(control: a new run)");
    await measureLevel(10);
    if (values.explain) await explain(admin, values.explain);
    await measure("resume_session", prior, async () => {
      await call("resume_session", { query: "Done" });
    });
    if (values.plans) await comparePlans(admin);
  } finally {
    await waymark.close();
    await admin.end();
    await server.stop();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();
