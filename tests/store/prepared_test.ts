/**
 * Queries compiled once and run with new parameters (`store/sql/prepared.ts`), on both SQL
 * dialects: slots bind at their positions (`?` on libSQL, `$n` on PostgreSQL) beside the
 * query's own constants, one compiled query serves the database and its transactions, row
 * batches compile per row count, and a slot the builder did not bind as a value is refused.
 * (libsql's `Statement.get` once stood in for one-row reads here; on a cached statement it
 * answered with an earlier execution's row, which the first case caught.)
 * @module
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { prepare, prepareRows } from "../../store/sql/prepared.ts";
import { SQL_DIALECTS, withSqlStore } from "../helpers/sql_stores.ts";

const session = prepare((db, p: { id: string; title: string; at: string }) =>
  db.insertInto("sessions").values({
    session_id: p.id,
    title: p.title,
    created_at: p.at,
    updated_at: p.at,
    health: "healthy", // a constant of the query, kept at its position
    event_count: 0,
  })
);

const titled = prepare((db, p: { title: string; other: string }) =>
  db.selectFrom("sessions").select(["session_id", "health"])
    .where((eb) => eb.or([eb("title", "=", p.title), eb("title", "=", p.other)]))
    .where("health", "=", "healthy").orderBy("session_id")
);

const sameTwice = prepare((_db, p: { id: string }) =>
  sql<{ n: number }>`SELECT count(*) AS n FROM sessions
    WHERE session_id = ${p.id} OR title = ${p.id}`
);

const rows = prepareRows(
  ["session_id", "run_id", "kind", "payload", "digest", "at"],
  (db, batch: {
    session_id: string;
    run_id: string | null;
    kind: string;
    payload: string;
    digest: string;
    at: string;
  }[]) => db.insertInto("events").values(batch.map((r) => ({ ...r }))).returning("seq"),
);

for (const name of SQL_DIALECTS) {
  Deno.test(`${name}: slots bind at their positions beside the query's constants`, async () => {
    await withSqlStore(name, async (store) => {
      await session.execute(store.db, { id: "a", title: "first", at: "t1" });
      await store.db.transaction().execute(async (tx) => {
        await session.execute(tx, { id: "b", title: "second", at: "t2" });
        await session.execute(tx, { id: "c", title: "third", at: "t3" });
      });
      assert.deepEqual(await titled.all(store.db, { title: "third", other: "first" }), [
        { session_id: "a", health: "healthy" },
        { session_id: "c", health: "healthy" },
      ]);
      assert.deepEqual(await titled.first(store.db, { title: "second", other: "none" }), {
        session_id: "b",
        health: "healthy",
      });
      assert.equal(await titled.first(store.db, { title: "none", other: "none" }), undefined);
      assert.equal(Number((await sameTwice.first(store.db, { id: "b" }))!.n), 1);
      assert.equal(Number((await sameTwice.first(store.db, { id: "second" }))!.n), 1);
    });
  });

  Deno.test(`${name}: row batches compile per count, larger ones are built each time`, async () => {
    await withSqlStore(name, async (store) => {
      const event = (i: number) => ({
        session_id: "s",
        run_id: i % 2 ? null : "r",
        kind: "k",
        payload: `p${i}`,
        digest: "d",
        at: "t",
      });
      for (const n of [1, 3, 1, 20]) {
        const batch = Array.from({ length: n }, (_, i) => event(i));
        assert.equal((await rows.all(store.db, batch)).length, n);
      }
      const stored = await sql<{ n: number; runs: number }>`SELECT count(*) AS n,
        count(run_id) AS runs FROM events`.execute(store.db);
      assert.deepEqual(
        { n: Number(stored.rows[0]!.n), runs: Number(stored.rows[0]!.runs) },
        { n: 25, runs: 14 },
      );
    });
  });

  Deno.test(`${name}: a slot not bound as a value is refused when the query compiles`, async () => {
    await withSqlStore(name, async (store) => {
      // read but not bound (the query came out without it): refused, never run without it
      const ignored = prepare((db, p: { id: string }) => {
        void p.id;
        return db.selectFrom("sessions").select("session_id").where("session_id", "=", "x");
      });
      await assert.rejects(ignored.all(store.db, { id: "y" }), /parameter id is not bound/);
      // formatted into the query's text: refused while building
      const formatted = prepare((_db, p: { id: string }) =>
        sql`SELECT count(*) AS n FROM sessions WHERE session_id = ${sql.raw(`'${p.id}'`)}`
      );
      await assert.rejects(formatted.all(store.db, { id: "y" }), /read its parameter id/);
      // a field never read is no slot: the query runs as built
      const unused = prepare((db, _p: { id: string }) =>
        db.selectFrom("sessions").select("session_id").where("session_id", "=", "x")
      );
      assert.deepEqual(await unused.all(store.db, { id: "y" }), []);
    });
  });
}
