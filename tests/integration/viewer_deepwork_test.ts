/**
 * The viewer over a DeepWork session driven through the real profile over MCP: the job run
 * with its nested child runs (indented, "nested in"), the quality review and its override on
 * the node whose step was reviewed, and an aborted child run with its explanation, all
 * escaped.
 */
import assert from "node:assert/strict";
import { openWaymark } from "../../mod.ts";
import { createViewerApp } from "../../web/mod.ts";
import { ok, tempHome } from "../helpers/server.ts";
import { connectDeepwork, jobWorkspace, writeIn } from "../helpers/deepwork.ts";

const HOST = "127.0.0.1:4321";
const HOSTILE = "<script>alert(1)</script>";

Deno.test("the viewer shows a job run with nested child runs, its review, the override and the abort", async () => {
  const home = await tempHome();
  const ws = await jobWorkspace(["nest", "release_notes"]);
  const c = await connectDeepwork(home.home, ws.dir);
  let outerRun = "";
  try {
    const outer = ok(
      await c.call("start_workflow", {
        goal: "ship 1.2",
        job_name: "nest",
        workflow_name: "outer",
      }),
    );
    outerRun = outer.stack[0].run_id.slice("run_".length);
    ok(
      await c.call("start_workflow", {
        goal: "notes",
        job_name: "release_notes",
        workflow_name: "quick",
      }),
    );
    await writeIn(ws.dir, "changes.md", "- a\n");
    ok(await c.call("finished_step", { outputs: { "changes.md": "changes.md" } }));
    await writeIn(ws.dir, "release.md", "# 1.2\n");
    const review = ok(await c.call("finished_step", { outputs: { "release.md": "release.md" } }));
    assert.equal(review.status, "needs_work");
    ok(
      await c.call("finished_step", {
        outputs: { "release.md": "release.md" },
        quality_review_override_reason: `sub-agent approved ${HOSTILE}`,
      }),
    );
    ok(
      await c.call("start_workflow", {
        goal: "inner part",
        job_name: "nest",
        workflow_name: "inner",
      }),
    );
    ok(await c.call("abort_workflow", { explanation: `no longer needed ${HOSTILE}` }));
  } finally {
    await c.close();
  }
  const waymark = await openWaymark({ home: home.home });
  const viewer = createViewerApp({ db: waymark.store.db, allowedHosts: () => [HOST] });
  const get = async (path: string) => {
    const res = await viewer.app.request(path, { headers: { host: HOST } });
    assert.equal(res.status, 200, path);
    return await res.text();
  };
  try {
    // nested workflows have their own session_id (their run) but share the stack's session
    const sessionId = `ses_${(await waymark.store.getRun(outerRun))!.sessionId}`;
    const runs = await waymark.store.db.selectFrom("runs as r")
      .innerJoin("run_links as l", "l.run_id", "r.run_id")
      .select(["r.run_id", "r.goal", "r.status", "r.last_node_id"]).orderBy("l.created_seq")
      .execute();
    assert.deepEqual(runs.map((r) => [r.goal, r.status]), [
      ["ship 1.2", "running"],
      ["notes", "complete"],
      ["inner part", "aborted"],
    ]);
    const page = await get(`/sessions/${sessionId}`);
    assert.match(page, /class="nest1"/);
    assert.match(page, /nested in ship 1\.2/);
    assert.match(page, /badge aborted/);
    // the node where `publish` was pending: the review request and the override
    const reviewed = await waymark.store.db.selectFrom("node_events")
      .select(["run_id", "node_id", "kind"]).where("kind", "=", "review_recorded").execute();
    assert.equal(reviewed.length, 1);
    const node = await get(
      `/sessions/${sessionId}/runs/run_${reviewed[0]!.run_id}/nodes/${reviewed[0]!.node_id}`,
    );
    assert.match(node, /Evidence, reviews, overrides, aborts and delegation \(2\)/);
    assert.match(node, /self review/);
    assert.match(node, /requested/);
    assert.match(node, /Quality review overridden:/);
    assert.ok(node.includes("sub-agent approved &lt;script&gt;alert(1)&lt;/script&gt;"));
    assert.ok(!node.includes(HOSTILE));
    // the aborted run: its tip shows the abort and why
    const inner = runs[2]!;
    const aborted = await get(`/sessions/${sessionId}/runs/run_${inner.run_id}`);
    assert.match(aborted, /at step inner_only: <\/span>no longer needed &lt;script&gt;/);
    assert.ok(!aborted.includes(HOSTILE));
    const api = await get(`/api/sessions/${sessionId}`);
    assert.match(api, /"parentRunId"/);
  } finally {
    viewer.close();
    await waymark.close();
    await ws.cleanup();
    await home.cleanup();
  }
});
