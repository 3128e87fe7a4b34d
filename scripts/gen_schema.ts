/**
 * Writes the published JSON Schemas from the zod schemas: `workflows/workflow.schema.json` (the
 * workflow format) and, for every profile, `tools/profiles/<name>_listing.json` (its
 * instructions and its tools as `tools/list` serves them, so a server converts nothing at
 * start-up and answers the handshake before the engine loads). Run with `deno task schema` after
 * changing either; tests fail while a committed file is stale.
 * @module
 */
import { workflowJsonSchema } from "../engine/workflow/json_schema.ts";
import { publishProfile } from "../tools/calls/publish.ts";
import { PROFILE_NAMES } from "../tools/profiles/registry.ts";
import { PROFILE_TOOLS, type ProfileInputs } from "../tools/profiles/tools.ts";

const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";
const workflow = new URL("../workflows/workflow.schema.json", import.meta.url);
await Deno.writeTextFile(workflow, json(workflowJsonSchema()));
console.error(`wrote ${workflow.pathname}`);
// the listing depends on no job or gate: an empty source stands for them
const inputs: ProfileInputs = {
  jobs: { load: () => Promise.resolve({ jobs: [], errors: [] }) },
  gate: () => null,
};
for (const name of PROFILE_NAMES) {
  const file = new URL(`../tools/profiles/${name}_listing.json`, import.meta.url);
  await Deno.writeTextFile(file, json(publishProfile(PROFILE_TOOLS[name](inputs))));
  console.error(`wrote ${file.pathname}`);
}
