/**
 * The key that makes a retried `start_workflow` open one run (`StartOptions.replayKey`): a
 * start sent again after its answer was lost (a cut stream, a killed replica) finds the run
 * the first one wrote and answers what it did. The key is, in order of preference:
 *
 * - the client's own, `_meta["waymark/idempotencyKey"]` on the request: any transport,
 *   stateless replicas included (a key names one start of its principal, for good);
 * - else the request as the transport tells it apart: the same JSON-RPC id on the same MCP
 *   session (HTTP), or on the same connection (stdio), which a client re-sends only as a retry.
 *
 * A stateless request without a key has none: its JSON-RPC id is not unique across clients.
 * Every key is scoped to the caller's principal, so one principal cannot replay another's start.
 * @module
 */
import type { ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import { principalOf } from "../context/principal.ts";

/** The `_meta` field a client puts its own key in. */
export const IDEMPOTENCY_META_KEY = "waymark/idempotencyKey";
/** The longest client key taken (a longer one is ignored, as if absent). */
const MAX_CLIENT_KEY = 256;

/**
 * The replay key of a call, or `undefined`. `connection` tells one stdio connection from
 * another; `stateless`: the request has no connection to belong to.
 */
export function replayKeyOf(
  ctx: ServerContext,
  at: { connection: string; stateless: boolean },
): string | undefined {
  const who = principalOf(ctx)?.subject ?? "";
  const given = ctx.mcpReq._meta?.[IDEMPOTENCY_META_KEY];
  if (typeof given === "string" && given.length > 0 && given.length <= MAX_CLIENT_KEY) {
    return JSON.stringify(["client", who, given]);
  }
  if (at.stateless) return undefined;
  const scope = ctx.sessionId ?? (ctx.http ? undefined : at.connection);
  return scope === undefined ? undefined : JSON.stringify(["request", who, scope, ctx.mcpReq.id]);
}
