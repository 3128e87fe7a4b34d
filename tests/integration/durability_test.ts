/**
 * `--durability`: `normal` (the default) is WAL with `synchronous = NORMAL`, `full` syncs every
 * commit; the setting holds on the connections the store's statements actually run on.
 * @module
 */
import assert from "node:assert/strict";
import { sql } from "npm:kysely@0.29.9";
import { openWaymark } from "../../mod.ts";
import type { Durability } from "../../store/open_options.ts";
import { tempHome } from "../helpers/server.ts";

async function synchronousLevel(durability?: Durability): Promise<number> {
  const { home, cleanup } = await tempHome();
  const wm = await openWaymark({ home, workspace: home, durability });
  try {
    // inside a transaction, so the statement runs where the store's writes run
    return await wm.store.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(trx);
      return Number(rows[0]!.synchronous);
    });
  } finally {
    await wm.close();
    await cleanup();
  }
}

Deno.test("durability: normal by default, full on request", async () => {
  assert.equal(await synchronousLevel(), 1, "NORMAL");
  assert.equal(await synchronousLevel("normal"), 1, "NORMAL");
  assert.equal(await synchronousLevel("full"), 2, "FULL");
});
