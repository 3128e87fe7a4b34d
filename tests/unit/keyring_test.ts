/**
 * The keyring file and token signing: mode 0600, rotation keeps old tokens valid for one
 * rotation, concurrent creation yields one keyring.
 */
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { Buffer } from "node:buffer";
import { mintToken, verifyToken } from "../../engine/access/tokens.ts";
import { type KeyringClock, loadOrCreateKeyring, rotateKeyring } from "../../store/mod.ts";

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

Deno.test("a key signs with HMAC-SHA256 of its secret, so tokens minted by any version verify", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ring = await loadOrCreateKeyring(`${dir}/keys.json`);
    const secret = JSON.parse(readFileSync(`${dir}/keys.json`, "utf8")).current.secret;
    for (const data of [sample, new Uint8Array(0), new Uint8Array(200).fill(7)]) {
      const expected = createHmac("sha256", Buffer.from(secret, "base64url")).update(data).digest();
      assert.deepEqual(ring.current.sign(data), new Uint8Array(expected));
      // the same key signs the same bytes the same way every time (its state is not consumed)
      assert.deepEqual(ring.current.sign(data), new Uint8Array(expected));
    }
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

Deno.test("a secret that decodes to fewer than 32 bytes is refused on load, naming the file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/keys.json`;
    const write = (secret: string) =>
      Deno.writeTextFile(path, JSON.stringify({ version: 1, current: { id: 7, secret } }), {
        mode: 0o600,
      });
    // 43 characters that base64url decoding skips: 0 bytes, an empty HMAC key.
    await write("!".repeat(43));
    await assert.rejects(
      () => loadOrCreateKeyring(path),
      (error: Error) => {
        assert.match(error.message, new RegExp(`^${path} is not a waymark keyring`));
        assert.match(error.message, /current\.secret: must be base64url/);
        assert.match(error.message, /decodes to 0 bytes; a key needs at least 32/);
        return true;
      },
    );
    await write("QUFB".repeat(8)); // 24 bytes
    await assert.rejects(() => loadOrCreateKeyring(path), /decodes to 24 bytes/);
    await assert.rejects(() => rotateKeyring(path), /decodes to 24 bytes/);
    await write("QUFB".repeat(11)); // 33 bytes
    assert.equal((await loadOrCreateKeyring(path)).current.id, 7);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A clock the test moves: sleeping advances it at once (the suite runs files side by side). */
function testClock(): KeyringClock & { slept: number } {
  let at = Date.now();
  return {
    slept: 0,
    now: () => at,
    sleep(ms) {
      at += ms;
      this.slept += ms;
      return Promise.resolve();
    },
  };
}

Deno.test("a keyring follows its file: a rotation reaches a loaded keyring within a second", async () => {
  const dir = await Deno.makeTempDir();
  const clock = testClock();
  try {
    const path = `${dir}/keys.json`;
    const live = await loadOrCreateKeyring(path, { clock });
    const first = live.current.id;
    const rotated = await rotateKeyring(path, { clock });
    await clock.sleep(999);
    assert.equal(live.current.id, first, "checked again before a second is up");
    await clock.sleep(2);
    assert.equal(
      live.current.id,
      rotated.current.id,
      "the loaded keyring still signs with the old key",
    );
    assert.equal(live.previous?.id, first);
    // What it signs now still verifies after the next rotation, in any process.
    const token = mintToken(live, claims);
    const slept = clock.slept;
    const next = await rotateKeyring(path, { clock });
    assert.ok(clock.slept > slept, "a rotation soon after the last waits for live keyrings");
    assert.ok(verifyToken(next, token, "ack").ok);
    assert.ok(verifyToken(await loadOrCreateKeyring(path, { clock }), token, "ack").ok);
    await clock.sleep(1100);
    assert.equal(live.current.id, next.current.id);
    // A file broken meanwhile leaves the keys in use.
    await Deno.writeTextFile(path, "{ broken", { mode: 0o600 });
    await clock.sleep(1100);
    assert.equal(live.current.id, next.current.id);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
