/**
 * In-process profile of the same calls `mcp_bench.ts` makes over stdio: opens waymark with
 * `openWaymark` (a file database, like the server), runs one long run through the tool handlers
 * (argument parse → use-case → text render → JSON of the result → the run's task view and its
 * `_meta`, what `tools/call` does minus the transport), and times every SQL statement the store sends to libSQL. Comparing with the
 * stdio numbers splits a call into transport/SDK overhead and time inside the engine.
 *
 *   deno run -A tests/bench/in_process.ts [--quick] [--samples N] [--levels 10,1000,10000]
 *
 * Writes `bench-results/in_process.json`.
 * @module
 */
import { NativeConnection } from "../../store/libsql/native_pool.ts";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { openWaymark, type SqliteStore } from "../../mod.ts";
import { TOOLS } from "../../tools/mod.ts";
import { Server, type ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import { createTaskSurface } from "../../tools/tasks/surface.ts";
import { revisionOf } from "../../tools/revisions/mod.ts";
import { callMeta } from "../../tools/tasks/wire.ts";
import { parseRunLabel } from "../../engine/model/ids.ts";
import type { AnsweredNode } from "../../engine/run/record_attempt.ts";
import type { WorkflowSource } from "../../engine/model/ports.ts";
import { LONG_ID, longWorkflow, r3, stats } from "./common.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

type Op = "advance" | "replay" | "rehydrate";

interface SqlStat {
  n: number;
  ms: number;
  max: number;
  over5ms: number;
}

/** One call's split. */
interface Split {
  parse: number;
  run: number;
  render: number;
  /** Building the run's task view and its `_meta` after the call (what `tools/call` adds). */
  task: number;
  total: number;
}

function normalizeSql(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      quick: { type: "boolean", default: false },
      samples: { type: "string" },
      levels: { type: "string" },
      out: { type: "string" },
    },
  });
  const quick = values.quick === true;
  const samples = values.samples ? Number(values.samples) : quick ? 50 : 200;
  const levels = values.levels
    ? values.levels.split(",").map(Number)
    : quick
    ? [10, 1_000]
    : [10, 1_000, 10_000];
  const maxLevel = levels[levels.length - 1]!;
  const steps = maxLevel + samples + 400;
  const out = values.out ?? join(ROOT, "bench-results", "in_process.json");

  const tmp = await Deno.makeTempDir({ prefix: "waymark-inproc-" });
  const workspace = join(tmp, "workspace");
  await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(
    join(workspace, ".waymark", "workflows", "bench_long.json"),
    longWorkflow(steps),
  );
  const waymark = await openWaymark({ home: join(tmp, "home"), workspace });
  try {
    // ---- SQL timing: wrap the libSQL client the Kysely driver calls -----------------------
    let sqlStats = new Map<string, SqlStat>();
    const sqlSamples = new Map<string, unknown[]>();
    let sqlCount = 0;
    const record = (sql: string, ms: number, args: unknown) => {
      const key = normalizeSql(sql);
      const s = sqlStats.get(key) ?? { n: 0, ms: 0, max: 0, over5ms: 0 };
      s.n++;
      s.ms += ms;
      s.max = Math.max(s.max, ms);
      if (ms > 5) s.over5ms++;
      sqlStats.set(key, s);
      sqlSamples.set(key, args as unknown[]);
      sqlCount++;
    };
    type Exec = (stmt: { sql: string; args?: unknown[] } | string) => Promise<unknown>;
    const client = (waymark.store as SqliteStore).client as unknown as {
      execute: Exec;
      transaction: (
        mode?: string,
      ) => Promise<{ execute: Exec; commit(): Promise<void>; rollback(): Promise<void> }>;
    };
    const wrapExec = (exec: Exec, self: unknown): Exec => async (stmt) => {
      const t0 = performance.now();
      try {
        return await exec.call(self, stmt);
      } finally {
        const sql = typeof stmt === "string" ? stmt : stmt.sql;
        record(sql, performance.now() - t0, typeof stmt === "string" ? [] : stmt.args);
      }
    };
    const rawExecute = client.execute;
    const rawTransaction = client.transaction;
    client.execute = wrapExec(rawExecute, client);
    client.transaction = async (mode?: string) => {
      const t0 = performance.now();
      const tx = await rawTransaction.call(client, mode);
      record("<BEGIN (transaction())>", performance.now() - t0, []);
      const rawTxExec = tx.execute;
      tx.execute = wrapExec(rawTxExec, tx);
      const rawCommit = tx.commit;
      tx.commit = async () => {
        const c0 = performance.now();
        try {
          return await rawCommit.call(tx);
        } finally {
          record("<COMMIT>", performance.now() - c0, []);
        }
      };
      return tx;
    };
    // file databases run the store's statements on native connections instead of the client
    const native = NativeConnection.prototype;
    const rawNativeExecute = native.execute;
    const rawNativeExec = native.exec;
    native.execute = function (sql, args) {
      const t0 = performance.now();
      try {
        return rawNativeExecute.call(this, sql, args);
      } finally {
        record(sql, performance.now() - t0, args);
      }
    };
    native.exec = function (sql) {
      const t0 = performance.now();
      try {
        return rawNativeExec.call(this, sql);
      } finally {
        record(`<${sql}>`, performance.now() - t0, []);
      }
    };

    // ---- workflow source timing (load and find: the drift check and starts) ------------------
    let loadMs = 0;
    let loadN = 0;
    const source = waymark.deps.workflows;
    const timedCall = async <T>(fn: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      try {
        return await fn();
      } finally {
        loadMs += performance.now() - t0;
        loadN++;
      }
    };
    (waymark.deps as { workflows: WorkflowSource }).workflows = {
      load: () => timedCall(() => source.load()),
      find: source.find && ((id) => timedCall(() => source.find!(id))),
    };

    const tool = (name: string) => TOOLS.find((t) => t.name === name)!;
    // An unconnected server, so the revision is one that sends no status notifications.
    const server = new Server({ name: "bench", version: "0" });
    const tasks = createTaskSurface(server, waymark.deps);
    const ctx = { mcpReq: {} } as unknown as ServerContext;
    const revision = revisionOf(server, ctx);
    const startTool = tool("start_workflow");
    const continueTool = tool("continue_workflow");
    /** What the tools/call handler does, split: parse, run, render + serialise the result. */
    const handle = async (
      t: typeof continueTool,
      args: Record<string, unknown>,
    ): Promise<{ value: Record<string, unknown>; split: Split }> => {
      const t0 = performance.now();
      const call = t.parse(args);
      if (!call.ok) throw new Error(`invalid arguments: ${call.error.message}`);
      const t1 = performance.now();
      const told: { answered?: AnsweredNode } = {};
      const result = await call.value.run(waymark.deps, {
        onAnswered: (answered) => told.answered = answered,
      });
      if (!result.ok) {
        throw new Error(`${t.name} failed: ${result.error.code}: ${result.error.message}`);
      }
      const t2 = performance.now();
      const text = result.value.text();
      JSON.stringify({ content: [{ type: "text", text }], structuredContent: result.value.value });
      const t3 = performance.now();
      const runId = (result.value.value as { session?: { runId?: string } }).session?.runId;
      const run = runId ? parseRunLabel(runId) : null;
      const view = run ? await tasks.observe(run, revision, told.answered) : null;
      if (view) JSON.stringify(callMeta(view));
      const t4 = performance.now();
      return {
        value: result.value.value,
        split: { parse: t1 - t0, run: t2 - t1, render: t3 - t2, task: t4 - t3, total: t4 - t0 },
      };
    };
    type Tip = { stateToken: string; ackToken?: string; pending: { stepId: string } | null };
    const advanceArgs = (at: Tip) => ({
      stateToken: at.stateToken,
      ackToken: at.ackToken,
      output: { notesMarkdown: `Done ${at.pending!.stepId}.` },
    });

    // ---- warm-up ------------------------------------------------------------------------
    const warmupN = quick ? 50 : 200;
    for (let i = 0; i < 20; i++) await handle(startTool, { workflowId: "waymark.code_review" });
    let warm = (await handle(startTool, { workflowId: LONG_ID })).value as unknown as Tip;
    const warmPairs: Record<string, unknown>[] = [];
    for (let i = 0; i < warmupN; i++) {
      const args = advanceArgs(warm);
      warmPairs.push(args);
      warm = (await handle(continueTool, args)).value as unknown as Tip;
    }
    for (const args of warmPairs) await handle(continueTool, args);
    for (let i = 0; i < warmupN; i++) await handle(continueTool, { stateToken: warm.stateToken });

    // start_workflow
    const startSplits: Split[] = [];
    sqlStats = new Map();
    for (let i = 0; i < samples; i++) {
      startSplits.push((await handle(startTool, { workflowId: "waymark.code_review" })).split);
    }
    const startSql = sqlStats;

    // ---- the measured run ---------------------------------------------------------------
    let at = (await handle(startTool, { workflowId: LONG_ID })).value as unknown as Tip;
    let prior = 0;
    const results: {
      prior: number;
      ops: Record<
        Op,
        { splits: Split[]; sql: Map<string, SqlStat>; loadMs: number; loadN: number }
      >;
    }[] = [];
    for (const level of levels) {
      while (prior < level) {
        at = (await handle(continueTool, advanceArgs(at))).value as unknown as Tip;
        prior++;
      }
      const ops = {} as Record<
        Op,
        { splits: Split[]; sql: Map<string, SqlStat>; loadMs: number; loadN: number }
      >;
      const begin = () => {
        sqlStats = new Map();
        loadMs = 0;
        loadN = 0;
      };
      begin();
      const pairs: Record<string, unknown>[] = [];
      const adv: Split[] = [];
      for (let i = 0; i < samples; i++) {
        const args = advanceArgs(at);
        pairs.push(args);
        const r = await handle(continueTool, args);
        adv.push(r.split);
        at = r.value as unknown as Tip;
      }
      ops.advance = { splits: adv, sql: sqlStats, loadMs, loadN };
      begin();
      const rep: Split[] = [];
      for (const args of pairs) rep.push((await handle(continueTool, args)).split);
      ops.replay = { splits: rep, sql: sqlStats, loadMs, loadN };
      begin();
      const reh: Split[] = [];
      for (let i = 0; i < samples; i++) {
        reh.push((await handle(continueTool, { stateToken: at.stateToken })).split);
      }
      ops.rehydrate = { splits: reh, sql: sqlStats, loadMs, loadN };
      begin();
      results.push({ prior, ops });
      prior += samples;
      console.error(`[in-process] measured at ${level} prior advances`);
    }

    // ---- query plans of the statements a rehydrate sends ----------------------------------
    client.execute = rawExecute;
    client.transaction = rawTransaction;
    native.execute = rawNativeExecute;
    native.exec = rawNativeExec;
    const last = results[results.length - 1]!;
    const plans: { sql: string; plan: string[] }[] = [];
    for (const sql of last.ops.rehydrate.sql.keys()) {
      if (sql.startsWith("<")) continue;
      const args = sqlSamples.get(sql) ?? [];
      const plan = await (waymark.store as SqliteStore).client.execute({
        sql: `EXPLAIN QUERY PLAN ${sql}`,
        args: args as never,
      });
      plans.push({ sql, plan: plan.rows.map((r) => `${r.id}/${r.parent}: ${r.detail}`) });
    }

    // ---- the recap query as written vs with its join order pinned (CROSS JOIN) ----------------
    const recapSql = [...last.ops.rehydrate.sql.keys()].find((k) =>
      k.startsWith("WITH RECURSIVE up")
    );
    const recapAlt: { variant: string; p50: number; plan: string[] }[] = [];
    if (recapSql && recapSql.includes("FROM up JOIN nodes n")) {
      const args = (sqlSamples.get(recapSql) ?? []) as never;
      for (
        const [variant, text] of [
          ["as written", recapSql],
          [
            "FROM up CROSS JOIN nodes n",
            recapSql.replace("FROM up JOIN nodes n", "FROM up CROSS JOIN nodes n"),
          ],
        ] as const
      ) {
        const times: number[] = [];
        let rows = 0;
        for (let i = 0; i < 60; i++) {
          const t0 = performance.now();
          rows =
            (await (waymark.store as SqliteStore).client.execute({ sql: text, args })).rows.length;
          if (i >= 10) times.push(performance.now() - t0);
        }
        const plan = await (waymark.store as SqliteStore).client.execute({
          sql: `EXPLAIN QUERY PLAN ${text}`,
          args,
        });
        recapAlt.push({
          variant: `${variant} (${rows} rows)`,
          p50: stats(times).p50,
          plan: plan.rows.map((r) => `${r.detail}`),
        });
      }
    }

    // ---- report ---------------------------------------------------------------------------
    const p50 = (splits: Split[], k: keyof Split) => stats(splits.map((s) => s[k])).p50;
    const fmt = (x: number) => x.toFixed(3).padStart(8);
    console.log(
      `\nwaymark in-process profile (${
        quick ? "quick" : "full"
      }; tools/call handler minus transport; p50 ms per call)\n`,
    );
    console.log(
      `${"operation".padEnd(16)}${"prior".padStart(8)}${"total".padStart(9)}${"parse".padStart(9)}${
        "run".padStart(9)
      }${"render".padStart(9)}${"task".padStart(9)}${
        "p99 tot".padStart(9)
      }  sql/call  workflows/call`,
    );
    const line = (
      op: string,
      prior: number | null,
      splits: Split[],
      sql: Map<string, SqlStat>,
      load: { ms: number; n: number },
    ) => {
      const calls = splits.length;
      const sqlN = [...sql.values()].reduce((a, s) => a + s.n, 0);
      const sqlMs = [...sql.values()].reduce((a, s) => a + s.ms, 0);
      console.log(
        `${op.padEnd(16)}${(prior === null ? "-" : String(prior)).padStart(8)} ${
          fmt(p50(splits, "total"))
        } ${fmt(p50(splits, "parse"))} ${fmt(p50(splits, "run"))} ${fmt(p50(splits, "render"))} ${
          fmt(p50(splits, "task"))
        } ${fmt(stats(splits.map((s) => s.total)).p99)}  ${
          (sqlN / calls).toFixed(1).padStart(4)
        } / ${(sqlMs / calls).toFixed(3)} ms  ${(load.ms / Math.max(1, calls)).toFixed(3)} ms`,
      );
    };
    line("start_workflow", null, startSplits, startSql, { ms: 0, n: 0 });
    for (const op of ["advance", "replay", "rehydrate"] as const) {
      for (const r of results) {
        line(op, r.prior, r.ops[op].splits, r.ops[op].sql, {
          ms: r.ops[op].loadMs,
          n: r.ops[op].loadN,
        });
      }
    }

    console.log("\nSQL statements per operation (mean ms per execution, executions per call):");
    for (const op of ["advance", "replay", "rehydrate"] as const) {
      console.log(`\n  ${op}:`);
      const keys = new Set<string>();
      for (const r of results) for (const k of r.ops[op].sql.keys()) keys.add(k);
      const rowsOut = [...keys].map((k) => ({
        k,
        per: results.map((r) => {
          const s = r.ops[op].sql.get(k);
          return s
            ? {
              mean: s.ms / s.n,
              perCall: s.n / r.ops[op].splits.length,
              total: s.ms / r.ops[op].splits.length,
            }
            : null;
        }),
      })).sort((a, b) =>
        (b.per[b.per.length - 1]?.total ?? 0) - (a.per[a.per.length - 1]?.total ?? 0)
      );
      console.log(`    ${results.map((r) => `@${r.prior}`.padStart(16)).join("")}  statement`);
      for (const row of rowsOut) {
        const cells = row.per.map((p) =>
          p ? `${p.mean.toFixed(3)}×${p.perCall.toFixed(1)}`.padStart(16) : "-".padStart(16)
        ).join("");
        console.log(`    ${cells}  ${row.k.slice(0, 110)}`);
      }
    }
    console.log("\nslow statement executions during advances (> 5 ms):");
    for (const r of results) {
      const slow = [...r.ops.advance.sql.entries()].filter(([, s]) => s.over5ms > 0)
        .map(([k, s]) => `${s.over5ms}× ${k.slice(0, 40)} (max ${s.max.toFixed(1)} ms)`);
      const over = r.ops.advance.splits.filter((x) => x.total > 5).length;
      console.log(
        `  @${r.prior}: ${over} of ${r.ops.advance.splits.length} advances took > 5 ms; statements: ${
          slow.join("; ") || "none"
        }`,
      );
    }
    console.log("\nquery plans (statements of a rehydrate):");
    for (const p of plans) {
      console.log(`  ${p.sql.slice(0, 140)}`);
      for (const l of p.plan) console.log(`      ${l}`);
    }

    if (recapAlt.length > 0) {
      console.log(
        `\nrecap query (getAncestors) at the last level's tip, ${prior} nodes in the run, p50 of 50:`,
      );
      for (const a of recapAlt) {
        console.log(
          `  ${a.p50.toFixed(3).padStart(8)} ms  ${a.variant}\n      plan: ${a.plan.join(" | ")}`,
        );
      }
    }

    const json = {
      recapQuery: recapAlt,
      benchmark: "waymark-in-process",
      timestamp: new Date().toISOString(),
      machine: {
        deno: Deno.version,
        os: Deno.build.os,
        arch: Deno.build.arch,
        cpus: navigator.hardwareConcurrency,
      },
      config: { quick, samples, levels, steps },
      startWorkflow: {
        total: stats(startSplits.map((s) => s.total)),
        run: stats(startSplits.map((s) => s.run)),
      },
      levels: results.map((r) => ({
        prior: r.prior,
        ...Object.fromEntries((["advance", "replay", "rehydrate"] as const).map((op) => [op, {
          total: stats(r.ops[op].splits.map((s) => s.total)),
          parse: stats(r.ops[op].splits.map((s) => s.parse)),
          run: stats(r.ops[op].splits.map((s) => s.run)),
          render: stats(r.ops[op].splits.map((s) => s.render)),
          task: stats(r.ops[op].splits.map((s) => s.task)),
          workflowsLoadMsPerCall: r3(r.ops[op].loadMs / r.ops[op].splits.length),
          sql: [...r.ops[op].sql.entries()].map(([sql, s]) => ({
            sql,
            n: s.n,
            meanMs: r3(s.ms / s.n),
            maxMs: r3(s.max),
            over5ms: s.over5ms,
          })),
        }])),
      })),
      plans,
    };
    await Deno.mkdir(dirname(out), { recursive: true });
    await Deno.writeTextFile(out, `${JSON.stringify(json, null, 2)}\n`);
    console.log(`\nresults: ${out}`);
    return 0;
  } finally {
    await waymark.close();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    console.error(`[in-process] FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    Deno.exit(1);
  }
}
