/**
 * Writes the published JSON Schemas from the zod schemas: `workflows/workflow.schema.json` (the
 * workflow format) and `tools/profiles/default_schemas.json` (what `tools/list` serves for the
 * default tools, so a server converts nothing at start-up). Run with `deno task schema` after
 * changing either; tests fail while a committed file is stale.
 * @module
 */
import { workflowJsonSchema } from "../engine/mod.ts";
import { TOOLS, toolSchemas } from "../tools/mod.ts";

const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";
const workflow = new URL("../workflows/workflow.schema.json", import.meta.url);
await Deno.writeTextFile(workflow, json(workflowJsonSchema()));
console.error(`wrote ${workflow.pathname}`);
const tools = new URL("../tools/profiles/default_schemas.json", import.meta.url);
await Deno.writeTextFile(
  tools,
  json(Object.fromEntries(TOOLS.map((t) => [t.name, toolSchemas(t)]))),
);
console.error(`wrote ${tools.pathname}`);
