/**
 * `waymark workflows list|inspect|validate|schema`: the workflows every source offers, one
 * workflow's steps, a file checked (with the routines it may call) and hashed, and the JSON
 * Schema of workflow files.
 * @module
 */
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { openCore, resolvePaths, type WaymarkOptions } from "../open.ts";
import { loadConfig } from "../config/config_file.ts";
import { planVerification } from "../engine/verification/policy.ts";
import { describeCommand } from "../engine/workflow/verify_block.ts";
import { renderInspect, renderList } from "../engine/answers/text.ts";
import { allSteps, stepCount } from "../engine/workflow/interpreter.ts";
import { workflowJsonSchema } from "../engine/workflow/json_schema.ts";
import { formatLoadError } from "../engine/workflow/parse.ts";
import { backtrackingPatterns } from "../engine/workflow/pattern_check.ts";
import { unfillablePlaceholders } from "../engine/workflow/placeholder_check.ts";
import { isOverlayName } from "../engine/workflow/overlay_schema.ts";
import type { Warning } from "../engine/workflow/catalog.ts";
import type { CompiledWorkflow } from "../engine/workflow/compiled.ts";
import { delegatedIds, type Delegates, fanOutMessage, tooWide } from "../engine/run/delegations.ts";
import type { CommandInput } from "./host.ts";
import { json, loadNearby, nearbyDelegates } from "./workflow_nearby.ts";
import { printErr, printOut } from "./terminal.ts";

/** A warning for each delegation to a workflow neither bundled nor beside the file. */
function unknownDelegates(compiled: CompiledWorkflow, known: Delegates): Warning[] {
  return [...delegatedIds(compiled)].filter((id) => !known.has(id)).map((id) => ({
    code: "DELEGATION_UNAVAILABLE",
    message:
      `a parallel step delegates to \`${id}\`, which neither the bundled library nor this folder (or its routines/) provides; put it in a workflow directory, or no child run is opened for it and the agent does that part itself`,
  }));
}

/**
 * `workflows validate FILE`: load, compile and hash the file with the routines it may call, and
 * report its warnings. A file with the text of one waymark ships is that bundled file (so it may
 * use the reserved `waymark.` namespace), validated all the same.
 */
async function validateFile(file: string, options: WaymarkOptions): Promise<number> {
  const { nearby, loaded } = await loadNearby(file);
  if (!loaded.ok) {
    printErr(`${formatLoadError(loaded.error)}\n`);
    return 1;
  }
  const { workflow } = loaded;
  const delegates = await nearbyDelegates(workflow, nearby);
  const wide = tooWide(workflow.compiled, delegates);
  if (wide) {
    printErr(`${file}: ${fanOutMessage(workflow.id, wide)}\n`);
    return 1;
  }
  printOut(
    `${file}: ok (${workflow.id}, ${stepCount(workflow.compiled)} steps, ${workflow.hash})\n`,
  );
  const checks = [
    ...unfillablePlaceholders(workflow.compiled),
    ...backtrackingPatterns(workflow.compiled),
    ...unknownDelegates(workflow.compiled, delegates),
  ];
  for (const w of [...workflow.warnings, ...checks]) {
    printOut(`warning [${w.code}]: ${w.message}\n`);
  }
  printOut(await commandLines(workflow.compiled, options));
  return 0;
}

/**
 * The verification commands a workflow wants, one line each, with whether the user's config
 * lets waymark run them in this folder (the workspace `waymark serve` would see here).
 */
async function commandLines(compiled: CompiledWorkflow, options: WaymarkOptions): Promise<string> {
  const wanted = allSteps(compiled).filter((s) => s.verify);
  if (wanted.length === 0) return "";
  const paths = resolvePaths(options);
  const policy = await loadConfig(paths.home).then((c) => c.verification, () => null);
  const lines = wanted.map((s) => {
    const plan = planVerification(s.verify!, {
      policy: policy ?? { workspaces: [] },
      workspace: paths.workspace,
    });
    const verdict = plan.kind === "run"
      ? `allowed in ${paths.workspace}`
      : `not allowed in ${paths.workspace}`;
    return `- ${s.id}: ${describeCommand(s.verify!)}: ${verdict}\n`;
  });
  return `commands (${wanted.length}): run by waymark on acknowledgement where the user's ${
    join(paths.home, "config.json")
  } allows them (docs/verification.md); otherwise the agent runs them\n${lines.join("")}`;
}

/**
 * `waymark workflows validate FILE...`: each file in turn, as if validated alone; the exit code
 * is the worst of theirs. A file that cannot be read is said so, with what to do.
 */
export async function validateWorkflow(input: CommandInput): Promise<number> {
  if (input.args.length === 0) return input.usage();
  let code = 0;
  for (const file of input.args) code = Math.max(code, await validateOne(file, input.options));
  return code;
}

async function validateOne(file: string, options: WaymarkOptions): Promise<number> {
  const unreadable = await readFile(file, "utf8").then(() => null, (error) => error as Error);
  if (unreadable) {
    const code = (unreadable as { code?: string }).code;
    const why = code === "ENOENT"
      ? "no such file (check the path)"
      : code === "EISDIR"
      ? "it is a folder; name one workflow file in it"
      : unreadable.message;
    printErr(`${file}: cannot read it: ${why}\n`);
    return 1;
  }
  if (isOverlayName(basename(file))) {
    const result = await (await import("./workflow_try.ts")).validateOverlay(file, options);
    printOut(result.out);
    printErr(result.err);
    return result.code;
  }
  return await validateFile(file, options);
}

/** `waymark workflows schema`. */
export function workflowSchema(_input: CommandInput): Promise<number> {
  printOut(`${JSON.stringify(workflowJsonSchema(), null, 2)}\n`);
  return Promise.resolve(0);
}

/** `waymark workflows list`. */
export async function listWorkflows(input: CommandInput): Promise<number> {
  const waymark = await openCore(input.options);
  try {
    const result = await waymark.list();
    if (!result.ok) throw new Error(result.error.message);
    printOut(input.flags.json ? json(result.value) : `${renderList(result.value)}\n`);
    return 0;
  } finally {
    await waymark.close();
  }
}

/** `waymark workflows inspect ID`. */
export async function inspectWorkflow(input: CommandInput): Promise<number> {
  const [id] = input.args;
  if (!id) return input.usage();
  if (input.flags.graph) {
    return await (await import("./workflow_graph.ts")).printWorkflowGraph(id, input);
  }
  const waymark = await openCore(input.options);
  try {
    const result = await waymark.inspect(id);
    if (!result.ok) {
      printErr(`${result.error.message}\n`);
      return 1;
    }
    printOut(input.flags.json ? json(result.value) : `${renderInspect(result.value)}\n`);
    if (!input.flags.json) {
      printOut(await (await import("./workflow_graph.ts")).layerLines(id, input));
    }
    return 0;
  } finally {
    await waymark.close();
  }
}
