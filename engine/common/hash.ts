/**
 * Hashing with byte-stable input: RFC 8785 canonical JSON, then SHA-256 through WebCrypto.
 * @module
 */
import canonicalizeJson from "npm:canonicalize@2.1.0";
import { sha256 } from "npm:@noble/hashes@2.4.0/sha2.js";

/**
 * Inputs up to this size are hashed in JavaScript on this thread (microseconds). WebCrypto's
 * digest is an async op on a worker thread whose round trip costs 0.1-0.4 ms on a busy machine,
 * more than an advance's SQL; it stays for large inputs (compiled workflows), where native
 * hashing wins.
 */
export const SYNC_DIGEST_MAX_BYTES = 64 * 1024;

/** Returns the RFC 8785 canonical JSON text of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = (canonicalizeJson as unknown as (v: unknown) => string | undefined)(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return text;
}

/** Lower-case hex of a byte array. */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** SHA-256 of UTF-8 text, as lower-case hex. */
export async function sha256Hex(text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= SYNC_DIGEST_MAX_BYTES) return toHex(sha256(bytes));
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** SHA-256 of UTF-8 text, as lower-case hex, on this thread whatever its size. */
export function sha256HexSync(text: string): string {
  return toHex(sha256(new TextEncoder().encode(text)));
}

/** `sha256:<hex>` of the canonical JSON of a value: the form used for `workflowHash`. */
export async function hashJson(value: unknown): Promise<string> {
  return `sha256:${await sha256Hex(canonicalJson(value))}`;
}
