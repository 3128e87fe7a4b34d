/**
 * `web/lazy.ts` as the single-file build sees it (`deno task bundle` maps one to the other):
 * literal imports, so the bundler inlines the web adapters.
 * @module
 */

/** The viewer (`web/mod.ts`). */
export function loadViewer(): Promise<typeof import("./mod.ts")> {
  return import("./mod.ts");
}

/** MCP over Streamable HTTP (`web/mcp_http.ts`). */
export function loadMcpHttp(): Promise<typeof import("./mcp_http.ts")> {
  return import("./mcp_http.ts");
}
