/**
 * The bundled workflow library: every file is embedded and passes `workflows validate` with no
 * warnings; `list_workflows` offers at least 15 workflows with summaries an agent can choose by;
 * and a scripted agent (`mcp_agent.ts`) walks each one to completion over MCP, deriving what it
 * submits from the workflow's own text, taking every conditional step and fragment both ways and
 * every loop round twice, and finding each gate a prompt announces enforced.
 * @module
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { type LoadedWorkflow, loadWorkflowFiles } from "../../engine/workflow/catalog.ts";
import type { CompiledNode } from "../../engine/workflow/compiled.ts";
import type { Condition } from "../../engine/workflow/schema.ts";
import { conditionVars } from "../../engine/workflow/conditions.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { connect, ok, ROOT, tempHome, type TestClient } from "../helpers/server.ts";
import { readDescription, type Walk, walkWorkflow } from "../helpers/mcp_agent.ts";
import { runCli } from "../helpers/maintenance.ts";

const DIR = join(ROOT, "workflows");

async function bundled(): Promise<LoadedWorkflow[]> {
  const loaded = await loadWorkflowFiles(BUNDLED_WORKFLOWS);
  return loaded.map((r) => {
    assert.ok(r.ok, JSON.stringify(!r.ok && r.error));
    return r.workflow;
  });
}

async function withClient(fn: (c: TestClient) => Promise<void>): Promise<void> {
  const home = await tempHome();
  const client = await connect(home.home);
  try {
    await fn(client);
  } finally {
    await client.close();
    await home.cleanup();
  }
}

Deno.test("every file in workflows/ is embedded, and passes `workflows validate` with no warnings", async () => {
  const files = [...Deno.readDirSync(DIR)].map((e) => e.name).filter((n) => n.endsWith(".jsonc"))
    .sort();
  assert.deepEqual(BUNDLED_WORKFLOWS.map((b) => b.file.replace(/^bundled:/, "")).sort(), files);
  for (const b of BUNDLED_WORKFLOWS) {
    assert.equal(b.text, await Deno.readTextFile(join(DIR, b.file.replace(/^bundled:/, ""))));
  }
  // one process validates them all, each as if alone (a process per file cost 17 starts)
  const ran = await runCli(["workflows", "validate", ...files.map((n) => join(DIR, n))]);
  const out = ran.out;
  assert.equal(ran.code, 0, ran.err);
  // each file's output is its one ok line: no warning, no command after it
  const lines = out.split("\n");
  assert.equal(lines.pop(), "", out);
  assert.equal(lines.length, files.length, out);
  for (const [i, name] of files.entries()) {
    assert.match(
      lines[i]!,
      /: ok \(waymark\.[\w-]+, \d+ steps, sha256:[0-9a-f]{64}\)$/,
      `${name}: ${out}`,
    );
    assert.ok(lines[i]!.startsWith(`${join(DIR, name)}: ok `), `${name}: ${out}`);
  }
});

Deno.test("list_workflows offers the library with whole summaries and documented context keys", async () => {
  const loaded = new Map((await bundled()).map((w) => [w.id, w]));
  await withClient(async (c) => {
    const list = ok(await c.call("list_workflows", {}));
    const workflows = list.workflows.filter((w: { kind: string }) => w.kind === "workflow");
    assert.ok(workflows.length >= 15, `${workflows.length} bundled workflows`);
    assert.equal(
      new Set(list.workflows.map((w: { name: string }) => w.name)).size,
      list.workflows.length,
    );
    for (const summary of list.workflows) {
      const { workflow } = ok(await c.call("inspect_workflow", { workflowId: summary.id }));
      const [first, blank] = workflow.description.split("\n");
      assert.equal(summary.summary, first, `${summary.id}: the summary is cut`);
      assert.ok(first.length <= 200 && first.endsWith("."), `${summary.id}: "${first}"`);
      assert.equal(blank, workflow.description.includes("\n") ? "" : undefined);
      // Every key a condition reads is in the description, with its values or as optional.
      const reading = readDescription(workflow.description);
      for (const key of conditionKeys(loaded.get(summary.id)!.compiled.steps)) {
        assert.ok(
          reading.domains.has(key) || reading.optional.includes(key),
          `${summary.id}: the description does not document \`${key}\``,
        );
      }
    }
  });
});

function conditionKeys(nodes: readonly CompiledNode[], out = new Set<string>()): Set<string> {
  const add = (c: Condition | undefined) =>
    c && conditionVars(c).map((v) => v.split(".")[0]!).filter((v) => v !== "assessments")
      .forEach((v) => out.add(v));
  for (const n of nodes) {
    add(n.runCondition);
    if (n.kind === "loop") conditionKeys(n.body, out);
    else n.fragments?.forEach((f) => add(f.when));
  }
  return out;
}

/** A branch of a workflow and whether a set of walks took it both ways. */
interface Branch {
  key: string;
  covered(walks: readonly Walk[]): boolean;
}

function branchesOf(nodes: readonly CompiledNode[], out: Branch[] = []): Branch[] {
  for (const n of nodes) {
    if (n.kind === "loop") {
      const first = n.body[0]!.id;
      out.push({
        key: `${n.id} (a second round)`,
        covered: (walks) => walks.some((w) => w.steps.filter((s) => s === first).length >= 2),
      });
      branchesOf(n.body, out);
      continue;
    }
    const id = n.id;
    if (n.runCondition) {
      out.push({
        key: `${id} (run and skipped)`,
        covered: (walks) =>
          walks.some((w) => w.steps.includes(id)) &&
          walks.some((w) => !w.steps.includes(id)),
      });
    }
    for (const [i, f] of (n.fragments ?? []).entries()) {
      if (!f.when) continue;
      const probe = f.text.split("{{")[0]!;
      const prompts = (walks: readonly Walk[]) =>
        walks.flatMap((w) => w.prompts.filter((_, j) => w.steps[j] === id));
      out.push({
        key: `${id} fragment ${i} (shown and hidden)`,
        covered: (walks) =>
          prompts(walks).some((p) => p.includes(probe)) &&
          prompts(walks).some((p) => !p.includes(probe)),
      });
    }
  }
  return out;
}

Deno.test("a scripted agent walks every bundled workflow to completion over MCP, taking every branch, and each announced gate blocks", async () => {
  const library = await bundled();
  await withClient(async (c) => {
    const report: string[] = [];
    for (const workflow of library) {
      const branches = branchesOf(workflow.compiled.steps);
      const walks: Walk[] = [];
      const probed = new Set<string>(); // each step's gates are probed the first time it shows
      while (walks.length < 2 || branches.some((b) => !b.covered(walks))) {
        if (walks.length >= 6) break;
        const walk = await walkWorkflow(c, workflow.id, {
          variant: walks.length,
          probed,
        });
        assert.equal(walk.last.isComplete, true);
        for (const [i, prompt] of walk.prompts.entries()) {
          assert.ok(
            !prompt.includes("(not provided:"),
            `${workflow.id} ${walk.steps[i]}: ${prompt}`,
          );
        }
        walks.push(walk);
      }
      const missed = branches.filter((b) => !b.covered(walks)).map((b) => b.key);
      assert.deepEqual(missed, [], `${workflow.id}: branches not taken both ways`);
      const gates = walks.reduce((n, w) => n + w.probes.length, 0);
      report.push(
        `${workflow.id}: ${walks.length} walks, ${branches.length} branches, ${gates} gates`,
      );
    }
    console.log(report.join("\n"));
  });
});

Deno.test("the library's routines are called: each bundled routine has a bundled caller", async () => {
  const library = await bundled();
  const ids = (w: LoadedWorkflow) => JSON.stringify(w.compiled.steps);
  const routines = library.filter((w) => w.kind === "routine");
  assert.ok(routines.length >= 2, `${routines.length} bundled routines`);
  for (const routine of routines) {
    const name = routine.id.replace(/^waymark\.routine-/, "");
    const callers = library.filter((w) =>
      w.kind === "workflow" && ids(w).includes(`This step runs the routine \`${routine.id}\``)
    );
    assert.ok(
      callers.length >= 2,
      `${basename(routine.file)} (${name}): ${callers.length} callers`,
    );
  }
});
