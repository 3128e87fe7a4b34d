/**
 * The bench's floor: the smallest MCP server the SDK waymark uses can be, one `echo` tool with
 * a zod input schema, served over stdio. Its cold start and call latency, measured by the same
 * harness in the same run, are what waymark's numbers are divided by.
 *
 *   deno run -A tests/bench/echo_server.ts
 * @module
 */
import { McpServer } from "npm:@modelcontextprotocol/server@2.4.0";
import { serveStdio, StdioServerTransport } from "npm:@modelcontextprotocol/server@2.4.0/stdio";
import { z } from "npm:zod@4.6.7";
import process from "node:process";

function echoServer(): McpServer {
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    {
      description: "Returns its text.",
      inputSchema: z.object({ text: z.string() }),
    },
    ({ text }) => ({ content: [{ type: "text", text }], structuredContent: { text } }),
  );
  return server;
}

if (import.meta.main) {
  const handle = serveStdio(() => echoServer(), {
    transport: new StdioServerTransport(process.stdin, process.stdout),
  });
  process.stdin.on("end", () => void handle.close());
}
