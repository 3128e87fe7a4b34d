/**
 * The MCP adapter: tool registration, schemas, the error envelope and the stdio transport.
 * @module
 */
export {
  createMcpServer,
  type McpServerOptions,
  SESSION_URI_PREFIX,
  toolSchemas,
} from "./server.ts";
export { type ToolContext, type ToolDefinition, TOOLS } from "./definitions.ts";
export { firstFileRoot, gitState, observeWorkspace, RootsCache } from "./workspace.ts";
export { errorEnvelopeSchema } from "./errors.ts";
export { serveMcpStdio } from "./stdio.ts";
