/**
 * The workflow stack is a projection of the log: a DeepWork server killed with SIGKILL in the
 * middle of nested runs is restarted and carries on with the same stack (replaying the last
 * answer it gave), and two server processes racing on one workflow advance it once.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { connectRich, ok, tempHome } from "../helpers/server.ts";
import { connectDeepwork, jobWorkspace, writeIn } from "../helpers/deepwork.ts";
import { serveAsProcesses } from "../helpers/in_process.ts";

/** Servers here restart and race as processes: that is what these tests are about. */
serveAsProcesses();

const ARGS = ["--profile", "deepwork", "--no-quality-gate"];

Deno.test("SIGKILL mid-run, restart: the same stack, the last answer replayed, the run carries on", async () => {
  const home = await tempHome();
  const ws = await jobWorkspace(["nest"]);
  try {
    const first = await connectRich(home.home, { cwd: ws.dir, extraArgs: ARGS });
    ok(
      await first.call("start_workflow", {
        goal: "outer",
        job_name: "nest",
        workflow_name: "outer",
      }),
    );
    ok(
      await first.call("start_workflow", {
        goal: "middle",
        job_name: "nest",
        workflow_name: "middle",
      }),
    );
    const before = await first.call("finished_step", { outputs: {}, notes: "middle started" });
    assert.equal(ok(before).begin_step.step_id, "middle_end");
    Deno.kill(first.pid!, "SIGKILL");
    await first.close().catch(() => {});

    const second = await connectRich(home.home, { cwd: ws.dir, extraArgs: ARGS });
    try {
      const replay = await second.call("finished_step", { outputs: {}, notes: "middle started" });
      assert.deepEqual(replay.structuredContent, before.structuredContent);
      assert.deepEqual(
        ok(replay).stack.map((s: { workflow: string; step: string }) => `${s.workflow}@${s.step}`),
        ["nest/outer@outer_start", "nest/middle@middle_end"],
      );
      const done = ok(await second.call("finished_step", { outputs: {} }));
      assert.equal(done.status, "workflow_complete");
      assert.deepEqual(done.stack.map((s: { step: string }) => s.step), ["outer_start"]);
      assert.equal(done.stack[0].run_id, ok(before).stack[0].run_id);
    } finally {
      await second.close();
    }
  } finally {
    await ws.cleanup();
    await home.cleanup();
  }
});

Deno.test("two server processes, one workflow named by session_id: racing identical calls advance once", async () => {
  const home = await tempHome();
  const ws = await jobWorkspace(["nest"]);
  const a = await connectDeepwork(home.home, ws.dir, { extraArgs: ["--no-quality-gate"] });
  const b = await connectDeepwork(home.home, ws.dir, {
    client: "v1",
    extraArgs: ["--no-quality-gate"],
  });
  try {
    ok(await a.call("start_workflow", { goal: "outer", job_name: "nest", workflow_name: "outer" }));
    const nested = ok(
      await a.call("start_workflow", { goal: "inner", job_name: "nest", workflow_name: "inner" }),
    );
    assert.equal(nested.stack.length, 2);
    // b reaches a's workflow only by naming it
    const session_id = nested.begin_step.session_id;
    await writeIn(ws.dir, "mark.txt", "m");
    const [x, y] = await Promise.all([
      a.call("finished_step", { outputs: { mark: "mark.txt" } }),
      b.call("finished_step", { outputs: { mark: "mark.txt" }, session_id }),
    ]);
    assert.deepEqual(x.structuredContent, y.structuredContent);
    assert.equal(ok(x).status, "workflow_complete");
    // a sees what the race left: the outer workflow on top
    const next = ok(await a.call("finished_step", { outputs: {} }));
    assert.equal(next.begin_step.step_id, "outer_end");
    const client = createClient({ url: `file:${home.dbFile}` });
    try {
      const rows = await client.execute(
        "SELECT count(*) AS n FROM attempts WHERE outcome = 'advanced'",
      );
      assert.equal(Number(rows.rows[0]!.n), 2, "inner_only once, outer_start once");
    } finally {
      client.close();
    }
  } finally {
    await a.close();
    await b.close();
    await ws.cleanup();
    await home.cleanup();
  }
});
