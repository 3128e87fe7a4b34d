/**
 * The starting file `workflows new` writes: small, valid, clean under `workflows try`, and showing
 * the three things most workflows need (a decision set at the step that knows it, a step it
 * guards, a notes line a rule checks). Pure.
 * @module
 */
import { checkWorkflowId, onlyBundledMayDefine } from "../workflow/workflow_ids.ts";

/** Why `id` cannot name a new workflow, or `null` when it can. */
export function newIdProblem(id: string): string | null {
  const check = checkWorkflowId(id);
  if (check.status === "invalid") return check.reason;
  if (check.status === "legacy") {
    return "give it a namespace: `namespace.name` (such as `team.release`)";
  }
  if (onlyBundledMayDefine(id) || check.namespace === "wr") {
    return `the \`${check.namespace}.\` namespace is reserved for bundled workflows; use your own (such as \`team.\`)`;
  }
  return null;
}

function title(id: string): string {
  const name = id.slice(id.indexOf(".") + 1).replace(/[-_]+/g, " ");
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** The text of a new workflow file with `id`, whose `$schema` is `schemaPath`. */
export function starterWorkflow(id: string, schemaPath: string): string {
  const workflow = {
    $schema: schemaPath,
    id,
    name: title(id),
    description:
      "One line: what this workflow does and when to pick it (list_workflows shows this line).\n\nWhen not to use it, and what to use instead.\n\nContext: `depth` quick|thorough (set at the first step).",
    version: "0.1.0",
    steps: [
      {
        id: "understand",
        title: "Understand the task",
        prompt:
          "Restate the task in your own words and list what you need to know.\n\nSet `depth` (quick|thorough) in the `context` of this acknowledgement: `thorough` when the change is risky or unfamiliar.\n\nNotes: the task, the open questions, and why you chose that depth.",
        requiredContext: ["depth"],
      },
      {
        id: "look-deeper",
        title: "Look deeper",
        runCondition: { var: "depth", equals: "thorough" },
        prompt:
          "Read the code and the history around the change, and run what is there to run.\n\nNotes: what you read and ran, and what it changed in your plan.",
      },
      {
        id: "do-it",
        title: "Do the work",
        prompt:
          "Do the work, in small steps you check as you go.\n\nNotes must include the line `Done: <what changed and how you checked it>`.",
        validationCriteria: [{
          type: "regex",
          pattern: "^Done: .+",
          flags: "m",
          message: "notes need a line starting `Done:` saying what changed and how it was checked",
        }],
      },
    ],
  };
  return `// A waymark workflow. Check it with \`waymark workflows validate <file>\`, walk every path with\n// \`waymark workflows try <file>\` (\`--watch\` runs it again on every save). See docs/authoring.md.\n${
    JSON.stringify(workflow, null, 2)
  }\n`;
}
