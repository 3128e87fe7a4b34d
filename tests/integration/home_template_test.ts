/**
 * The database a test home starts from (`tests/helpers/home_template.ts`) is what creating a new
 * home's database leaves, table by table, at the current schema, on libSQL and on PostgreSQL; a
 * blank home is left to its first start.
 * @module
 */
import assert from "node:assert/strict";
import { MIGRATIONS } from "../../store/sql/migrations.ts";
import { withTestDb } from "../helpers/db.ts";
import { postgresHomeTemplate } from "../helpers/home_template.ts";
import { runCli } from "../helpers/maintenance.ts";
import { freshPostgresUrl, postgresTestable } from "../helpers/postgres.ts";
import { tempHome } from "../helpers/server.ts";

/** Each table's row count and the migrations applied, in the database at `url`. */
async function contents(
  url: string,
): Promise<{ counts: Record<string, number>; applied: string[] }> {
  return await withTestDb(url, async (db) => ({
    counts: (await db.snapshot()).counts,
    applied: (await db.rows("SELECT name FROM waymark_migrations ORDER BY name")).map((r) =>
      r.name
    ),
  }));
}

/** Has waymark create the database at `url` (`sessions list`), from a home of its own. */
async function firstStart(url: string): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "waymark-first-start-" });
  try {
    const ran = await runCli(["sessions", "list", "--home", home, "--db", url]);
    assert.equal(ran.code, 0, ran.err);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** `templated` holds what creating `started` left in it: every table, the current schema. */
async function assertSameStart(started: string, templated: string): Promise<void> {
  const [real, copy] = [await contents(started), await contents(templated)];
  assert.deepEqual(copy, real);
  assert.deepEqual(copy.applied, Object.keys(MIGRATIONS).sort());
  assert.ok(Object.keys(copy.counts).includes("events"), "the template has no events table");
}

Deno.test("a libSQL test home starts with its database created; a blank one has none yet", async () => {
  const blank = await tempHome({ blank: true });
  const home = await tempHome();
  try {
    await assert.rejects(Deno.stat(blank.dbFile), Deno.errors.NotFound);
    await firstStart(blank.dbUrl);
    await assertSameStart(blank.dbUrl, home.dbUrl);
  } finally {
    await blank.cleanup();
    await home.cleanup();
  }
});

Deno.test({
  name: "a PostgreSQL test database is cloned from a created one; a blank one is empty",
  ignore: !postgresTestable(),
  async fn() {
    const blank = await freshPostgresUrl();
    const cloned = await freshPostgresUrl({ template: await postgresHomeTemplate() });
    assert.deepEqual(await withTestDb(blank, (db) => db.tables()), []);
    await firstStart(blank);
    await assertSameStart(blank, cloned);
  },
});
