/**
 * The seam between the HTTP service's authentication (`web/auth/`) and the MCP handlers: the
 * authenticating middleware hands the SDK an `AuthInfo` whose `extra.principal` is the
 * {@linkcode Principal} it proved; a handler reads it back from its request context with
 * {@linkcode principalOf}. The access token itself never travels this way: `AuthInfo.token`
 * holds a placeholder, so no handler can pass a caller's token on.
 * @module
 */
import type { AuthInfo, ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import { type Principal, principalSchema } from "../../engine/access/principal.ts";

/** What `AuthInfo.token` holds instead of the bearer token (tokens are never passed through). */
export const REDACTED_TOKEN = "[redacted]";

/** What {@linkcode authInfoOf} records besides the principal. */
export interface AuthFacts {
  /** The client the token was issued to (a JWT's `client_id`/`azp`, a PAT's id). */
  clientId: string;
  /** The token's scopes. */
  scopes: string[];
  /** When the token expires, in seconds since the epoch (a PAT without expiry: none). */
  expiresAt?: number;
  /** The resource (this server's URI) the token was issued for. */
  resource?: URL;
}

/** The `AuthInfo` the SDK carries to handlers for `principal` (no token inside). */
export function authInfoOf(principal: Principal, facts: AuthFacts): AuthInfo {
  return {
    token: REDACTED_TOKEN,
    clientId: facts.clientId,
    scopes: facts.scopes,
    ...(facts.expiresAt === undefined ? {} : { expiresAt: facts.expiresAt }),
    ...(facts.resource === undefined ? {} : { resource: facts.resource }),
    extra: { principal },
  };
}

/**
 * The principal of the call whose request context is `ctx`: the one authentication proved, or
 * `undefined` when the call was not authenticated (stdio, or HTTP without authentication).
 */
export function principalOf(ctx: Pick<ServerContext, "http"> | undefined): Principal | undefined {
  const parsed = principalSchema.safeParse(ctx?.http?.authInfo?.extra?.principal);
  return parsed.success ? parsed.data : undefined;
}
