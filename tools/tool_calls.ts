/**
 * `tools/list` and `tools/call` for a profile's tools. waymark validates arguments itself (on
 * the low-level SDK server), so every failure leaves as the structured error envelope.
 * @module
 */
import type { CallToolResult, Server, ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import { z } from "npm:zod@4.6.7";
import type { PublishedSchemas, ToolCall, ToolContext, ToolDefinition } from "./define_tool.ts";
import type { Connection } from "./connection.ts";
import { errorEnvelopeSchema, errorResult } from "./errors.ts";
import { progressSender } from "./notifications.ts";

type JsonSchema = Record<string, unknown>;
type ObjectSchema = { type: "object"; [key: string]: unknown };

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  delete out.$schema;
  return out;
}

// Publishing costs milliseconds per tool (zod's JSON Schema conversion), so it happens once per
// tool definition and process, on the first `tools/list`; bounded by the tools that exist.
const published = new WeakMap<
  ToolDefinition,
  { inputSchema: ObjectSchema; outputSchema: ObjectSchema }
>();

/** The published JSON Schemas of a tool: input, and output as success-or-error-envelope. */
export function toolSchemas(
  tool: ToolDefinition,
): { inputSchema: ObjectSchema; outputSchema: ObjectSchema } {
  let schemas = published.get(tool);
  if (!schemas) {
    schemas = {
      inputSchema: { ...jsonSchema(tool.input, "input"), type: "object" },
      outputSchema: {
        type: "object",
        anyOf: [jsonSchema(tool.output, "output"), jsonSchema(errorEnvelopeSchema, "output")],
      },
    };
    published.set(tool, schemas);
  }
  return schemas;
}

/** Serves `tools/list` (with `published` schemas where given) and `tools/call` for `tools`. */
export function registerTools(
  server: Server,
  connection: Connection,
  tools: readonly ToolDefinition[],
  published: Readonly<Record<string, PublishedSchemas>> = {},
): void {
  const listed = () =>
    tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      ...(published[tool.name] ?? toolSchemas(tool)),
      annotations: { readOnlyHint: tool.readOnly, idempotentHint: tool.idempotent },
    }));
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.setRequestHandler("tools/list", () => ({ tools: listed() }));
  server.setRequestHandler("tools/call", (request, ctx) => {
    const { name, arguments: args } = request.params;
    const tool = byName.get(name);
    if (!tool) {
      return errorResult({
        code: "INVALID_ARGUMENTS",
        message: `There is no tool named \`${name}\`. Tools: ${
          tools.map((t) => t.name).join(", ")
        }.`,
        retry: { kind: "not_retryable" },
        details: { tool: name },
      });
    }
    const call = tool.parse(args ?? {});
    if (!call.ok) return errorResult(call.error);
    return runCall(connection, { name, call: call.value, ctx });
  });
}

/** Runs a validated call, then sends what it changed; an exception becomes INTERNAL_ERROR. */
async function runCall(
  connection: Connection,
  request: { name: string; call: ToolCall; ctx: ServerContext },
): Promise<CallToolResult> {
  const { name, call, ctx } = request;
  const { deps, notifier } = connection;
  try {
    const appended = new Set<string>();
    const progress: Promise<void>[] = [];
    const sendProgress = progressSender(ctx);
    const context: ToolContext = {
      onAppend: (sessionId) => appended.add(sessionId),
      ...(sendProgress ? { onProgress: (p) => progress.push(sendProgress(p)) } : {}),
      ...(call.usesWorkspace ? { workspace: await connection.workspace(ctx) } : {}),
    };
    const result = await call.run(deps, context);
    if (!result.ok) {
      await notifier.health(result.error);
      return errorResult(result.error);
    }
    await Promise.all(progress);
    for (const sessionId of appended) await notifier.sessionChanged(sessionId);
    return {
      content: [{ type: "text", text: result.value.text() }],
      structuredContent: result.value.value,
    };
  } catch (error) {
    connection.log?.(
      `tool ${name} failed: ${error instanceof Error ? error.stack : String(error)}`,
    );
    return errorResult({
      code: "INTERNAL_ERROR",
      message: "waymark failed unexpectedly; nothing was recorded by this call. Retrying is safe.",
      retry: { kind: "retryable_immediate" },
    });
  }
}
