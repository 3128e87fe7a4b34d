/**
 * `waymark workflows inspect ID --graph`: the workflow as a Mermaid flowchart, read from every
 * source `serve` would list (no database opened).
 * @module
 */
import { resolvePaths } from "../mod.ts";
import { createWorkflowSource } from "../store/workflow_files/mod.ts";
import { mermaidFlowchart, workflowGraph } from "../engine/authoring/graph.ts";
import { BUNDLED_WORKFLOWS } from "../workflows/mod.ts";
import type { CommandInput } from "./host.ts";
import { printErr, printOut } from "./terminal.ts";

/** Prints the Mermaid flowchart of workflow `id`; 1 when no source has it. */
export async function printWorkflowGraph(id: string, input: CommandInput): Promise<number> {
  const source = createWorkflowSource(BUNDLED_WORKFLOWS, resolvePaths(input.options).workflowDirs);
  const workflow = (await source.load()).workflows.find((w) => w.id === id);
  if (!workflow) {
    printErr(`${id}: no workflow with that id (waymark workflows list shows them)\n`);
    return 1;
  }
  printOut(mermaidFlowchart(workflowGraph(workflow.compiled)));
  return 0;
}
