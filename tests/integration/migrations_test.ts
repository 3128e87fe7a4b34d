/**
 * Upgrades: a database written by an older waymark (only the first migration applied) opens
 * and migrates forward with its rows kept; one written by a newer waymark (a migration this
 * version does not know) is refused with a clear message and left byte for byte untouched.
 * @module
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { LibsqlDialect } from "../../store/libsql/kysely_driver.ts";
import { Kysely } from "kysely";
import { MIGRATIONS, openStore } from "../../store/mod.ts";
import { libsqlMigrationDialect } from "../../store/libsql/migrations.ts";
import { runCli, sqlOn } from "../helpers/maintenance.ts";
import { tempHome } from "../helpers/server.ts";

async function sha(file: string): Promise<string> {
  const bytes = await Deno.readFile(file);
  return Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("an older database migrates forward with its rows; a newer one is refused untouched", async () => {
  const { home, dbFile, cleanup } = await tempHome({ blank: true });
  try {
    // what the first waymark wrote: the first migration and a session row
    const client = createClient({ url: `file:${dbFile}` });
    const db = new Kysely<unknown>({ dialect: new LibsqlDialect({ client }) });
    await client.execute(
      "CREATE TABLE waymark_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
    );
    await MIGRATIONS["0001_initial"]!.up(db, libsqlMigrationDialect);
    await client.execute("INSERT INTO waymark_migrations VALUES ('0001_initial', 'then')");
    await client.execute(
      "INSERT INTO sessions (session_id, title, created_at, updated_at, health, event_count) VALUES ('00000000000000aa', 'old', 'then', 'then', 'healthy', 0)",
    );
    await db.destroy();
    client.close();

    const store = await openStore(`file:${dbFile}`);
    await store.close();
    const applied = await sqlOn(dbFile, "SELECT name FROM waymark_migrations ORDER BY name");
    assert.deepEqual(applied.map((r) => r.name), Object.keys(MIGRATIONS).sort());
    const kept = await sqlOn(dbFile, "SELECT title, kind FROM sessions");
    assert.deepEqual(kept, [{ title: "old", kind: "workflow" }]);

    await sqlOn(
      dbFile,
      "INSERT INTO waymark_migrations VALUES ('9999_from_the_future', 'later')",
      "PRAGMA wal_checkpoint(TRUNCATE)",
    );
    const before = await sha(dbFile);
    await assert.rejects(
      () => openStore(`file:${dbFile}`),
      /written by a newer waymark \(it has migration 9999_from_the_future, which this version does not know\); it was left untouched/,
    );
    const listed = await runCli(["sessions", "list"], { home });
    assert.equal(listed.code, 1);
    assert.match(listed.err, /newer waymark/);
    assert.equal(await sha(dbFile), before, "the newer database was changed");
  } finally {
    await cleanup();
  }
});
