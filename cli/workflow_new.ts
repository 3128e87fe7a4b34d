/**
 * `waymark workflows new ID [FILE]`: a small valid starting file with `$schema` set, and the JSON
 * Schema beside it, in the project's workflow folder unless a path is given. Never overwrites.
 * @module
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import process from "node:process";
import { dirname, join, relative, resolve } from "node:path";
import { resolvePaths } from "../open.ts";
import { newIdProblem, starterWorkflow } from "../engine/authoring/starter.ts";
import { workflowJsonSchema } from "../engine/workflow/json_schema.ts";
import type { CommandInput } from "./host.ts";
import { printErr, printOut } from "./terminal.ts";

const SCHEMA_FILE = "workflow.schema.json";

async function exists(path: string): Promise<boolean> {
  return await stat(path).then(() => true, () => false);
}

/** `waymark workflows new ID [FILE]`. */
export async function newWorkflow(input: CommandInput): Promise<number> {
  const [id, target] = input.args;
  if (!id) return input.usage();
  const problem = newIdProblem(id);
  if (problem) {
    printErr(`${id}: not a workflow id for a new file: ${problem}\n`);
    return 1;
  }
  const file = resolve(
    target ?? join(resolvePaths(input.options).workspace, ".waymark", "workflows", `${id}.jsonc`),
  );
  if (await exists(file)) {
    printErr(`${file} exists; nothing was written (pick another id or path, or edit that file)\n`);
    return 1;
  }
  await mkdir(dirname(file), { recursive: true });
  const schema = join(dirname(file), SCHEMA_FILE);
  const wroteSchema = !await exists(schema);
  if (wroteSchema) await writeFile(schema, `${JSON.stringify(workflowJsonSchema(), null, 2)}\n`);
  await writeFile(file, starterWorkflow(id, `./${SCHEMA_FILE}`), { flag: "wx" });
  const shown = relative(process.cwd(), file) || file;
  printOut(
    `wrote ${shown}${
      wroteSchema ? ` and ${SCHEMA_FILE} beside it` : ""
    }\nnext: waymark workflows try --watch ${shown}\n`,
  );
  return 0;
}
