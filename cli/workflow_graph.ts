/**
 * `waymark workflows inspect ID --graph`: the workflow as a Mermaid flowchart, read from every
 * source `serve` would list (no database opened).
 * @module
 */
import { resolvePaths } from "../open.ts";
import { createWorkflowSource } from "../store/workflow_files/mod.ts";
import { mermaidFlowchart, workflowGraph } from "../engine/authoring/graph.ts";
import { BUNDLED_WORKFLOWS } from "../workflows/mod.ts";
import { allSteps } from "../engine/workflow/interpreter.ts";
import type { CommandInput } from "./host.ts";
import { printErr, printOut } from "./terminal.ts";

/** The layers of an overlay and where each step came from, as lines (none for a plain workflow). */
export async function layerLines(id: string, input: CommandInput): Promise<string> {
  const source = createWorkflowSource(BUNDLED_WORKFLOWS, resolvePaths(input.options).workflowDirs);
  const workflow = (await source.load()).workflows.find((w) => w.id === id);
  const layers = workflow?.layers;
  if (!workflow || !layers) return "";
  const lines = [
    "",
    `Layers (base first): ${layers.layers.map((l) => `${l.workflowId} (${l.file})`).join(" < ")}`,
    `Base hash now: ${layers.baseHash}${
      layers.writtenAgainst
        ? ` (changed: the overlay was written against ${layers.writtenAgainst})`
        : ""
    }`,
    "Step origins:",
    ...allSteps(workflow.compiled).map((s) =>
      `- ${s.id}: ${
        layers.origins[s.id] ?? layers.origins[s.id.split("--")[0]!] ?? "waymark (injected)"
      }`
    ),
  ];
  return `${lines.join("\n")}\n`;
}

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
