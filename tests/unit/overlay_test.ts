/**
 * Overlays resolved in the engine: an overlay of an overlay layers over the combined workflow
 * (three layers, each step's origin), a step inside a loop body can be targeted, `replace` and
 * `remove` update the origins, and a change that cannot apply names its line.
 * @module
 */
import assert from "node:assert/strict";
import { parseOverlayText, resolveOverlays } from "../../engine/authoring/overlay.ts";
import type { WorkflowFile } from "../../engine/workflow/schema.ts";
import { allSteps } from "../../engine/workflow/interpreter.ts";

const BASE: WorkflowFile = {
  id: "team.base",
  name: "Base",
  description: "d",
  version: "1",
  steps: [
    { id: "a", title: "A", prompt: "Do a." },
    {
      id: "loop",
      title: "Loop",
      type: "loop",
      loop: { type: "for", count: 2, maxIterations: 2 },
      body: [{ id: "b", title: "B", prompt: "Do b." }],
    },
    { id: "c", title: "C", prompt: "Do c." },
  ],
};

function overlay(id: string, base: string, changes: unknown[]) {
  const text = JSON.stringify({ id, overlay: { base, changes } }, null, 2);
  const parsed = parseOverlayText(text, `${id}.overlay.json`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
  return parsed.parsed;
}

const baseOf = (id: string) =>
  id === "team.base" ? { file: BASE, hash: `sha256:${"a".repeat(64)}`, path: "base.json" } : null;

Deno.test("an overlay of an overlay: three layers, loop bodies targeted, origins kept", async () => {
  const first = overlay("team.first", "team.base", [
    { insertAfter: "b", steps: [{ id: "b2", title: "B2", prompt: "Then b2." }] },
    { replace: "c", step: { id: "c", title: "C again", prompt: "Do c, better." } },
  ]);
  const second = overlay("team.second", "team.first", [
    { remove: "a" },
    { appendPrompt: "b", text: "And note it." },
  ]);
  const [r2, r1] = await resolveOverlays([second, first], { baseOf, routines: new Map() });
  assert.ok(r1!.ok && r2!.ok);
  assert.deepEqual(allSteps(r2.compiled).map((s) => s.id), ["b", "b2", "c"]);
  assert.deepEqual(r2.layers.layers.map((l) => l.workflowId), [
    "team.base",
    "team.first",
    "team.second",
  ]);
  assert.deepEqual(r2.layers.origins, {
    loop: "team.base",
    b: "team.base, prompt appended by team.second",
    b2: "team.first",
    c: "team.first",
  });
  assert.equal(r2.layers.baseHash, r1.hash);
  assert.deepEqual(allSteps(r2.compiled)[0]!.fragments, [{ text: "And note it." }]);
  assert.notEqual(r1.hash, r2.hash);
});

Deno.test("a change that cannot apply is a load error at its line", async () => {
  const bad = overlay("team.bad", "team.base", [
    { remove: "a" },
    { appendPrompt: "loop", text: "x" },
  ]);
  const [r] = await resolveOverlays([bad], { baseOf, routines: new Map() });
  assert.ok(r && !r.ok);
  assert.equal(r.error.file, "team.bad.overlay.json:9");
  assert.match(r.error.issues[0]!.message, /no prompt to append to.*\(line 9\)/);
});

Deno.test("a malformed overlay names its line", () => {
  const text =
    '{\n  "id": "team.x",\n  "overlay": {\n    "base": "team.base",\n    "changes": [{ "insertAfter": "a" }]\n  }\n}';
  const parsed = parseOverlayText(text, "x.overlay.json");
  assert.ok(!parsed.ok);
  assert.equal(parsed.error.file, "x.overlay.json:5");
});
