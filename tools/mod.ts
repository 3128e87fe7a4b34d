/**
 * The MCP adapter: the server and its parts, the tool profiles, the error envelope and the
 * stdio transport.
 * @module
 */
export { createMcpServer, type McpServerOptions } from "./server.ts";
export {
  defineTool,
  type ToolCall,
  type ToolContext,
  type ToolDefinition,
  type ToolProfile,
  type ToolSpec,
  type ToolSuccess,
} from "./define_tool.ts";
export { DEFAULT_PROFILE, TOOLS } from "./profiles/default.ts";
export { deepworkProfile, type DeepworkProfileOptions } from "./profiles/deepwork.ts";
export { toolSchemas } from "./publish.ts";
export { SESSION_URI_PREFIX } from "./resources.ts";
export { firstFileRoot, gitState, observeWorkspace, RootsCache } from "./workspace.ts";
export { errorEnvelopeSchema } from "./error_envelope.ts";
export { serveMcpStdio } from "./stdio.ts";
