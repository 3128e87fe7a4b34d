/**
 * What an answer says when no snapshot is taken: outside git, one warning at the start and
 * none after; past the time budget, a warning on that step, which still advances.
 * @module
 */
import assert from "node:assert/strict";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { observeWorkspace } from "../../tools/context/workspace.ts";
import { gitSnapshots } from "../../tools/snapshots/mod.ts";
import { git, gitRepo } from "../helpers/git_repo.ts";
import { openAt } from "../helpers/maintenance.ts";
import { tempHome } from "../helpers/server.ts";
import { plainWorkflow } from "../helpers/workflows.ts";

const codes = (r: StepResponse) => (r.warnings ?? []).map((w) => w.code);

async function walk(folder: string, budgetMs: number): Promise<StepResponse[]> {
  const home = await tempHome();
  await Deno.mkdir(`${home.home}/workflows`, { recursive: true });
  await Deno.writeTextFile(`${home.home}/workflows/n.json`, plainWorkflow("user.n", 3));
  const w = await openAt(home.home, new Date().toISOString());
  try {
    const deps = { ...w.deps, snapshots: gitSnapshots({ budgetMs }) };
    const workspace = await observeWorkspace(folder);
    const start = await startWorkflow(deps, { workflowId: "user.n" }, { workspace });
    assert.ok(start.ok);
    const next = await continueWorkflow(deps, {
      stateToken: start.value.stateToken,
      ackToken: start.value.ackToken!,
      output: { notesMarkdown: "done" },
    }, { workspace });
    assert.ok(next.ok, "a snapshot never fails an acknowledgement");
    assert.equal(next.value.kind, "ok");
    return [start.value, next.value];
  } finally {
    await w.close();
    await home.cleanup();
  }
}

Deno.test("outside git: one warning, at the start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-plain-" });
  try {
    const [start, next] = await walk(dir, 3000);
    assert.deepEqual(codes(start).filter((c) => c.startsWith("SNAPSHOT")), [
      "SNAPSHOT_NOT_A_REPOSITORY",
    ]);
    assert.deepEqual(codes(next!).filter((c) => c.startsWith("SNAPSHOT")), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("past the time budget: the step goes on, and its answer says there is no snapshot", async () => {
  const repo = await gitRepo({ "a.txt": "one\n" });
  try {
    const [start, next] = await walk(repo.dir, 0);
    assert.ok(codes(start).includes("SNAPSHOT_OVER_BUDGET"));
    assert.ok(codes(next!).includes("SNAPSHOT_OVER_BUDGET"));
    assert.equal(await git(repo.dir, "for-each-ref", "refs/waymark/"), "");
  } finally {
    await repo.cleanup();
  }
});
