/**
 * The keyring file and token signing: mode 0600, rotation keeps old tokens valid for one
 * rotation, concurrent creation yields one keyring.
 */
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { mintToken, verifyToken } from "../../engine/mod.ts";
import { loadOrCreateKeyring, rotateKeyring } from "../../store/mod.ts";

const sample = new TextEncoder().encode("sample");
const claims = {
  kind: "ack" as const,
  runId: "0011223344556677",
  nodeId: "8899aabbccddeeff",
  attemptId: "a1b2c3d4e5f6",
};

Deno.test("the keyring is created with mode 0600 and the same keys load again", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/nested/keys.json`;
    const first = await loadOrCreateKeyring(path);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const again = await loadOrCreateKeyring(path);
    assert.deepEqual(again.current.sign(sample), first.current.sign(sample));
    assert.equal(again.current.id, first.current.id);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("processes racing to create the keyring all end up with the same key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const rings = await Promise.all(
      Array.from({ length: 8 }, () => loadOrCreateKeyring(`${dir}/keys.json`)),
    );
    for (const ring of rings) {
      assert.deepEqual(ring.current.sign(sample), rings[0]!.current.sign(sample));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("after a rotation old tokens still verify; after two they are refused as unknown_key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/keys.json`;
    const original = await loadOrCreateKeyring(path);
    const token = mintToken(original, claims);
    assert.ok(token.length < 60, `token is ${token.length} characters`);
    const once = await rotateKeyring(path);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.notDeepEqual(once.current.sign(sample), original.current.sign(sample));
    const verified = verifyToken(once, token, "ack");
    assert.ok(verified.ok);
    if (verified.ok) assert.deepEqual(verified.value, claims);
    const twice = await rotateKeyring(path);
    const refused = verifyToken(twice, token, "ack");
    assert.equal(refused.ok, false);
    if (!refused.ok) {
      assert.equal(refused.error.code, "TOKEN_INVALID");
      assert.equal(refused.error.details?.reason, "unknown_key");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a damaged keyring file is an error that says what to do, not a silent new key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/keys.json`, "{ nope");
    await assert.rejects(() => loadOrCreateKeyring(`${dir}/keys.json`), /move it aside/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
