/**
 * The MCP server: tools/list and tools/call on the low-level SDK server, so waymark owns
 * argument validation and every failure leaves as the structured error envelope.
 * @module
 */
import { Server } from "npm:@modelcontextprotocol/server@2.4.0";
import { z } from "npm:zod@4.6.7";
import type { EngineDeps } from "../engine/mod.ts";
import { type ToolDefinition, TOOLS } from "./definitions.ts";
import { errorEnvelopeSchema, errorResult, invalidArguments } from "./errors.ts";

/** Options for {@linkcode createMcpServer}. */
export interface McpServerOptions {
  /** Server version reported to clients. */
  version: string;
  /** Where to send log lines (never stdout). */
  log?: (line: string) => void;
}

const INSTRUCTIONS = [
  "waymark runs structured workflows one step at a time.",
  "list_workflows, then start_workflow; do the pending step; then continue_workflow with the stateToken and ackToken exactly as returned, plus output.notesMarkdown (and output.artifacts when the step names an output contract).",
  "A blocked answer lists what is missing; fix it and retry with the new ackToken.",
  "Tokens are opaque: never edit them. If you lose your place, call continue_workflow with only the stateToken.",
].join(" ");

type JsonSchema = Record<string, unknown>;
type ObjectSchema = { type: "object"; [key: string]: unknown };

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** The published JSON Schemas of a tool: input, and output as success-or-error-envelope. */
export function toolSchemas(
  tool: ToolDefinition,
): { inputSchema: ObjectSchema; outputSchema: ObjectSchema } {
  return {
    inputSchema: { ...jsonSchema(tool.input, "input"), type: "object" },
    outputSchema: {
      type: "object",
      anyOf: [jsonSchema(tool.output, "output"), jsonSchema(errorEnvelopeSchema, "output")],
    },
  };
}

/** Creates an MCP server exposing waymark's tools over the given engine dependencies. */
export function createMcpServer(deps: EngineDeps, options: McpServerOptions): Server {
  const server = new Server(
    { name: "waymark", version: options.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  const listed = TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    ...toolSchemas(tool),
    annotations: { readOnlyHint: tool.readOnly, idempotentHint: tool.name !== "start_workflow" },
  }));
  const byName = new Map(TOOLS.map((t) => [t.name, t]));
  server.setRequestHandler("tools/list", () => ({ tools: listed as never }));
  server.setRequestHandler("tools/call", async (request) => {
    const { name, arguments: args } = request.params;
    const tool = byName.get(name);
    if (!tool) {
      return errorResult({
        code: "INVALID_ARGUMENTS",
        message: `There is no tool named \`${name}\`. Tools: ${
          TOOLS.map((t) => t.name).join(", ")
        }.`,
        retry: { kind: "not_retryable" },
        details: { tool: name },
      });
    }
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) return errorResult(invalidArguments(name, parsed.error.issues));
    try {
      const result = await tool.run(deps, parsed.data);
      if (!result.ok) return errorResult(result.error);
      return {
        content: [{ type: "text" as const, text: tool.render(result.value) }],
        structuredContent: result.value as Record<string, unknown>,
      };
    } catch (error) {
      options.log?.(`tool ${name} failed: ${error instanceof Error ? error.stack : String(error)}`);
      return errorResult({
        code: "INTERNAL_ERROR",
        message:
          "waymark failed unexpectedly; nothing was recorded by this call. Retrying is safe.",
        retry: { kind: "retryable_immediate" },
      });
    }
  });
  return server;
}
