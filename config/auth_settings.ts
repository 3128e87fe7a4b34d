/**
 * The HTTP service's authentication settings, written once: the `auth` section of
 * `config.json` and the `serve --http` flags that override it give the same fields, checked by
 * the same schema. `web/auth/` enforces them; this module only says what they are.
 * @module
 */
import { z } from "npm:zod@4.6.7";

/** How far a JWT's `exp`/`nbf` may be off the server's clock by default, in seconds. */
export const DEFAULT_CLOCK_TOLERANCE_S = 30;
/** How long a JWKS (or issuer metadata) fetch may take by default, in ms; then the call fails closed. */
export const DEFAULT_JWKS_TIMEOUT_MS = 3000;

const httpUrl = (name: string) =>
  z.url({ protocol: /^https?$/, error: `${name} must be an http:// or https:// URL` })
    .refine((u) => !u.includes("#"), `${name} must not have a #fragment`);

/** An OAuth scope token (RFC 6749 §3.3); `name` says where it was given, for the message. */
export function scopeSchema(name: string): z.ZodString {
  return z.string().regex(
    /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/,
    `${name}: a scope is 1 to 128 printable ASCII characters without spaces, quotes or backslashes`,
  );
}

/** The `auth` section of `config.json`. */
export const authSettingsFileSchema = z.object({
  resource: httpUrl("auth.resource").optional().describe(
    "This server's public MCP URL (e.g. https://waymark.example.com/mcp): the audience tokens must name.",
  ),
  issuer: httpUrl("auth.issuer").optional().describe(
    "The identity provider's issuer URL; bearer JWTs must name it in `iss`.",
  ),
  jwksUrl: httpUrl("auth.jwksUrl").optional().describe(
    "Where the issuer's signing keys are; default: `jwks_uri` from the issuer's metadata.",
  ),
  scopes: z.array(scopeSchema("auth.scopes")).optional().describe("Scopes every token must carry."),
  personalTokens: z.boolean().optional().describe(
    "Accept personal access tokens (`waymark tokens create`).",
  ),
  jwksTimeoutMs: z.number().int().min(100).max(60_000).optional().describe(
    `How long fetching the JWKS may take (default ${DEFAULT_JWKS_TIMEOUT_MS}); then the call is refused.`,
  ),
  clockToleranceSeconds: z.number().int().min(0).max(300).optional().describe(
    `Clock skew allowed on exp/nbf (default ${DEFAULT_CLOCK_TOLERANCE_S}).`,
  ),
}).strict();

/** The `auth` section as written (every field optional). */
export type AuthSettingsFile = z.infer<typeof authSettingsFileSchema>;

/** Authentication as the service enforces it. */
export interface AuthSettings {
  /** This server's resource URI (the MCP endpoint's public URL): tokens' required audience. */
  resource: string;
  /** The identity provider whose JWTs are accepted, or `null` (personal tokens only). */
  issuer: string | null;
  /** Its JWKS, or `null` to discover it from the issuer's metadata. */
  jwksUrl: string | null;
  /** Scopes every token must carry. */
  scopes: string[];
  /** Whether personal access tokens are accepted. */
  personalTokens: boolean;
  /** Bound on fetching keys, in ms. */
  jwksTimeoutMs: number;
  /** Clock skew allowed on `exp`/`nbf`, in seconds. */
  clockToleranceSeconds: number;
}

/**
 * The settings in force: the flags' fields over the file's. `null` when neither configures
 * any; an error naming what is missing when they configure some but not enough.
 */
export function resolveAuthSettings(
  file: AuthSettingsFile | undefined,
  flags: AuthSettingsFile,
): { ok: true; settings: AuthSettings | null } | { ok: false; message: string } {
  const set = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const merged: AuthSettingsFile = { ...file, ...set };
  const given = Object.values(merged).some((v) => v !== undefined);
  if (!given) return { ok: true, settings: null };
  if (!merged.resource) {
    return {
      ok: false,
      message: "authentication needs this server's public MCP URL: --auth-resource URL (or " +
        'config.json "auth": {"resource": …}), e.g. https://waymark.example.com/mcp',
    };
  }
  if (!merged.issuer && !merged.personalTokens) {
    return {
      ok: false,
      message: "authentication needs something to accept: --auth-issuer URL (an identity " +
        "provider's JWTs) and/or --personal-tokens (tokens made by `waymark tokens create`)",
    };
  }
  if (merged.jwksUrl && !merged.issuer) {
    return { ok: false, message: "--auth-jwks-url needs --auth-issuer (whose keys they are)" };
  }
  return {
    ok: true,
    settings: {
      resource: merged.resource,
      issuer: merged.issuer ?? null,
      jwksUrl: merged.jwksUrl ?? null,
      scopes: merged.scopes ?? [],
      personalTokens: merged.personalTokens ?? false,
      jwksTimeoutMs: merged.jwksTimeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS,
      clockToleranceSeconds: merged.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_S,
    },
  };
}

/** The flag-side schemas of the URL fields (`--auth-resource` and the like). */
export const authUrlSchema: (name: string) => z.ZodType<string, string> = httpUrl;
