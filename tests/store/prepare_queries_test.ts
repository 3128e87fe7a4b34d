/**
 * `SqlStore.prepareQueries` (the start-up rehearsal's part in the store), on both SQL dialects:
 * every query the store makes compiles for the dialect and, on a libSQL file, prepares on the
 * database's schema, while nothing runs; each query made is built once, before its first run
 * (row batches for the counts a start and an advance append); and a query that fails is
 * reported without stopping the others. The failing queries are made inside the last test, so
 * the first one sees the store's own queries only.
 * @module
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import type { OpenedSqlStore } from "../../store/sql/store.ts";
import { prepare, prepareRows } from "../../store/sql/prepared.ts";
import { SQL_DIALECTS, withSqlStore } from "../helpers/sql_stores.ts";

/** Every table's row count, and the workflow cache's. */
async function everyCount(store: OpenedSqlStore): Promise<Record<string, number>> {
  const cache = await sql<{ files: number; outcomes: number }>`SELECT
    (SELECT count(*) FROM workflow_files) AS files,
    (SELECT count(*) FROM workflow_outcomes) AS outcomes`.execute(store.db);
  const row = cache.rows[0]!;
  return { ...await store.counts(), files: Number(row.files), outcomes: Number(row.outcomes) };
}

let built = { one: 0, batch: [] as number[] };

const counted = prepare((db, p: { id: string }) => {
  built.one++;
  return db.selectFrom("sessions").select("session_id").where("session_id", "=", p.id);
});

const countedRows = prepareRows(["session_id", "title"], (db, rows: {
  session_id: string;
  title: string;
}[]) => {
  built.batch.push(rows.length);
  return db.selectFrom("sessions").select("session_id")
    .where("session_id", "in", rows.map((r) => r.session_id))
    .where("title", "in", rows.map((r) => r.title));
});

for (const name of SQL_DIALECTS) {
  Deno.test(`${name}: every query compiles and prepares ahead, and none runs`, async () => {
    await withSqlStore(name, async (store) => {
      const before = await everyCount(store);
      built = { one: 0, batch: [] };
      await store.prepareQueries();
      assert.deepEqual(await everyCount(store), before);
      // built ahead: the single query once, the batch for one to four rows
      assert.deepEqual(built, { one: 1, batch: [1, 2, 3, 4] });
      assert.deepEqual(await counted.all(store.db, { id: "none" }), []);
      const rows = [{ session_id: "a", title: "t" }, { session_id: "b", title: "u" }];
      assert.deepEqual(await countedRows.all(store.db, rows), []);
      assert.deepEqual(built, { one: 1, batch: [1, 2, 3, 4] }, "nothing built again when run");
    });
  });
}

Deno.test("a query that fails is reported, and the others are compiled and prepared", async () => {
  // formatted into the query's text: refused while building
  const formatted = prepare((_db, p: { id: string }) =>
    sql`SELECT count(*) AS n FROM sessions WHERE session_id = ${sql.raw(`'${p.id}'`)}`
  );
  for (const name of SQL_DIALECTS) {
    await withSqlStore(name, async (store) => {
      built = { one: 0, batch: [] };
      await assert.rejects(
        store.prepareQueries(),
        /^Error: 1 prepared queries did not compile; the first: .*read its parameter id/,
      );
      assert.deepEqual(built, { one: 1, batch: [1, 2, 3, 4] });
    });
  }
  // compiles on every dialect; a libSQL file prepares it, and there is no such table
  const missing = prepare((_db, p: { id: string }) =>
    sql`SELECT id FROM no_such_table WHERE id = ${p.id}`
  );
  await withSqlStore("libsql", async (store) => {
    built = { one: 0, batch: [] };
    await assert.rejects(store.prepareQueries(), /no such table: no_such_table/);
    assert.deepEqual(built, { one: 1, batch: [1, 2, 3, 4] });
  });
  void [formatted, missing];
});
