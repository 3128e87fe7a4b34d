/**
 * The viewer reads a run's workflow name from the head of its pinned snapshot (no dialect's
 * JSON function, and never a whole snapshot): every bundled workflow's compiled JSON yields its
 * name from the first KiB, escapes included; a head where the name does not come first among
 * scalar members yields nothing (the page falls back to the workflow id).
 * @module
 */
import assert from "node:assert/strict";
import { loadWorkflowFiles } from "../../engine/workflow/catalog.ts";
import { workflowNameOf } from "../../store/sql/viewer/session.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";

Deno.test("a compiled workflow's name is read from the first KiB of its snapshot", async () => {
  // loaded together: the library's workflows call its routines
  for (const loaded of await loadWorkflowFiles(BUNDLED_WORKFLOWS)) {
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.error));
    const text = JSON.stringify(loaded.workflow.compiled);
    assert.equal(workflowNameOf(text.slice(0, 1024)), loaded.workflow.compiled.name);
  }
  const tricky = JSON.stringify({ format: 2, id: "a.b", kind: "workflow", name: 'Say "hi" \\ ✓' });
  assert.equal(workflowNameOf(tricky), 'Say "hi" \\ ✓');
});

Deno.test("a head without the name among its leading scalar members yields nothing", () => {
  assert.equal(workflowNameOf(null), null);
  assert.equal(workflowNameOf('{"id":"a.b","steps":[{"name":"x"}],"name":"late"}'), null);
  assert.equal(workflowNameOf('{"id":"a.b","name":"cut sh'), null);
  assert.equal(workflowNameOf("not json"), null);
});
