/**
 * What a host's model reads of waymark, computed from the MCP wire exactly as each host
 * transforms it (the fast check; the host tests measure through the real hosts):
 *
 * - Claude Code sends each tool as `{name: "mcp__<server>__<tool>", description, input_schema}`
 *   (the input schema as `tools/list` gives it) and hands the model a result's
 *   `structuredContent` as JSON when there is one.
 * - Gemini CLI (`@google/gemini-cli-core` 0.61, `tools/tool-registry.js`, `tools/mcp-tool.js`,
 *   `tools/tools.js`) declares `{name: "mcp_<server>_<tool>", description, parametersJsonSchema}`,
 *   where it rewrites a two-member `type` list with `null` to `nullable` and adds its own
 *   `wait_for_previous` property to every tool; the model reads each text content item wrapped in
 *   `<untrusted_context>` (which is Gemini's, not counted here).
 * @module
 */

/** A tool as `tools/list` gives it. */
export interface ListedTool {
  /** Name. */
  name: string;
  /** Description. */
  description?: string;
  /** Input JSON Schema. */
  inputSchema: Record<string, unknown>;
}

/** The server name both hosts' entries use (`setup --client`). */
export const SERVER_NAME = "waymark";

/** The property Gemini CLI 0.61 adds to every tool's parameters (`addWaitForPreviousParameter`). */
const WAIT_FOR_PREVIOUS = {
  type: "boolean",
  description:
    "Set to true to wait for all previously requested tools in this turn to complete before starting. Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools.",
};

const utf8 = new TextEncoder();
/** UTF-8 bytes of a string. */
export function bytes(text: string): number {
  return utf8.encode(text).length;
}

/** Claude Code's tool definitions for a listing, as sent in a Messages API request. */
export function claudeToolDefinitions(tools: readonly ListedTool[]): unknown[] {
  return tools.map((t) => ({
    name: `mcp__${SERVER_NAME}__${t.name}`,
    description: t.description ?? "",
    input_schema: t.inputSchema,
  }));
}

/** Gemini CLI's `{type: [T, "null"]}` → `{type: T, nullable: true}` rewrite. */
function geminiNullable(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(geminiNullable);
  const out: Record<string, unknown> = { ...value as Record<string, unknown> };
  const type = out.type;
  if (Array.isArray(type) && type.length === 2) {
    const n = type.indexOf("null");
    if (n !== -1 && typeof type[1 - n] === "string") {
      out.type = type[1 - n];
      out.nullable = true;
    }
  }
  for (const k of Object.keys(out)) out[k] = geminiNullable(out[k]);
  return out;
}

/** Gemini CLI's function declarations for a listing. */
export function geminiFunctionDeclarations(tools: readonly ListedTool[]): unknown[] {
  return tools.map((t) => {
    const schema = geminiNullable(t.inputSchema) as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    return {
      name: `mcp_${SERVER_NAME}_${t.name}`.replace(/[^a-zA-Z0-9_\-.:]/g, "_"),
      description: t.description ?? "",
      parametersJsonSchema: {
        ...schema,
        properties: { ...properties, wait_for_previous: WAIT_FOR_PREVIOUS },
      },
    };
  });
}

/** Bytes of each host's tool definitions (the JSON array as a request carries it). */
export function toolDefinitionBytes(tools: readonly ListedTool[]): {
  claude: number;
  gemini: number;
} {
  return {
    claude: bytes(JSON.stringify(claudeToolDefinitions(tools))),
    gemini: bytes(JSON.stringify(geminiFunctionDeclarations(tools))),
  };
}

/** A tool result as a client receives it. */
export interface ToolAnswer {
  /** Content items. */
  content: { type: string; text?: string }[];
  /** Structured content. */
  structuredContent?: Record<string, unknown>;
}

/**
 * What each host's model reads of one answer, and how much of it is beyond the pending step's
 * own prompt (its JSON-escaped form in the JSON, its text in the text).
 */
export function answerBytes(answer: ToolAnswer): {
  json: number;
  text: number;
  jsonOverhead: number;
  textOverhead: number;
} {
  const structured = answer.structuredContent ?? {};
  const json = bytes(JSON.stringify(structured));
  const text = answer.content.reduce((n, c) => n + (c.text ? bytes(c.text) : 0), 0);
  const prompt = (structured.pending as { prompt?: string } | null | undefined)?.prompt;
  return {
    json,
    text,
    jsonOverhead: json - (prompt === undefined ? 0 : bytes(JSON.stringify(prompt))),
    textOverhead: text - (prompt === undefined ? 0 : bytes(prompt)),
  };
}
