/**
 * Bearer JWTs from the team's identity provider, validated with `jose`: the signature against
 * the issuer's JWKS (fetched with a timeout, cached, refetched when an unknown `kid` appears
 * but at most every 30 s), with an allow-list of asymmetric algorithms (never `none`, never an
 * HMAC keyed by a public key); `iss` equal to the issuer; `aud` naming this server's resource
 * URI; `exp` (required) and `nbf` with a small clock tolerance. Keys that cannot be had within
 * the timeout refuse the call (`KeysUnavailable`): fail closed, in bounded time.
 * @module
 */
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "npm:jose@6.2.17";
import type { AuthInfo } from "npm:@modelcontextprotocol/server@2.4.0";
import type { AuthSettings } from "../../config/auth_settings.ts";
import type { Principal } from "../../engine/access/principal.ts";
import { authInfoOf } from "../../tools/context/principal.ts";
import { invalidToken, KeysUnavailable } from "./errors.ts";

/** The signature algorithms accepted: asymmetric only. */
export const ALLOWED_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;

/** Verifies one JWT, or throws an `OAuthError` / `KeysUnavailable`. */
export type JwtVerifier = (token: string) => Promise<AuthInfo>;

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/** The JWKS URL from the issuer's metadata (RFC 8414, then OpenID Connect discovery). */
async function discoverJwks(issuer: string, timeoutMs: number): Promise<string> {
  const base = issuer.replace(/\/$/, "");
  const origin = new URL(issuer).origin;
  const path = new URL(issuer).pathname.replace(/\/$/, "");
  const candidates = [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${base}/.well-known/openid-configuration`,
  ];
  // one deadline for both: discovery, then the JWKS, answer within twice the timeout at most
  const signal = AbortSignal.timeout(timeoutMs);
  for (const url of candidates) {
    const response = await fetch(url, { signal, redirect: "error" }).catch(() => null);
    if (!response?.ok) {
      await response?.body?.cancel();
      continue;
    }
    const meta = await response.json().catch(() => null) as {
      issuer?: unknown;
      jwks_uri?: unknown;
    };
    if (meta?.issuer === issuer && typeof meta.jwks_uri === "string") return meta.jwks_uri;
  }
  throw new KeysUnavailable(`the issuer's metadata (${issuer}) named no JWKS in time`);
}

/** The key set: the configured URL, or discovered once (a failed discovery is tried again). */
function keySet(settings: AuthSettings & { issuer: string }): () => Promise<KeySet> {
  const open = (url: string) =>
    createRemoteJWKSet(new URL(url), {
      timeoutDuration: settings.jwksTimeoutMs,
      cooldownDuration: 30_000,
      cacheMaxAge: 10 * 60_000,
    });
  if (settings.jwksUrl) {
    const set = open(settings.jwksUrl);
    return () => Promise.resolve(set);
  }
  let found: Promise<KeySet> | null = null;
  return () =>
    found ??= discoverJwks(settings.issuer, settings.jwksTimeoutMs).then(open, (error) => {
      found = null;
      throw error;
    });
}

/** What went wrong, in words, from jose's error (never the token). */
function refusal(error: unknown): Error {
  if (error instanceof KeysUnavailable) return error;
  if (error instanceof errors.JWKSTimeout) {
    return new KeysUnavailable("the issuer's JWKS did not answer in time");
  }
  if (error instanceof errors.JWTExpired) return invalidToken("The token has expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    const why: Record<string, string> = {
      iss: "The token was issued by another issuer",
      aud: "The token was not issued for this resource (audience)",
      nbf: "The token is not valid yet (nbf)",
      sub: "The token names no subject (sub)",
      exp: "The token has no expiry (exp)",
    };
    return invalidToken(why[error.claim] ?? `The token's ${error.claim} claim is not acceptable`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return invalidToken("The token's signing algorithm is not accepted (asymmetric ones only)");
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return invalidToken("The token's signature does not verify");
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return invalidToken("No signing key of the issuer matches the token");
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return invalidToken("The token is not a valid signed JWT");
  }
  if (error instanceof errors.JOSEError && error.code !== "ERR_JOSE_GENERIC") {
    return invalidToken("The token could not be verified");
  }
  // a JWKS that answered badly, or a network failure fetching it
  return new KeysUnavailable("the issuer's JWKS could not be fetched");
}

function scopesOf(payload: JWTPayload): string[] {
  const scope = payload.scope ?? payload.scp;
  if (typeof scope === "string") return scope.split(" ").filter((s) => s !== "");
  return Array.isArray(scope) ? scope.filter((s): s is string => typeof s === "string") : [];
}

const text = (value: unknown) => typeof value === "string" && value !== "" ? value : undefined;

/**
 * The principal a token names: `<iss>#<sub>`, displayed by `name`, `preferred_username` or
 * `email`; a bot when the subject is the client itself (a client-credentials grant).
 */
function principalOf(payload: JWTPayload, issuer: string): Principal {
  const sub = payload.sub!;
  const client = text(payload.client_id) ?? text(payload.azp);
  return {
    subject: `${issuer}#${sub}`.slice(0, 512),
    displayName: (text(payload.name) ?? text(payload.preferred_username) ?? text(payload.email) ??
      sub).slice(0, 256),
    kind: client !== undefined && client === sub ? "bot" : "person",
  };
}

/** A verifier of the issuer's JWTs for `settings`. */
export function createJwtVerifier(settings: AuthSettings & { issuer: string }): JwtVerifier {
  const keys = keySet(settings);
  const resource = new URL(settings.resource);
  return async (token) => {
    let payload: JWTPayload;
    try {
      const { payload: verified } = await jwtVerify(token, await keys(), {
        issuer: settings.issuer,
        audience: settings.resource,
        algorithms: [...ALLOWED_ALGORITHMS],
        clockTolerance: settings.clockToleranceSeconds,
        requiredClaims: ["exp", "sub"],
      });
      payload = verified;
    } catch (error) {
      throw refusal(error);
    }
    return authInfoOf(principalOf(payload, settings.issuer), {
      clientId: text(payload.client_id) ?? text(payload.azp) ?? payload.sub!,
      scopes: scopesOf(payload),
      expiresAt: payload.exp! + settings.clockToleranceSeconds,
      resource,
    });
  };
}
