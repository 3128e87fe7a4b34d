/**
 * The workflow format: parsing, validation messages, source rules, compilation, hashing and
 * the committed JSON Schema.
 */
import assert from "node:assert/strict";
import { loadWorkflowFile, parseSourceFile, routinesAmong } from "../../engine/workflow/catalog.ts";
import { compileWorkflow } from "../../engine/workflow/compile.ts";
import { advanceState, initialState } from "../../engine/workflow/interpreter.ts";
import { pendingStep } from "../../engine/workflow/pending.ts";
import { workflowJsonSchema } from "../../engine/workflow/json_schema.ts";
import { parseWorkflowText } from "../../engine/workflow/parse.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";

const minimal = (id: string, extra = "") =>
  `{ // a comment
  "id": "${id}", "name": "T", "description": "d", "version": "1.0.0",
  "steps": [
    { "id": "one", "title": "One", "prompt": "Do {{thing}} for {{who.name}}" },
    { "id": "two", "title": "Two", "prompt": "Only when big", "runCondition": { "var": "size", "equals": "big" } },
    { "id": "three", "title": "Three", "promptBlocks": { "goal": "G", "procedure": ["a", "b"], "verify": ["v"] } }${extra}
  ],
}`;

Deno.test("every bundled workflow loads, is namespaced under waymark. and references the schema", async () => {
  assert.ok(BUNDLED_WORKFLOWS.length >= 3);
  const routines = routinesAmong(BUNDLED_WORKFLOWS.map((f) => parseSourceFile(f)));
  for (const file of BUNDLED_WORKFLOWS) {
    const loaded = await loadWorkflowFile(file, { routines });
    assert.ok(loaded.ok, loaded.ok ? "" : JSON.stringify(loaded.error));
    assert.ok(loaded.workflow.id.startsWith("waymark."));
    assert.deepEqual(loaded.workflow.warnings, []);
    assert.match(file.text, /"\$schema":\s*"\.\/workflow\.schema\.json"/);
  }
});

Deno.test("JSONC syntax errors name the file, line and column", () => {
  const result = parseWorkflowText('{ "id": "a.b", \n "name": }', "/tmp/broken.jsonc");
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.equal(result.error.file, "/tmp/broken.jsonc");
  assert.match(result.error.issues[0]!.message, /line 2, column \d+/);
});

Deno.test("schema errors name the JSON path and the fix", () => {
  const text = minimal("user.t").replace('"title": "One", ', '"titel": "One", ');
  const result = parseWorkflowText(text, "w.jsonc");
  assert.equal(result.ok, false);
  if (result.ok) return;
  const paths = result.error.issues.map((i) => `${i.path}: ${i.message}`);
  assert.ok(paths.some((p) => p.startsWith("steps[0]: unknown key(s) `titel`")), paths.join("\n"));
  assert.ok(
    paths.some((p) => p.startsWith("steps[0].title: missing required string")),
    paths.join("\n"),
  );
});

Deno.test("a step with both prompt and promptBlocks, or neither, is refused", () => {
  const both = minimal("user.t").replace(
    '"prompt": "Do',
    '"promptBlocks": {"goal": "x"}, "prompt": "Do',
  );
  assert.equal(parseWorkflowText(both, "w").ok, false);
  const neither = minimal("user.t").replace(', "prompt": "Do {{thing}} for {{who.name}}"', "");
  assert.equal(parseWorkflowText(neither, "w").ok, false);
});

Deno.test("a condition with two operators is refused at load time", () => {
  const text = minimal("user.t").replace('"equals": "big"', '"equals": "big", "gt": 3');
  const result = parseWorkflowText(text, "w");
  assert.equal(result.ok, false);
});

Deno.test("a non-bundled source defining waymark.* is refused with a rename suggestion", async () => {
  const result = await loadWorkflowFile({
    source: "project",
    file: "p.json",
    text: minimal("waymark.sneaky"),
  });
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.match(result.error.issues[0]!.message, /reserved.*project\.sneaky/);
});

Deno.test("a legacy id runs with a warning suggesting a namespaced rename", async () => {
  const result = await loadWorkflowFile({
    source: "user",
    file: "u.json",
    text: minimal("Old-Flow"),
  });
  assert.ok(result.ok);
  if (!result.ok) return;
  assert.equal(result.workflow.idStatus, "legacy");
  assert.equal(result.workflow.warnings[0]!.code, "LEGACY_WORKFLOW_ID");
  assert.match(result.workflow.warnings[0]!.message, /user\.old-flow/);
});

Deno.test("duplicate step ids are a compile error naming both places", () => {
  const text = minimal("user.t", ', { "id": "one", "title": "Again", "prompt": "x" }');
  const parsed = parseWorkflowText(text, "w");
  assert.ok(parsed.ok);
  if (!parsed.ok) return;
  const compiled = compileWorkflow(parsed.workflow);
  assert.equal(compiled.ok, false);
  if (compiled.ok) return;
  assert.match(compiled.issues[0]!.message, /duplicate step id `one` \(first at steps\[0\]\)/);
});

Deno.test("workflowHash is stable for the same file and changes with any behaviour change", async () => {
  const a = await loadWorkflowFile({ source: "user", file: "a", text: minimal("user.t") });
  const b = await loadWorkflowFile({
    source: "user",
    file: "b",
    text: minimal("user.t").replace("// a comment", ""),
  });
  const c = await loadWorkflowFile({
    source: "user",
    file: "c",
    text: minimal("user.t").replace("Only when big", "Only when huge"),
  });
  assert.ok(a.ok && b.ok && c.ok);
  if (!a.ok || !b.ok || !c.ok) return;
  assert.match(a.workflow.hash, /^sha256:[0-9a-f]{64}$/);
  assert.equal(a.workflow.hash, b.workflow.hash, "comments and file names do not change the hash");
  assert.notEqual(a.workflow.hash, c.workflow.hash);
});

Deno.test("the interpreter skips steps whose runCondition fails and fills placeholders", async () => {
  const loaded = await loadWorkflowFile({ source: "user", file: "a", text: minimal("user.t") });
  assert.ok(loaded.ok);
  if (!loaded.ok) return;
  const { compiled } = loaded.workflow;
  const context = { thing: "the review", who: { name: "Ada" }, size: "small" };
  const first = initialState(compiled, context);
  assert.equal(pendingStep(compiled, first, context)!.prompt, "Do the review for Ada");
  const second = advanceState(compiled, first, { context }).state;
  assert.equal(pendingStep(compiled, second, context)!.stepId, "three");
  assert.equal(
    pendingStep(compiled, second, context)!.prompt,
    "## Goal\nG\n\n## Procedure\n1. a\n2. b\n\n## Verify\n- v",
  );
  const big = advanceState(compiled, first, { context: { ...context, size: "big" } }).state;
  assert.equal(pendingStep(compiled, big, context)!.stepId, "two");
  assert.equal(
    pendingStep(compiled, advanceState(compiled, second, { context }).state, context),
    null,
  );
  assert.equal(
    pendingStep(compiled, first, {})!.prompt,
    "Do (not provided: thing) for (not provided: who.name)",
  );
});

Deno.test("the committed workflow.schema.json matches the zod schema (run `deno task schema`)", async () => {
  const committed = JSON.parse(
    await Deno.readTextFile(new URL("../../workflows/workflow.schema.json", import.meta.url)),
  );
  assert.deepEqual(committed, workflowJsonSchema());
});
