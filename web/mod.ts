/**
 * The web adapter: the read-only session viewer (pages, JSON API, live updates, Markdown
 * export) over the store's typed database. (`mcp_http.ts`, MCP over HTTP, is imported by
 * `main.ts` directly.)
 *
 * Where things are: `app.ts` composes the viewer from `guard.ts` (Host/Origin allowlist,
 * read-only, CSP) and `routes/` (assets, pages, api, events, errors); `pages/` holds one file
 * per page and `parts/` the pieces pages share; `model.ts` and `queries.ts` read the store.
 * Pages are server-rendered with hono/jsx: agent-written text goes through JSX escaping or the
 * sanitising Markdown renderer, and nothing is inline style or script (the CSP forbids both).
 * @module
 */
export { createViewerApp, type Viewer, type ViewerOptions } from "./app.ts";
export { allowedHostsFor, CSP } from "./request_guard.ts";
export {
  DEFAULT_VIEWER_PORT,
  serveViewer,
  type ServeViewerOptions,
  type ViewerServer,
} from "./serve.ts";
export { exportSessionMarkdown } from "./export_md.ts";
export type { ViewerDb } from "./queries.ts";
