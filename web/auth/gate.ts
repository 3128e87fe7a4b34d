/**
 * The HTTP service's authentication gate, as Hono middleware placed in front of everything it
 * serves (the MCP endpoint and the viewer): waymark as an OAuth 2.1 resource server (the MCP
 * authorization specification, 2025-11-25 and 2026-07-28).
 *
 * - `GET /.well-known/oauth-protected-resource[/<path of the MCP URL>]`: the protected resource
 *   metadata (RFC 9728) naming the authorization server and the scopes; no token needed.
 * - A token in the query string (`?access_token=`) is refused, 400 `invalid_request`.
 * - Otherwise the request needs `Authorization: Bearer <token>`: a JWT of the configured issuer
 *   or a personal access token (`wmp_…`). None or a bad one: 401 with `WWW-Authenticate: Bearer
 *   …, resource_metadata="…"`; missing scopes: 403 `insufficient_scope`; the issuer's keys out
 *   of reach: 503 with `Retry-After` (fail closed, in bounded time).
 *
 * An accepted request's `AuthInfo` (its principal; no token) is kept for the request and read
 * by {@linkcode requestAuth}. Tokens are never logged, stored or passed on. An MCP session
 * belongs to the principal whose `initialize` opened it: another principal presenting its
 * `Mcp-Session-Id` is told the session does not exist (404), as if it had guessed.
 * @module
 */
import type { MiddlewareHandler } from "npm:hono@4.13.19";
import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  verifyBearerToken,
} from "npm:@modelcontextprotocol/server@2.4.0";
import type { AuthSettings } from "../../config/auth_settings.ts";
import { PERSONAL_TOKEN_PREFIX, type PersonalTokens } from "../../store/sql/personal_tokens.ts";
import { invalidToken, KeysUnavailable, TokenStoreUnavailable } from "./errors.ts";
import { createJwtVerifier } from "./jwt.ts";
import { createPersonalTokenVerifier } from "./personal.ts";

/** What the gate needs. */
export interface AuthGateOptions {
  /** The settings in force. */
  settings: AuthSettings;
  /** The store's personal access tokens (needed when `settings.personalTokens`). */
  personalTokens?: PersonalTokens;
  /** Where log lines go (never a token). */
  log?: (line: string) => void;
}

/** The gate and what the server around it needs to know. */
export interface AuthGate {
  /** The middleware. */
  middleware: MiddlewareHandler;
  /** The `Host` this service is reached by from outside (the resource URI's), for the Host check. */
  publicHost: string;
  /** Where the protected resource metadata is (advertised in every challenge). */
  resourceMetadataUrl: string;
}

const accepted = new WeakMap<Request, AuthInfo>();

/** The `AuthInfo` the gate accepted for `request`, or `undefined` (no gate, or not this request). */
export function requestAuth(request: Request): AuthInfo | undefined {
  return accepted.get(request);
}

/** RFC 9728 metadata of this resource. */
function metadataOf(settings: AuthSettings): Record<string, unknown> {
  return {
    resource: settings.resource,
    ...(settings.issuer ? { authorization_servers: [settings.issuer] } : {}),
    ...(settings.scopes.length > 0 ? { scopes_supported: settings.scopes } : {}),
    bearer_methods_supported: ["header"],
    resource_name: "waymark",
  };
}

/** One verifier for both kinds of token, told apart by the personal tokens' prefix. */
function verifierOf(options: AuthGateOptions): (token: string) => Promise<AuthInfo> {
  const { settings } = options;
  const issuer = settings.issuer;
  const jwt = issuer ? createJwtVerifier({ ...settings, issuer }) : null;
  const pat = settings.personalTokens && options.personalTokens
    ? createPersonalTokenVerifier(options.personalTokens, { resource: settings.resource })
    : null;
  return (token) => {
    if (token.startsWith(PERSONAL_TOKEN_PREFIX)) {
      if (pat) return pat(token);
      throw invalidToken("Personal access tokens are not accepted by this server");
    }
    if (jwt) return jwt(token);
    throw invalidToken("This server accepts personal access tokens only");
  };
}

/** Logs at most one line per `everyMs` (a JWKS outage under load must not flood the log). */
function throttled(log: ((line: string) => void) | undefined, everyMs: number) {
  let last = -Infinity;
  return (line: string) => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    log?.(line);
  };
}

/** Sessions bound at most: above `--max-sessions`' ceiling, so no live session loses its owner. */
const MAX_BOUND_SESSIONS = 100_000;

/** Which principal (by subject) opened each MCP session, oldest forgotten first. */
function sessionOwners(): {
  refuses(sessionId: string | undefined, subject: string): boolean;
  bind(sessionId: string, subject: string): void;
} {
  const owners = new Map<string, string>();
  return {
    refuses: (sessionId, subject) =>
      sessionId !== undefined && owners.has(sessionId) && owners.get(sessionId) !== subject,
    bind(sessionId, subject) {
      owners.set(sessionId, subject);
      if (owners.size > MAX_BOUND_SESSIONS) owners.delete(owners.keys().next().value!);
    },
  };
}

function subjectOf(info: AuthInfo): string {
  return String((info.extra?.principal as { subject?: unknown } | undefined)?.subject ?? "");
}

/** The authentication gate for `options.settings`. */
export function createAuthGate(options: AuthGateOptions): AuthGate {
  const { settings } = options;
  const resource = new URL(settings.resource);
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(resource);
  const metadataPaths = new Set([
    "/.well-known/oauth-protected-resource",
    new URL(resourceMetadataUrl).pathname,
  ]);
  const metadata = metadataOf(settings);
  const verifier = { verifyAccessToken: verifierOf(options) };
  const challenge = { requiredScopes: settings.scopes, resourceMetadataUrl };
  const outage = throttled(options.log, 10_000);
  const sessions = sessionOwners();
  const middleware: MiddlewareHandler = async (c, next) => {
    const url = new URL(c.req.url);
    if (url.searchParams.has("access_token")) {
      return c.json(
        {
          error: "invalid_request",
          error_description: "Access tokens are never accepted in a query string; send the " +
            "header Authorization: Bearer <token> instead.",
        },
        400,
        { "www-authenticate": 'Bearer error="invalid_request"' },
      );
    }
    if (metadataPaths.has(url.pathname)) {
      if (c.req.method !== "GET" && c.req.method !== "HEAD") {
        return c.text("405 Method Not Allowed\n", 405, { allow: "GET, HEAD" });
      }
      return c.json(metadata);
    }
    let info: AuthInfo;
    try {
      info = await verifyBearerToken(c.req.header("authorization"), {
        verifier,
        expectedResource: resource,
        ...challenge,
      });
      accepted.set(c.req.raw, info);
    } catch (error) {
      if (!(error instanceof KeysUnavailable)) return bearerAuthChallengeResponse(error, challenge);
      const store = error instanceof TokenStoreUnavailable;
      outage(
        `authentication: refusing ${store ? "personal access tokens" : "bearer JWTs"} for now: ${
          store ? error.detail : error.message
        }`,
      );
      return c.json(
        {
          error: "temporarily_unavailable",
          error_description: `The token cannot be checked now (${error.message}); try again.`,
        },
        503,
        // a database restart takes about a second; an identity provider's outage longer
        { "retry-after": store ? "1" : "5" },
      );
    }
    const subject = subjectOf(info);
    const presented = c.req.header("mcp-session-id");
    if (sessions.refuses(presented, subject)) {
      return c.json({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Unknown or expired MCP session; initialize again." },
        id: null,
      }, 404);
    }
    await next();
    const opened = c.res.headers.get("mcp-session-id");
    if (opened && presented === undefined) sessions.bind(opened, subject);
  };
  return { middleware, publicHost: resource.host, resourceMetadataUrl };
}
