/**
 * `web/lazy.ts` as the single-file build sees it (`deno task bundle` maps one to the other):
 * literal imports, so the bundler inlines the web adapters.
 * @module
 */
import type * as lazy from "./lazy.ts";

/** The viewer (`web/mod.ts`). */
export const loadViewer: typeof lazy.loadViewer = () => import("./mod.ts");

/** MCP over Streamable HTTP (`web/mcp_http.ts`). */
export const loadMcpHttp: typeof lazy.loadMcpHttp = () => import("./mcp_http.ts");
