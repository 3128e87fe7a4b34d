/**
 * A profile's published face: its instructions and each tool as `tools/list` shows it (on the
 * 2025-11-25 revision, with `execution`), schemas converted from zod. `deno task schema` writes
 * the default profile's to `profiles/default_listing.json`, which the early server answers from.
 * @module
 */
import type { ToolProfile } from "./define_tool.ts";
import type { PublishedProfile } from "./early_server.ts";
import { toolSchemas } from "./tool_calls.ts";

/** The published face of `profile`, every tool (flagged ones with their flag) converted. */
export function publishProfile(profile: ToolProfile): PublishedProfile {
  return {
    instructions: profile.instructions,
    tools: profile.tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      ...toolSchemas(tool),
      annotations: {
        title: tool.title,
        readOnlyHint: tool.readOnly,
        destructiveHint: tool.destructive,
        idempotentHint: tool.idempotent,
      },
      execution: { taskSupport: tool.taskSupport ?? "forbidden" },
      ...(tool.flag ? { flag: tool.flag } : {}),
    })),
  };
}
