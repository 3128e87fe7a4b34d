/**
 * The personal access tokens' store on each SQL dialect (libSQL file, PostgreSQL): created
 * tokens are found by the token alone, kept only as a hash, listed newest first, revoked once;
 * a token with its id swapped or its secret changed names nothing.
 * @module
 */
import assert from "node:assert/strict";
import { sqlPersonalTokens } from "../../store/mod.ts";
import { SQL_DIALECTS, withSqlStore } from "../helpers/sql_stores.ts";

for (const dialect of SQL_DIALECTS) {
  Deno.test(`${dialect}: personal access tokens are found by hash, listed, and revoked`, async () => {
    await withSqlStore(dialect, async (store) => {
      let tick = 0;
      const tokens = sqlPersonalTokens(store.db, {
        clock: { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)).toISOString() },
        random: { bytes: (n) => crypto.getRandomValues(new Uint8Array(n)) },
      });
      const a = await tokens.create({
        name: "alice",
        kind: "person",
        scopes: ["waymark", "read"],
        expiresAt: null,
      });
      const b = await tokens.create({
        name: "ci",
        kind: "bot",
        scopes: [],
        expiresAt: "2026-02-01T00:00:00.000Z",
      });
      assert.deepEqual(await tokens.find(a.token), a.record);
      assert.deepEqual((await tokens.find(b.token))?.kind, "bot");
      const stored = await store.db.selectFrom("personal_tokens").selectAll().execute();
      assert.ok(!JSON.stringify(stored).includes(a.token.slice(18)), "only hashes are stored");
      assert.deepEqual((await tokens.list()).map((t) => t.name), ["ci", "alice"]);
      // the other token's id with this secret, or one character changed, names nothing
      const swapped = `wmp_${b.record.id}_${a.token.slice(18)}`;
      assert.equal(await tokens.find(swapped), null);
      const last = a.token.at(-1) === "A" ? "B" : "A";
      assert.equal(await tokens.find(a.token.slice(0, -1) + last), null);
      assert.equal(await tokens.find("wmp_short"), null);
      const revoked = await tokens.revoke(a.record.id);
      assert.ok(revoked?.revokedAt);
      assert.equal((await tokens.revoke(a.record.id))?.revokedAt, revoked.revokedAt, "once");
      assert.equal((await tokens.find(a.token))?.revokedAt, revoked.revokedAt);
      assert.equal(await tokens.revoke("000000000000"), null);
    });
  });
}
