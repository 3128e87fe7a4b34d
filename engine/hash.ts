/**
 * Hashing with byte-stable input: RFC 8785 canonical JSON, then SHA-256 through WebCrypto.
 * @module
 */
import canonicalizeJson from "npm:canonicalize@2.1.0";

/** Returns the RFC 8785 canonical JSON text of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = (canonicalizeJson as unknown as (v: unknown) => string | undefined)(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return text;
}

/** Lower-case hex of a byte array. */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/** SHA-256 of UTF-8 text, as lower-case hex. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return toHex(new Uint8Array(digest));
}

/** `sha256:<hex>` of the canonical JSON of a value: the form used for `workflowHash`. */
export async function hashJson(value: unknown): Promise<string> {
  return `sha256:${await sha256Hex(canonicalJson(value))}`;
}
