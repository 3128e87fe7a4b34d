/**
 * How a presented token is refused: an `OAuthError` the SDK's bearer helpers answer (401
 * `invalid_token`, 403 `insufficient_scope`), or {@linkcode KeysUnavailable} when the identity
 * provider's keys cannot be had in time, or {@linkcode TokenStoreUnavailable} when the database
 * holding personal tokens cannot be read (PostgreSQL restarting): the gate answers both with 503
 * and `Retry-After` (the token may be good: the client should try again, not sign in again).
 * Messages say what is wrong and never quote the token.
 * @module
 */
import { OAuthError, OAuthErrorCode } from "npm:@modelcontextprotocol/server@2.4.0";

/** The issuer's keys (or metadata) could not be fetched in time: refuse, fail closed. */
export class KeysUnavailable extends Error {
  /** `why` says what failed, without any token. */
  constructor(why: string) {
    super(why);
    this.name = "KeysUnavailable";
  }
}

/** A 401 `invalid_token` refusal saying `message`. */
export function invalidToken(message: string): OAuthError {
  return new OAuthError(OAuthErrorCode.InvalidToken, message);
}

/** The database holding personal access tokens could not be read: refuse for now, fail closed. */
export class TokenStoreUnavailable extends KeysUnavailable {
  /** The driver's words, for the server's log only (they may name hosts or paths). */
  readonly detail: string;
  /** `detail`: what the driver said. */
  constructor(detail: string) {
    super("the token store cannot be read just now");
    this.name = "TokenStoreUnavailable";
    this.detail = detail;
  }
}
