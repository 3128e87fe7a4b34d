/**
 * Personal access tokens presented as bearer tokens: looked up by their hash, refused when
 * unknown, revoked or expired. They name their own principal and scopes, and are accepted for
 * this server's resource only (they are made for it). A token's row, once read, is kept for
 * {@linkcode RECORD_TTL_MS} (by the token's hash, never the token): an agent's calls come in
 * bursts, and reading the row for each was a database round trip on every request. So a
 * revocation takes effect on every replica within that long; expiry is checked on every request.
 * @module
 */
import type { AuthInfo } from "npm:@modelcontextprotocol/server@2.4.0";
import { sha256 } from "npm:@noble/hashes@2.4.0/sha2.js";
import { bytesToHex } from "npm:@noble/hashes@2.4.0/utils.js";
import {
  type PersonalTokenRecord,
  type PersonalTokens,
  principalOfToken,
} from "../../store/sql/personal_tokens.ts";
import { authInfoOf } from "../../tools/context/principal.ts";
import { invalidToken, TokenStoreUnavailable } from "./errors.ts";

/** How long the SDK is told a token without expiry lasts (it is checked again on each request). */
const OPEN_ENDED_S = 3600;

/** How long a token's row, once read, is used before it is read again. */
export const RECORD_TTL_MS = 1_000;
/** Rows kept at most (the oldest is dropped first). */
const MAX_KEPT = 10_000;

/** `find`, with each found row kept for {@linkcode RECORD_TTL_MS}, by the token's hash. */
function keptRows(tokens: PersonalTokens, now: () => number) {
  const kept = new Map<string, { record: PersonalTokenRecord | null; until: number }>();
  return async (token: string): Promise<PersonalTokenRecord | null> => {
    const key = bytesToHex(sha256(new TextEncoder().encode(token)));
    const hit = kept.get(key);
    if (hit && hit.until > now()) return hit.record;
    const record = await tokens.find(token);
    // an unknown token is not kept: a flood of made-up ones must not fill the map
    if (record) {
      kept.delete(key);
      kept.set(key, { record, until: now() + RECORD_TTL_MS });
      if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value!);
    }
    return record;
  };
}

/** Verifies personal access tokens against the store's hashes. */
export function createPersonalTokenVerifier(
  tokens: PersonalTokens,
  at: { resource: string; now?: () => number },
): (token: string) => Promise<AuthInfo> {
  const now = at.now ?? Date.now;
  const resource = new URL(at.resource);
  const find = keptRows(tokens, now);
  return async (token) => {
    const record = await find(token).catch((error) => {
      // the database is away (a restart, a failover): the token may be good, so not a 401
      throw new TokenStoreUnavailable(String((error as Error)?.message ?? error).slice(0, 200));
    });
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
