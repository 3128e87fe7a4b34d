/**
 * `sha256Hex` hashes small inputs in JavaScript and large ones through WebCrypto: both give
 * WebCrypto's bytes, on either side of the threshold and for text beyond ASCII.
 * @module
 */
import assert from "node:assert/strict";
import { sha256Hex, SYNC_DIGEST_MAX_BYTES } from "../../engine/common/hash.ts";

async function webCrypto(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("sha256Hex agrees with WebCrypto below, at and above the in-thread limit", async () => {
  const sizes = [0, 1, 55, 56, 63, 64, 65, 1000, SYNC_DIGEST_MAX_BYTES, SYNC_DIGEST_MAX_BYTES + 1];
  for (const size of sizes) {
    const text = Array.from({ length: size }, (_, i) => String.fromCharCode(97 + (i * 7) % 26))
      .join("");
    assert.equal(await sha256Hex(text), await webCrypto(text), `${size} bytes`);
  }
  const wide = "naïve — 日本語 🙂 ".repeat(40);
  assert.equal(await sha256Hex(wide), await webCrypto(wide));
  assert.equal(
    await sha256Hex("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});
