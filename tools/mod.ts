/**
 * The MCP adapter: the server and its parts, the tool profiles, the error envelope and the
 * stdio transport.
 * @module
 */
export { createMcpServer, type McpServerOptions } from "./server/server.ts";
export {
  defineTool,
  type ToolCall,
  type ToolContext,
  type ToolDefinition,
  type ToolProfile,
  type ToolSpec,
  type ToolSuccess,
} from "./calls/define_tool.ts";
export { DEFAULT_PROFILE, TOOLS } from "./profiles/default.ts";
export { deepworkProfile, type DeepworkProfileOptions } from "./profiles/deepwork.ts";
export { toolSchemas } from "./calls/publish.ts";
export { SESSION_URI_PREFIX } from "./surfaces/resources.ts";
export { firstFileRoot, gitState, observeWorkspace, RootsCache } from "./context/workspace.ts";
export { errorEnvelopeSchema } from "./calls/error_envelope.ts";
export { serveMcpStdio } from "./stdio/stdio.ts";
