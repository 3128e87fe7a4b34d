/**
 * The protocol revisions waymark speaks, and the one choice between them: a request that
 * carries the per-request `_meta` envelope speaks 2026-07-28; any other speaks what its
 * connection negotiated at the handshake (2025-11-25, or 2025-06-18 and the revisions before
 * it), or on a stateless HTTP server what the request's `MCP-Protocol-Version` header names. Handlers choose once per request ({@linkcode revisionOf} with its context) and pass the
 * revision on; the server's capabilities choose once per connection (without one).
 * @module
 */
import type { Server, ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import type { Revision } from "./revision.ts";
import { REV_2025_06_18 } from "./rev2025_06_18.ts";
import { REV_2025_11_25 } from "./rev2025_11_25.ts";
import { REV_2026_07_28 } from "./rev2026_07_28.ts";

export type { Revision, TaskOutcome } from "./revision.ts";
export { legacyTask } from "./rev2025_11_25.ts";
export { TASKS_EXTENSION } from "./rev2026_07_28.ts";

/** The revisions known by name; any other negotiated version speaks {@linkcode REV_2025_06_18}. */
const BY_VERSION: ReadonlyMap<string, Revision> = new Map(
  [REV_2026_07_28, REV_2025_11_25].map((revision) => [revision.version, revision]),
);

/**
 * The revision a request speaks (`ctx`), or without one the revision its connection
 * negotiated.
 */
export function revisionOf(server: Server, ctx?: ServerContext): Revision {
  if (ctx?.mcpReq.envelope !== undefined) return REV_2026_07_28;
  // a stateless HTTP server's instance never saw the handshake; the client names its revision
  // on every request after it (`MCP-Protocol-Version`)
  const version = server.getNegotiatedProtocolVersion() ??
    ctx?.http?.req?.headers.get("mcp-protocol-version") ?? "";
  return BY_VERSION.get(version) ?? REV_2025_06_18;
}
