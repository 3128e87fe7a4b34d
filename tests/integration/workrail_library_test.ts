/**
 * WorkRail's library as it is: pointed at WorkRail's workflows folder with `--workflows-dir`,
 * waymark loads every top-level file under its own `wr.*` id, shadowing nothing of waymark's
 * (whose bundled workflows are `waymark.*`). waymark's former bundled ids (`wr.<name>`) still
 * start the renamed workflow, with a notice, unless a user's own file defines that id.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { declaredId } from "../../engine/workflow/catalog.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { connect, err, ok, tempHome } from "../helpers/server.ts";

const ignore = CORPUS_DIR === null;

/** The top-level workflow files of WorkRail's folder and the ids they declare. */
async function topLevelIds(dir: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    ids.push(declaredId(await Deno.readTextFile(join(dir, entry.name)))!);
  }
  return ids.sort();
}

Deno.test({
  name: "WorkRail's workflows folder loads in full beside the bundled waymark.* library",
  ignore,
  fn: async () => {
    const home = await tempHome();
    const c = await connect(home.home, { extraArgs: ["--workflows-dir", CORPUS_DIR!] });
    try {
      const listed = ok(await c.call("list_workflows", {}));
      const byId = new Map<string, { source: string }>(
        listed.workflows.map((w: { id: string; source: string }) => [w.id, w]),
      );
      const wanted = await topLevelIds(CORPUS_DIR!);
      assert.ok(wanted.length >= 27, `${wanted.length} top-level files`);
      const missing = wanted.filter((id) => byId.get(id)?.source !== "extra");
      assert.deepEqual(missing, [], JSON.stringify(listed.loadErrors));
      assert.deepEqual(listed.loadErrors ?? [], []);
      for (const bundled of BUNDLED_WORKFLOWS) {
        const id = declaredId(bundled.text)!;
        assert.ok(id.startsWith("waymark."), id);
        assert.equal(byId.get(id)?.source, "bundled", id);
      }
      const started = ok(await c.call("start_workflow", { workflowId: "wr.bug-investigation" }));
      assert.ok(started.pending.prompt.length > 0);
    } finally {
      await c.close();
      await home.cleanup();
    }
  },
});

Deno.test("a former bundled id starts the renamed workflow with a notice; a user's own wr.* file wins", async () => {
  const home = await tempHome();
  const c = await connect(home.home);
  try {
    const started = ok(await c.call("start_workflow", { workflowId: "wr.docs_update" }));
    const renamed = (started.warnings ?? []).find((w: { code: string }) =>
      w.code === "WORKFLOW_ID_RENAMED"
    );
    assert.ok(renamed, JSON.stringify(started.warnings));
    assert.match(renamed.message, /`wr\.docs_update` is now `waymark\.docs_update`/);
    const direct = ok(await c.call("start_workflow", { workflowId: "waymark.docs_update" }));
    assert.equal(started.pending.stepId, direct.pending.stepId);
    assert.ok(
      !(direct.warnings ?? []).some((w: { code: string }) => w.code === "WORKFLOW_ID_RENAMED"),
    );
    const inspected = ok(await c.call("inspect_workflow", { workflowId: "wr.docs_update" }));
    assert.equal(inspected.workflow.id, "waymark.docs_update");
    const unknown = err(await c.call("start_workflow", { workflowId: "wr.no_such_thing" }));
    assert.equal(unknown.code, "WORKFLOW_NOT_FOUND");
  } finally {
    await c.close();
  }
  await Deno.mkdir(join(home.home, "workflows"), { recursive: true });
  await Deno.writeTextFile(
    join(home.home, "workflows", "mine.json"),
    JSON.stringify({
      id: "wr.docs_update",
      name: "Mine",
      description: "A user's own WorkRail workflow that happens to share the former id.",
      version: "1",
      steps: [{ id: "only_mine", title: "Mine", prompt: "Do my thing." }],
    }),
  );
  const again = await connect(home.home);
  try {
    const started = ok(await again.call("start_workflow", { workflowId: "wr.docs_update" }));
    assert.equal(started.pending.stepId, "only_mine");
    assert.ok(
      !(started.warnings ?? []).some((w: { code: string }) => w.code === "WORKFLOW_ID_RENAMED"),
    );
    const bundled = ok(await again.call("start_workflow", { workflowId: "waymark.docs_update" }));
    assert.notEqual(bundled.pending.stepId, "only_mine");
  } finally {
    await again.close();
    await home.cleanup();
  }
});
