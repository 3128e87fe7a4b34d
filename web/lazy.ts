/**
 * The web adapters (viewer, MCP over HTTP), loaded on first use. The specifiers are computed
 * on purpose: Deno prepares every literal dynamic-import target of the module graph at start-up
 * (reading and resolving the viewer, Hono and markdown-it, ~20 ms) even when it is never called.
 * `deno task bundle` maps this file to `lazy_bundle.ts`, whose literal imports it can inline.
 * @module
 */

/** The viewer (`web/mod.ts`). */
export function loadViewer(): Promise<typeof import("./mod.ts")> {
  return import(new URL("./mod.ts", import.meta.url).href);
}

/** MCP over Streamable HTTP (`web/mcp_http.ts`). */
export function loadMcpHttp(): Promise<typeof import("./mcp_http.ts")> {
  return import(new URL("./mcp_http.ts", import.meta.url).href);
}
