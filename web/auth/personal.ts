/**
 * Personal access tokens presented as bearer tokens: looked up by their hash, refused when
 * unknown, revoked or expired. They name their own principal and scopes, and are accepted for
 * this server's resource only (they are made for it).
 * @module
 */
import type { AuthInfo } from "npm:@modelcontextprotocol/server@2.4.0";
import { type PersonalTokens, principalOfToken } from "../../store/sql/personal_tokens.ts";
import { authInfoOf } from "../../tools/context/principal.ts";
import { invalidToken } from "./errors.ts";

/** How long the SDK is told a token without expiry lasts (it is checked again on each request). */
const OPEN_ENDED_S = 3600;

/** Verifies personal access tokens against the store's hashes. */
export function createPersonalTokenVerifier(
  tokens: PersonalTokens,
  at: { resource: string; now?: () => number },
): (token: string) => Promise<AuthInfo> {
  const now = at.now ?? Date.now;
  const resource = new URL(at.resource);
  return async (token) => {
    const record = await tokens.find(token);
    if (!record) throw invalidToken("Unknown personal access token");
    if (record.revokedAt !== null) throw invalidToken("The personal access token was revoked");
    const expires = record.expiresAt === null ? null : Date.parse(record.expiresAt);
    if (expires !== null && expires <= now()) {
      throw invalidToken("The personal access token has expired");
    }
    return authInfoOf(principalOfToken(record), {
      clientId: `pat:${record.id}`,
      scopes: record.scopes,
      expiresAt: Math.floor((expires ?? now() + OPEN_ENDED_S * 1000) / 1000),
      resource,
    });
  };
}
