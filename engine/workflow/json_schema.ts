/**
 * The published JSON Schema of the workflow format, generated from the zod schema (the one
 * definition), so editors can validate workflow files as they are written.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { workflowFileSchema } from "./schema.ts";
import { overlayFileSchema } from "./overlay_schema.ts";

/**
 * The JSON Schema of a workflow file or an overlay (`*.overlay.json[c]`), as committed in
 * `workflows/workflow.schema.json`.
 */
export function workflowJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(z.union([workflowFileSchema, overlayFileSchema]), {
    io: "input",
    unrepresentable: "any",
  }) as Record<
    string,
    unknown
  >;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "waymark workflow",
    description:
      "A waymark workflow file (JSON or JSONC), compatible with the WorkRail format, or an overlay (`*.overlay.json[c]`) that layers changes over another workflow.",
    ...Object.fromEntries(Object.entries(generated).filter(([k]) => k !== "$schema")),
  };
}
