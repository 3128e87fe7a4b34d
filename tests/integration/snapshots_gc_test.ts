/**
 * `waymark gc` removes a removed run's snapshot refs (`refs/waymark/<run>/`) from its
 * workspace's repository, and keeps every other run's.
 * @module
 */
import assert from "node:assert/strict";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { observeWorkspace } from "../../tools/context/workspace.ts";
import { gitSnapshots } from "../../tools/snapshots/mod.ts";
import { git, gitRepo } from "../helpers/git_repo.ts";
import { daysAgo, openAt, runCli } from "../helpers/maintenance.ts";
import { tempHome } from "../helpers/server.ts";
import { plainWorkflow } from "../helpers/workflows.ts";

Deno.test("gc removes the snapshot refs of the runs it removes, and only those", async () => {
  const home = await tempHome();
  const repo = await gitRepo({ "a.txt": "v0\n" });
  await Deno.mkdir(`${home.home}/workflows`, { recursive: true });
  await Deno.writeTextFile(`${home.home}/workflows/gc.json`, plainWorkflow("user.gc", 3));
  try {
    const w = await openAt(home.home, daysAgo(40));
    const deps = { ...w.deps, snapshots: gitSnapshots() };
    const workspace = await observeWorkspace(repo.dir);
    const runOf = async () => {
      const started = await startWorkflow(deps, { workflowId: "user.gc" }, { workspace });
      assert.ok(started.ok);
      await Deno.writeTextFile(`${repo.dir}/a.txt`, `${Math.random()}\n`);
      const next = await continueWorkflow(deps, {
        stateToken: started.value.stateToken,
        ackToken: started.value.ackToken!,
        output: { notesMarkdown: "done" },
      }, { workspace });
      assert.ok(next.ok);
      return started.value.session!.runId.replace(/^run_/, "");
    };
    const old = await runOf();
    w.setNow(new Date().toISOString());
    const recent = await runOf();
    await w.close();
    const refs = async (run: string) =>
      (await git(repo.dir, "for-each-ref", "--format=%(refname)", `refs/waymark/${run}/`))
        .split("\n").filter((r) => r !== "").length;
    assert.deepEqual([await refs(old), await refs(recent)], [2, 2]);

    const gone = await runCli(["gc", "--older-than", "30d"], { home: home.home });
    assert.equal(gone.code, 0, gone.err);
    assert.match(gone.err, /removed 2 snapshot ref/);
    assert.deepEqual([await refs(old), await refs(recent)], [0, 2]);
  } finally {
    await repo.cleanup();
    await home.cleanup();
  }
});
