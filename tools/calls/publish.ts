/**
 * A profile's published face: its instructions and each tool as `tools/list` shows it, schemas
 * converted from zod. `tools/list` builds each entry here ({@linkcode listedTool}, then the
 * request's revision adds `execution` where it has the field); `deno task schema` writes every
 * profile's face, with `execution` and flags, to `profiles/<name>_listing.json`, which a server
 * answers from before the engine loads (`early_server.ts`).
 * @module
 */
import type { Tool } from "npm:@modelcontextprotocol/server@2.4.0";
import type { PublishedSchemas, ToolDefinition, ToolProfile } from "./define_tool.ts";
import type { PublishedProfile } from "../profiles/registry.ts";
import { errorEnvelopeSchema } from "./error_envelope.ts";
import { inputJsonSchema, outputJsonSchema } from "./published_schema.ts";

// Publishing costs milliseconds per tool (zod's JSON Schema conversion), so it happens once per
// tool definition and process, on the first `tools/list`; bounded by the tools that exist.
const published = new WeakMap<ToolDefinition, PublishedSchemas>();

/** The published JSON Schemas of a tool: input, and output as success-or-error-envelope. */
export function toolSchemas(tool: ToolDefinition): PublishedSchemas {
  let schemas = published.get(tool);
  if (!schemas) {
    schemas = {
      inputSchema: inputJsonSchema(tool.input),
      outputSchema: outputJsonSchema(tool.output, errorEnvelopeSchema),
    };
    published.set(tool, schemas);
  }
  return schemas;
}

/** A tool as every revision lists it, with its published `schemas`. */
export function listedTool(tool: ToolDefinition, schemas: PublishedSchemas): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    ...schemas,
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: tool.destructive,
      idempotentHint: tool.idempotent,
    },
  } as Tool;
}

/** A tool's `execution` (where a revision lists it): whether it can be started as a task. */
export function executionOf(tool: ToolDefinition): NonNullable<Tool["execution"]> {
  return { taskSupport: tool.taskSupport ?? "forbidden" };
}

/** The published face of `profile`, every tool (flagged ones with their flag) converted. */
export function publishProfile(profile: ToolProfile): PublishedProfile {
  return {
    ...(profile.serverName ? { serverName: profile.serverName } : {}),
    instructions: profile.instructions,
    tools: profile.tools.map((tool) => ({
      ...listedTool(tool, toolSchemas(tool)),
      execution: executionOf(tool),
      ...(tool.flag ? { flag: tool.flag } : {}),
    })),
  };
}
