/**
 * Tokens: short, self-contained, HMAC-SHA-256 signed handles that agents copy by hand.
 *
 * Layout (before base64url): kind byte, key id (4 bytes), run id (8 bytes), node id (8 bytes),
 * for ack/checkpoint tokens an attempt id (6 bytes), then the first 12 bytes of the HMAC over
 * the prefix and everything before it. The byte counts are multiples of three so base64url has
 * no spare bits, and decoding re-encodes to refuse any non-canonical spelling: every
 * single-character change of a token is refused.
 * @module
 */
import { fail, ok, type Result } from "../model/result.ts";
import { toHex } from "../common/hash.ts";

import { TOKEN_KINDS, type TokenKind } from "../model/vocabulary.ts";

/** The argument names agents see, used in error messages. */
export const TOKEN_FIELD: Record<TokenKind, string> = {
  state: "stateToken",
  ack: "ackToken",
  checkpoint: "checkpointToken",
  delegation: "delegationToken",
};

const PREFIX: Record<TokenKind, string> = {
  state: "st1",
  ack: "ack1",
  checkpoint: "chk1",
  delegation: "dlg1",
};
const KIND_BYTE: Record<TokenKind, number> = { state: 1, ack: 2, checkpoint: 3, delegation: 4 };
const MAC_BYTES = 12;
const ID_BYTES = 8;
const ATTEMPT_BYTES = 6;
const KEY_ID_BYTES = 4;
const HEADER_BYTES = 1 + KEY_ID_BYTES;

/**
 * One signing key. The secret stays with the adapter that holds it: the engine only asks for
 * HMAC-SHA-256 signatures, which lets the adapter use a fast synchronous implementation.
 */
export interface SigningKey {
  /** Key id, a 32-bit unsigned integer written into every token it signs. */
  id: number;
  /** HMAC-SHA-256 of `data` under this key's secret (32 bytes). */
  sign(data: Uint8Array): Uint8Array;
}

/** The keys tokens are signed and verified with: the current one and, after a rotation, the previous. */
export interface Keyring {
  /** Signs new tokens. */
  current: SigningKey;
  /** Still verifies tokens minted before the last rotation. */
  previous?: SigningKey;
}

/** What a token names. Ids are lower-case hex. */
export interface TokenClaims {
  /** Token kind. */
  kind: TokenKind;
  /** Run id: 16 hex characters. */
  runId: string;
  /** Node id: 16 hex characters. */
  nodeId: string;
  /** Attempt id (ack and checkpoint tokens): 12 hex characters. */
  attemptId?: string;
}

/** Each character code's hex digit value, or -1: a lookup instead of a pattern and `parseInt`. */
const HEX_VALUE = Int8Array.from(
  { length: 128 },
  (_, c) => "0123456789abcdef".indexOf(String.fromCharCode(c)),
);

function hexDigit(hex: string, i: number): number {
  const c = hex.charCodeAt(i);
  return c < 128 ? HEX_VALUE[c]! : -1;
}

function fromHex(hex: string, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let bad = hex.length !== bytes * 2;
  for (let i = 0; i < bytes && !bad; i++) {
    const hi = hexDigit(hex, i * 2);
    const lo = hexDigit(hex, i * 2 + 1);
    bad = hi < 0 || lo < 0;
    out[i] = (hi << 4) | lo;
  }
  if (bad) {
    throw new TypeError(`expected ${bytes * 2} hex characters, got ${JSON.stringify(hex)}`);
  }
  return out;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Each character code's base64url value, or -1. */
const B64_VALUE = Int8Array.from({ length: 128 }, (_, c) => B64.indexOf(String.fromCharCode(c)));

function toBase64Url(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  return out;
}

function fromBase64Url(text: string): Uint8Array | null {
  if (text.length % 4 !== 0) return null;
  const out = new Uint8Array((text.length / 4) * 3);
  for (let i = 0, o = 0; i < text.length; i += 4, o += 3) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = text.charCodeAt(i + j);
      const v = c < 128 ? B64_VALUE[c]! : -1;
      if (v < 0) return null;
      n = (n << 6) | v;
    }
    out[o] = (n >> 16) & 255;
    out[o + 1] = (n >> 8) & 255;
    out[o + 2] = n & 255;
  }
  return out;
}

/** Each kind's prefix as bytes, signed in front of the token's body. */
const PREFIX_BYTES = Object.fromEntries(
  Object.entries(PREFIX).map(([kind, prefix]) => [kind, new TextEncoder().encode(prefix)]),
) as Record<TokenKind, Uint8Array>;

function mac(key: SigningKey, kind: TokenKind, body: Uint8Array): Uint8Array {
  const prefixBytes = PREFIX_BYTES[kind];
  const data = new Uint8Array(prefixBytes.length + body.length);
  data.set(prefixBytes);
  data.set(body, prefixBytes.length);
  return key.sign(data).subarray(0, MAC_BYTES);
}

/** Whether a token of this kind names an attempt (ack and checkpoint tokens do). */
export function namesAttempt(kind: TokenKind): boolean {
  return kind === "ack" || kind === "checkpoint";
}

function bodyLength(kind: TokenKind): number {
  return HEADER_BYTES + ID_BYTES * 2 + (namesAttempt(kind) ? ATTEMPT_BYTES : 0);
}

/** Mints a token for the given claims with the current key. */
export function mintToken(keyring: Keyring, claims: TokenClaims): string {
  const key = keyring.current; // read once: a live keyring may switch keys between reads
  const body = new Uint8Array(bodyLength(claims.kind));
  body[0] = KIND_BYTE[claims.kind];
  new DataView(body.buffer).setUint32(1, key.id);
  body.set(fromHex(claims.runId, ID_BYTES), HEADER_BYTES);
  body.set(fromHex(claims.nodeId, ID_BYTES), HEADER_BYTES + ID_BYTES);
  if (namesAttempt(claims.kind)) {
    if (claims.attemptId === undefined) {
      throw new TypeError("ack and checkpoint tokens need an attempt id");
    }
    body.set(fromHex(claims.attemptId, ATTEMPT_BYTES), HEADER_BYTES + ID_BYTES * 2);
  }
  const prefix = PREFIX[claims.kind];
  const signature = mac(key, claims.kind, body);
  const all = new Uint8Array(body.length + MAC_BYTES);
  all.set(body);
  all.set(signature, body.length);
  return `${prefix}_${toBase64Url(all)}`;
}

const RECOVERY: Record<TokenKind, string> = {
  state:
    "Pass the stateToken exactly as the last waymark response returned it; if it is lost, start the workflow again.",
  ack:
    "Call continue_workflow with only the stateToken to get a fresh ackToken, and copy tokens exactly as returned.",
  checkpoint:
    "Call continue_workflow with only the stateToken to get a fresh checkpointToken, and copy tokens exactly as returned.",
  delegation:
    "Pass the delegationToken exactly as the parent run's response listed it; the parent agent can get the list again with continue_workflow and the parent's stateToken.",
};

function recovery(kind: TokenKind): string {
  return RECOVERY[kind];
}

function invalid(kind: TokenKind, reason: string, what: string): Result<never> {
  return fail("TOKEN_INVALID", `${TOKEN_FIELD[kind]} ${what}. ${recovery(kind)}`, {
    details: { token: TOKEN_FIELD[kind], reason },
  });
}

/**
 * The refusal of a token signed by a key this waymark does not hold: each machine signs with
 * its own keyring, so work moves between machines through `resume_session`.
 */
function signedElsewhere(kind: TokenKind, keyId: number): Result<never> {
  const key = keyId.toString(16).padStart(8, "0");
  return fail(
    "TOKEN_INVALID",
    `${
      TOKEN_FIELD[kind]
    } was signed on another machine (key ${key}), or by a keyring this waymark no longer holds. Tokens are signed with each machine's own key and do not move between machines: call resume_session with the session or run id (or words from its notes) to get fresh tokens signed here, and continue with those.`,
    { details: { token: TOKEN_FIELD[kind], reason: "unknown_key", keyId: key } },
  );
}

/** Verifies a token of the expected kind and returns what it names. Never throws. */
export function verifyToken(
  keyring: Keyring,
  token: string,
  kind: TokenKind,
): Result<TokenClaims> {
  const prefix = PREFIX[kind];
  if (typeof token !== "string" || !token.startsWith(`${prefix}_`)) {
    const other = (Object.keys(PREFIX) as TokenKind[]).find((k) =>
      typeof token === "string" && token.startsWith(`${PREFIX[k]}_`)
    );
    return other
      ? invalid(
        kind,
        "wrong_kind",
        `is a ${TOKEN_FIELD[other]}, not a ${TOKEN_FIELD[kind]} (tokens were swapped)`,
      )
      : invalid(
        kind,
        "malformed",
        `is not a waymark ${TOKEN_FIELD[kind]} (it must start with \`${prefix}_\`)`,
      );
  }
  const encoded = token.slice(prefix.length + 1);
  const expectedChars = ((bodyLength(kind) + MAC_BYTES) / 3) * 4;
  const bytes = encoded.length === expectedChars ? fromBase64Url(encoded) : null;
  if (!bytes || toBase64Url(bytes) !== encoded) {
    return invalid(kind, "malformed", "is damaged (truncated, extended or mistyped)");
  }
  const body = bytes.subarray(0, bytes.length - MAC_BYTES);
  if (body[0] !== KIND_BYTE[kind]) {
    return invalid(kind, "malformed", "is damaged (its kind byte is wrong)");
  }
  const keyId = new DataView(body.buffer, body.byteOffset).getUint32(1);
  const { current, previous } = keyring; // once, and `current` first (it refreshes a live one)
  const key = current.id === keyId ? current : previous?.id === keyId ? previous : undefined;
  if (!key) return signedElsewhere(kind, keyId);
  const expected = mac(key, kind, body);
  const given = bytes.subarray(bytes.length - MAC_BYTES);
  let diff = 0;
  for (let i = 0; i < MAC_BYTES; i++) diff |= expected[i]! ^ given[i]!;
  if (diff !== 0) {
    return invalid(kind, "bad_signature", "failed its signature check (it was changed)");
  }
  const claims: TokenClaims = {
    kind,
    runId: toHex(body.subarray(HEADER_BYTES, HEADER_BYTES + ID_BYTES)),
    nodeId: toHex(body.subarray(HEADER_BYTES + ID_BYTES, HEADER_BYTES + ID_BYTES * 2)),
  };
  if (namesAttempt(kind)) claims.attemptId = toHex(body.subarray(HEADER_BYTES + ID_BYTES * 2));
  return ok(claims);
}

/**
 * What a token names, read without checking its signature or key: for redacting tokens from
 * exported data (a bundle keeps which node a token named, never the token). Never use it to
 * authorise anything; `null` when the text is not a well-formed token.
 */
export function readTokenClaims(token: string): TokenClaims | null {
  const kind = (Object.keys(PREFIX) as TokenKind[]).find((k) => token.startsWith(`${PREFIX[k]}_`));
  if (!kind) return null;
  const encoded = token.slice(PREFIX[kind].length + 1);
  const bytes = encoded.length === ((bodyLength(kind) + MAC_BYTES) / 3) * 4
    ? fromBase64Url(encoded)
    : null;
  if (!bytes || bytes[0] !== KIND_BYTE[kind]) return null;
  const claims: TokenClaims = {
    kind,
    runId: toHex(bytes.subarray(HEADER_BYTES, HEADER_BYTES + ID_BYTES)),
    nodeId: toHex(bytes.subarray(HEADER_BYTES + ID_BYTES, HEADER_BYTES + ID_BYTES * 2)),
  };
  if (namesAttempt(kind)) {
    claims.attemptId = toHex(
      bytes.subarray(HEADER_BYTES + ID_BYTES * 2, HEADER_BYTES + ID_BYTES * 2 + ATTEMPT_BYTES),
    );
  }
  return claims;
}

/** A fresh global pattern matching every well-formed token spelling in a text. */
export function tokenPattern(): RegExp {
  const chars = (kind: TokenKind) => ((bodyLength(kind) + MAC_BYTES) / 3) * 4;
  const alternatives = TOKEN_KINDS.map((k) => `${PREFIX[k]}_[A-Za-z0-9_-]{${chars(k)}}`);
  return new RegExp(`(?<![A-Za-z0-9_-])(?:${alternatives.join("|")})(?![A-Za-z0-9_-])`, "g");
}
