/**
 * `workflows try`'s engine part: each defect file written for it (one defect each) is found and
 * nothing else is; every bundled workflow and routine is clean; a workflow whose paths explode
 * is sampled and says so; the report is the same value twice over.
 * @module
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { loadWorkflowFile, loadWorkflowFiles } from "../../engine/workflow/catalog.ts";
import type { CompiledWorkflow } from "../../engine/workflow/compiled.ts";
import { renderTryReport, tryWorkflow } from "../../engine/authoring/mod.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";

const FIXTURES = join(import.meta.dirname!, "..", "fixtures", "try");

async function bundled(): Promise<Map<string, CompiledWorkflow>> {
  const loaded = await loadWorkflowFiles(BUNDLED_WORKFLOWS);
  return new Map(loaded.flatMap((l) => l.ok ? [[l.workflow.id, l.workflow.compiled]] : []));
}

async function compiledFixture(name: string): Promise<CompiledWorkflow> {
  const file = join(FIXTURES, `${name}.jsonc`);
  const loaded = await loadWorkflowFile({
    source: "extra",
    file,
    text: await readFile(file, "utf8"),
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.error));
  return loaded.workflow.compiled;
}

const DEFECTS = {
  unreached_step: { stepId: "double-check" },
  impassable_gate: { stepId: "summarise" },
  loop_cannot_exit: { loopId: "polish" },
  fix_does_not_work: { stepId: "verdict" },
  unset_placeholder: { stepId: "notify" },
  unresolved_reference: { stepId: "fan-out" },
  step_budget: { stepId: "read" },
} as const;

for (const [kind, where] of Object.entries(DEFECTS)) {
  Deno.test(`try finds exactly the defect of ${kind}.jsonc`, async () => {
    const report = tryWorkflow(await compiledFixture(kind));
    assert.equal(report.ok, false);
    const kinds = [...new Set(report.problems.map((p) => p.kind))];
    assert.deepEqual(kinds, [kind], renderTryReport(report));
    for (const p of report.problems) {
      if ("stepId" in where) assert.equal(p.stepId, where.stepId);
      if ("loopId" in where) assert.equal(p.loopId, where.loopId);
    }
  });
}

Deno.test("every defect file in tests/fixtures/try has a test above (load_error: the CLI's)", async () => {
  const names = (await readdir(FIXTURES)).filter((n) => n.endsWith(".jsonc"))
    .map((n) => n.replace(/\.jsonc$/, "")).sort();
  assert.deepEqual(names, [...Object.keys(DEFECTS), "load_error"].sort());
});

Deno.test("the hiding condition of an unreached step is named, and prompt sizes are bytes", async () => {
  const report = tryWorkflow(await compiledFixture("unreached_step"));
  const hidden = report.steps.find((s) => s.stepId === "double-check")!;
  assert.equal(hidden.reached, false);
  assert.match(hidden.hiddenBy!, /"equals":"careful"/);
  const choose = report.steps.find((s) => s.stepId === "choose")!;
  assert.ok(choose.reached && choose.promptBytes > "Pick `mode`: fast|careful.".length);
});

Deno.test("every bundled workflow and routine is clean under try", async () => {
  const all = await bundled();
  assert.equal(all.size, BUNDLED_WORKFLOWS.length);
  for (const compiled of all.values()) {
    const report = tryWorkflow(compiled, { resolve: (id) => all.get(id) ?? null });
    assert.ok(report.ok, renderTryReport(report));
    assert.ok(report.steps.every((s) => s.reached && s.promptBytes > 0));
  }
});

Deno.test("a parallel step's delegation is walked as a child run", async () => {
  const all = await bundled();
  const text = JSON.stringify({
    id: "trytest.fan_out",
    name: "Fan out",
    description: "One delegation to a bundled routine.",
    version: "1.0.0",
    steps: [{
      id: "fan-out",
      title: "Baseline in a subagent",
      type: "parallel",
      prompt: "Record the baseline.",
      parallelDelegations: [{ workflowId: "waymark.routine-test_baseline" }],
    }],
  });
  const loaded = await loadWorkflowFile({ source: "extra", file: "fan_out.json", text });
  assert.ok(loaded.ok);
  const report = tryWorkflow(loaded.workflow.compiled, { resolve: (id) => all.get(id) ?? null });
  assert.deepEqual(report.children, ["waymark.routine-test_baseline"]);
  assert.ok(report.ok, renderTryReport(report));
  assert.deepEqual(report.steps.map((s) => s.stepId), ["fan-out", "fan-out-synthesis"]);
});

Deno.test("a workflow whose paths explode is sampled, says so, and still reaches every step", async () => {
  const steps = Array.from({ length: 10 }, (_, i) => ({
    id: `s${i}`,
    title: `Step ${i}`,
    prompt: `Only when k${i} is on.`,
    runCondition: { var: `k${i}`, equals: true },
  }));
  const text = JSON.stringify({
    id: "trytest.explode",
    name: "Explode",
    description: "Ten independent branches.",
    version: "1.0.0",
    steps: [{ id: "start", title: "Start", prompt: "Begin." }, ...steps],
  });
  const loaded = await loadWorkflowFile({ source: "extra", file: "explode.json", text });
  assert.ok(loaded.ok);
  const report = tryWorkflow(loaded.workflow.compiled, { maxPaths: 16 });
  assert.equal(report.paths.total, 1024);
  assert.equal(report.paths.walked, 16);
  assert.equal(report.paths.sampled, true);
  assert.ok(report.ok, renderTryReport(report));
  assert.match(renderTryReport(report), /walked 16 of 1024 \(a sample/);
  assert.equal(report.paths.list?.length, 16);
  assert.deepEqual(
    Object.keys(report.paths.list![0]!.values).sort(),
    steps.map((_, i) => `k${i}`).sort(),
  );
});

Deno.test("try's report is the same value and the same JSON every time", async () => {
  const all = await bundled();
  const compiled = all.get("waymark.workflow_authoring")!;
  const once = JSON.stringify(tryWorkflow(compiled, { resolve: (id) => all.get(id) ?? null }));
  const twice = JSON.stringify(tryWorkflow(compiled, { resolve: (id) => all.get(id) ?? null }));
  assert.equal(once, twice);
});
