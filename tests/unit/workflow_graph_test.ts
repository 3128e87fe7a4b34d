/**
 * The workflow graph model and its Mermaid text: conditions on the edges that enter a guarded
 * step (and a skip edge past it), loops as a subgraph with their kind and bound and a
 * next-iteration edge back, routine steps grouped under their call, a parallel step's
 * delegations as child nodes; the same text every time.
 * @module
 */
import assert from "node:assert/strict";
import { loadWorkflowFile, loadWorkflowFiles } from "../../engine/workflow/catalog.ts";
import { mermaidFlowchart, workflowGraph } from "../../engine/authoring/graph.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";

Deno.test("mermaid: conditions, skip edges, loops with bounds, routines", async () => {
  const loaded = await loadWorkflowFiles(BUNDLED_WORKFLOWS);
  const found = loaded.find((l) => l.ok && l.workflow.id === "waymark.test_first_implementation");
  assert.ok(found?.ok);
  const text = mermaidFlowchart(workflowGraph(found.workflow.compiled));
  assert.equal(text, mermaidFlowchart(workflowGraph(found.workflow.compiled)));
  assert.ok(text.startsWith(`flowchart TD\n  start(("start"))\n`));
  assert.match(
    text,
    /step_read_plan -->\|"if planStatus == #quot;gaps#quot;"\| step_settle_gaps/,
  );
  assert.match(text, /step_read_plan -->\|"skip"\| step_baseline__find_checks/);
  assert.match(text, /subgraph routine_baseline\["routine: baseline"\]/);
  assert.match(
    text,
    /loop_slices\{\{"[^"]+<br\/>while the agent's loop_control decision, max 40"\}\}/,
  );
  assert.match(text, /step_refactor_and_commit -\.->\|"next iteration"\| loop_slices/);
  assert.match(text, /loop_slices -->\|"done"\| step_acceptance_check/);
  assert.match(text, /step_hand_off --> finish\n$/);
});

Deno.test("mermaid: a parallel step's delegations, with their conditions", async () => {
  const text = JSON.stringify({
    id: "team.fan_out",
    name: "Fan out",
    description: "d",
    version: "1",
    steps: [{
      id: "reviews",
      title: "Reviews",
      type: "parallel",
      prompt: "Review.",
      parallelDelegations: [
        { workflowId: "waymark.routine-test_baseline" },
        { workflowId: "team.docs", runCondition: { var: "docs", equals: true } },
      ],
    }],
  });
  const loaded = await loadWorkflowFile({ source: "extra", file: "f.json", text });
  assert.ok(loaded.ok);
  const graph = workflowGraph(loaded.workflow.compiled);
  const step = graph.items[0]!;
  assert.ok(step.kind === "step");
  assert.deepEqual(step.delegations, [
    { workflowId: "waymark.routine-test_baseline" },
    { workflowId: "team.docs", condition: "docs == true" },
  ]);
  const mermaid = mermaidFlowchart(graph);
  assert.match(mermaid, /step_reviews_d0\[\["waymark\.routine-test_baseline"\]\]/);
  assert.match(mermaid, /step_reviews -\.->\|"if docs == true"\| step_reviews_d1/);
  assert.match(mermaid, /step_reviews --> step_reviews_synthesis/);
});
