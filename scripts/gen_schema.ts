/**
 * Writes `workflows/workflow.schema.json` from the zod schema. Run with `deno task schema`
 * after changing the workflow format; a test fails while the committed file is stale.
 * @module
 */
import { workflowJsonSchema } from "../engine/mod.ts";

const target = new URL("../workflows/workflow.schema.json", import.meta.url);
await Deno.writeTextFile(target, JSON.stringify(workflowJsonSchema(), null, 2) + "\n");
console.error(`wrote ${target.pathname}`);
