/**
 * The web adapter: the read-only session viewer (pages, JSON API, live updates, Markdown
 * export) over the store's typed database.
 * @module
 */
export { createViewerApp, type Viewer, type ViewerOptions } from "./app.ts";
export { allowedHostsFor, CSP } from "./guard.ts";
export {
  DEFAULT_VIEWER_PORT,
  serveViewer,
  type ServeViewerOptions,
  type ViewerServer,
} from "./serve.ts";
export { exportSessionMarkdown } from "./export_md.ts";
export type { ViewerDb } from "./queries.ts";
