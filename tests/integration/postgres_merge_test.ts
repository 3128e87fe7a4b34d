/**
 * Writes sent ahead are merged into one statement where that keeps their meaning
 * (`store/postgres/merge.ts`): the text's rules, then their effect on a real server.
 * @module
 */
import assert from "node:assert/strict";
import { Kysely, sql } from "npm:kysely@0.29.9";
import { createPool, sendAhead, WaymarkPostgresDialect } from "../../store/postgres/driver.ts";
import { mergeWrites } from "../../store/postgres/merge.ts";
import { freshPostgresUrl, postgresBin } from "../helpers/postgres.ts";

const ignore = postgresBin() === null && !Deno.env.get("CI");

Deno.test("writes to different tables become one statement, their parameters renumbered", () => {
  const merged = mergeWrites([
    { sql: 'insert into "a" ("x") values ($1)', parameters: [1] },
    {
      sql: 'with "o" as (insert into "b" ("x") values ($1)) insert into "c" ("x") values ($2)',
      parameters: [2, 3],
    },
    { sql: 'update "d" set "x" = $1 where "y" = $2', parameters: [4, 5] },
  ]);
  assert.deepEqual(merged, [{
    sql: 'with waymark_w1 as (insert into "a" ("x") values ($1)), ' +
      '"o" as (insert into "b" ("x") values ($2)), ' +
      'waymark_w2 as (insert into "c" ("x") values ($3)) ' +
      'update "d" set "x" = $4 where "y" = $5',
    parameters: [1, 2, 3, 4, 5],
  }]);
});

Deno.test("a write naming a table already written, or with a literal, starts a new statement", () => {
  const a = { sql: 'insert into "a" ("x") values ($1)', parameters: [1] };
  const again = {
    sql: 'update "b" set "x" = (select max(x) from a) where "y" = $1',
    parameters: [2],
  };
  const literal = { sql: `update "c" set "x" = 'a' where "y" = $1`, parameters: [3] };
  const returning = { sql: 'insert into "d" ("x") values ($1) returning "x"', parameters: [4] };
  assert.deepEqual(mergeWrites([a, again]), [a, again]);
  assert.deepEqual(mergeWrites([a, literal]), [a, literal]);
  assert.deepEqual(mergeWrites([returning, a]), [returning, a]);
  const qualified = { sql: 'update "public"."a" set "x" = $1', parameters: [5] };
  assert.deepEqual(mergeWrites([a, qualified]), [a, qualified]);
});

interface Db {
  a: { id: number; n: number };
  b: { id: number; a_id: number };
}

async function database(): Promise<Kysely<Db>> {
  const pool = createPool(await freshPostgresUrl(), { connectTimeoutMs: 5000 });
  const db = new Kysely<Db>({ dialect: new WaymarkPostgresDialect({ pool }) });
  await sql`CREATE TABLE a (id int PRIMARY KEY, n int NOT NULL)`.execute(db);
  await sql`CREATE TABLE b (id int PRIMARY KEY, a_id int NOT NULL REFERENCES a)`.execute(db);
  return db;
}

Deno.test({
  name: "merged writes: each takes effect, a row written twice gets both, a failure commits none",
  ignore,
  async fn() {
    const db = await database();
    try {
      await db.transaction().execute(async (tx) => {
        await tx.selectFrom("a").select("id").execute(); // the BEGIN is confirmed
        const ahead = sendAhead(tx);
        await ahead.insertInto("a").values({ id: 1, n: 0 }).execute();
        // its foreign key is checked after the whole statement, the row of `a` included
        await ahead.insertInto("b").values({ id: 1, a_id: 1 }).execute();
        await ahead.updateTable("a").set((eb) => ({ n: eb("n", "+", 1) })).execute();
        await ahead.updateTable("a").set((eb) => ({ n: eb("n", "+", 1) })).execute();
      });
      assert.deepEqual(await db.selectFrom("a").selectAll().execute(), [{ id: 1, n: 2 }]);
      const failed = await db.transaction().execute(async (tx) => {
        await tx.selectFrom("a").select("id").execute();
        const ahead = sendAhead(tx);
        await ahead.insertInto("a").values({ id: 2, n: 0 }).execute();
        await ahead.insertInto("b").values({ id: 1, a_id: 2 }).execute(); // the key is taken
      }).then(() => undefined, (error) => error);
      assert.ok(failed instanceof Error);
      assert.deepEqual(await db.selectFrom("a").select("id").execute(), [{ id: 1 }]);
    } finally {
      await db.destroy();
    }
  },
});
