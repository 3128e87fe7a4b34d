/**
 * Writes the published JSON Schemas from the zod schemas: `workflows/workflow.schema.json` (the
 * workflow format) and `tools/profiles/default_listing.json` (the default profile's instructions
 * and its tools as `tools/list` serves them, so a server converts nothing at start-up and answers
 * the handshake before the engine loads). Run with `deno task schema` after changing either;
 * tests fail while a committed file is stale.
 * @module
 */
import { workflowJsonSchema } from "../engine/mod.ts";
import { DEFAULT_PROFILE } from "../tools/mod.ts";
import { publishProfile } from "../tools/publish.ts";

const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";
const workflow = new URL("../workflows/workflow.schema.json", import.meta.url);
await Deno.writeTextFile(workflow, json(workflowJsonSchema()));
console.error(`wrote ${workflow.pathname}`);
const tools = new URL("../tools/profiles/default_listing.json", import.meta.url);
await Deno.writeTextFile(tools, json(publishProfile(DEFAULT_PROFILE)));
console.error(`wrote ${tools.pathname}`);
