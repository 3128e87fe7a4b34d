/**
 * Serving MCP over stdio: stdout carries JSON-RPC only.
 * @module
 */
import { serveStdio } from "npm:@modelcontextprotocol/server@2.4.0/stdio";
import type { Server } from "npm:@modelcontextprotocol/server@2.4.0";
import process from "node:process";

/** Serves one MCP connection on this process's stdin/stdout until it closes. */
export function serveMcpStdio(
  factory: () => Server,
  options: { log?: (line: string) => void; onClose?: () => void } = {},
): { close(): Promise<void> } {
  const handle = serveStdio(factory, {
    onerror: (error) => options.log?.(`stdio: ${error.message}`),
  });
  process.stdin.on("end", () => options.onClose?.());
  return handle;
}
