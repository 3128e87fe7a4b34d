/**
 * Tokens' bytes: a token minted today must verify in every later version (agents hold them
 * across upgrades), so the format is pinned by tokens minted with a fixed key; ids that are not
 * lower-case hex are refused when minting, and characters outside base64url when verifying.
 * @module
 */
import assert from "node:assert/strict";
import { hmac } from "npm:@noble/hashes@2.4.0/hmac.js";
import { sha256 } from "npm:@noble/hashes@2.4.0/sha2.js";
import { type Keyring, mintToken, verifyToken } from "../../engine/access/tokens.ts";
import type { TokenKind } from "../../engine/model/vocabulary.ts";

const keyed = hmac.create(sha256, new TextEncoder().encode("a test key of thirty-two bytes!!"));
const keyring: Keyring = {
  current: { id: 0x0a0b0c0d, sign: (data) => keyed.clone().update(data).digest() },
};
const claims = { runId: "0123456789abcdef", nodeId: "fedcba9876543210", attemptId: "00112233aabb" };

/** Minted by waymark 0.1.0 with the key above. */
const PINNED: Record<TokenKind, string> = {
  state: "st1_AQoLDA0BI0VniavN7_7cuph2VDIQ2UfEfMdUau0RP-g8",
  ack: "ack1_AgoLDA0BI0VniavN7_7cuph2VDIQABEiM6q7kgm10pTt2gZ0zLuE",
  checkpoint: "chk1_AwoLDA0BI0VniavN7_7cuph2VDIQABEiM6q7u49Zu9r4G7AfZtZ8",
  delegation: "dlg1_BAoLDA0BI0VniavN7_7cuph2VDIQBUxVJQ0_1HOYETgu",
};

Deno.test("tokens keep their bytes: each kind mints as pinned and verifies to its claims", () => {
  for (const [kind, token] of Object.entries(PINNED) as [TokenKind, string][]) {
    assert.equal(mintToken(keyring, { kind, ...claims }), token, kind);
    const verified = verifyToken(keyring, token, kind);
    assert.ok(verified.ok, kind);
    assert.equal(verified.value.runId, claims.runId);
    assert.equal(verified.value.nodeId, claims.nodeId);
    const named = kind === "ack" || kind === "checkpoint";
    assert.equal(verified.value.attemptId, named ? claims.attemptId : undefined);
  }
});

Deno.test("minting refuses ids that are not lower-case hex of their length", () => {
  for (
    const runId of ["0123456789ABCDEF", "0123456789abcde", "0123456789abcdeg", "0123456789abcdé"]
  ) {
    assert.throws(
      () => mintToken(keyring, { kind: "state", runId, nodeId: claims.nodeId }),
      (error: unknown) => error instanceof TypeError && error.message.includes("16 hex characters"),
      runId,
    );
  }
});

Deno.test("a token with a character outside base64url is refused as damaged", () => {
  const token = PINNED.state;
  for (const c of ["é", "+", "/", "=", "\u0000"]) {
    const changed = `${token.slice(0, 10)}${c}${token.slice(11)}`;
    const verified = verifyToken(keyring, changed, "state");
    assert.ok(!verified.ok, JSON.stringify(c));
    assert.equal(verified.error.details?.reason, "malformed");
  }
});
