/**
 * The database a test home starts from (`tests/helpers/home_template.ts`) is what a real first
 * start leaves, table by table, at the current schema, on libSQL and on PostgreSQL; a blank home
 * is left to its first start.
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

/** Starts the database at `url` for real (`workflows list`), on a home of its own. */
async function firstStart(url: string): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "waymark-first-start-" });
  try {
    const ran = await runCli(["workflows", "list", "--home", home, "--db", url]);
    assert.equal(ran.code, 0, ran.err);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** `templated` holds what the first start left in `started`, at the current schema. */
async function assertSameStart(started: string, templated: string): Promise<void> {
  const [real, copy] = [await contents(started), await contents(templated)];
  assert.deepEqual(copy, real);
  assert.deepEqual(copy.applied, Object.keys(MIGRATIONS).sort());
  assert.ok(copy.counts.workflow_outcomes! > 0, "no workflow was compiled into the cache");
}

Deno.test("a libSQL test home starts as a first start leaves it; a blank one has no database yet", async () => {
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
  name: "a PostgreSQL test database is cloned from what a first start leaves; a blank one is empty",
  ignore: !postgresTestable(),
  async fn() {
    const blank = await freshPostgresUrl();
    const cloned = await freshPostgresUrl({ template: await postgresHomeTemplate() });
    assert.deepEqual(await withTestDb(blank, (db) => db.tables()), []);
    await firstStart(blank);
    await assertSameStart(blank, cloned);
  },
});
