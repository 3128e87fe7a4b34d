/**
 * The MCP adapter: tool registration, schemas, the error envelope and the stdio transport.
 * @module
 */
export { createMcpServer, type McpServerOptions, toolSchemas } from "./server.ts";
export { type ToolDefinition, TOOLS } from "./definitions.ts";
export { errorEnvelopeSchema } from "./errors.ts";
export { serveMcpStdio } from "./stdio.ts";
