/**
 * Listings by last change through the minute's indexes (`store/sql/activity_minutes.ts`), on
 * both stores: sessions and runs list most recently changed first with the same tiebreaks as
 * when `updated_at` itself was indexed, across minute (and hour, and year) boundaries and ties;
 * the viewer's age filters keep the rows on both sides of a cutoff inside one minute. And on
 * PostgreSQL, an advance's updates of its session and run are HOT: they change no indexed
 * column, so they write no index entry other transactions' predicate locks could catch.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { type OpenedSqlStore, openStore } from "../../store/mod.ts";
import { listSessions as viewerSessions } from "../../store/sql/viewer/sessions_list.ts";
import { freshPostgresUrl } from "../helpers/postgres.ts";
import { SQL_DIALECTS, withSqlStore } from "../helpers/sql_stores.ts";
import { ack, engineDeps, start } from "./subjects.ts";

/** Last changes around minute, hour and year boundaries, ties among them; ids out of order. */
const CHANGED: [id: string, at: string][] = [
  ["c", "2030-01-01T00:00:59.999Z"],
  ["a", "2030-01-01T00:01:00.000Z"],
  ["f", "2030-01-01T00:01:00.000Z"],
  ["b", "2030-01-01T00:01:00.000Z"],
  ["h", "2030-01-01T00:00:00.000Z"],
  ["e", "2029-12-31T23:59:59.999Z"],
  ["d", "2030-01-01T00:01:30.500Z"],
  ["g", "2030-01-01T01:00:00.000Z"],
  ["i", "2030-01-01T00:00:59.999Z"],
];

/** The order `updated_at DESC, id` gives. */
const EXPECTED = [...CHANGED].sort(([a, x], [b, y]) => x < y ? 1 : x > y ? -1 : a < b ? -1 : 1)
  .map(([id]) => id);

async function seed(store: OpenedSqlStore, changed: [string, string][]): Promise<void> {
  for (const [id, at] of changed) {
    await store.db.insertInto("sessions").values({
      session_id: `s${id}`,
      title: id,
      created_at: "2029-01-01T00:00:00.000Z",
      updated_at: at,
      health: "healthy",
      event_count: 0,
    }).execute();
    await store.db.insertInto("runs").values({
      run_id: `r${id}`,
      session_id: `s${id}`,
      workflow_id: "w",
      workflow_hash: "h",
      goal: id,
      created_at: "2029-01-01T00:00:00.000Z",
      updated_at: at,
      status: "running",
      node_count: 0,
      workspace: "/ws",
    }).execute();
  }
}

for (const dialect of SQL_DIALECTS) {
  Deno.test(`${dialect}: sessions and runs list by last change across minutes, ties by id`, () =>
    withSqlStore(dialect, async (store) => {
      await seed(store, CHANGED);
      const sessions = await store.listSessions({ limit: 20, offset: 0 });
      assert.deepEqual(sessions.map((s) => s.title), EXPECTED);
      const paged = [0, 3, 6].map((offset) => store.listSessions({ limit: 3, offset }));
      assert.deepEqual((await Promise.all(paged)).flat().map((s) => s.title), EXPECTED);
      const runs = await store.listRuns({ limit: 20, offset: 0 });
      assert.deepEqual(runs.map((r) => r.goal), EXPECTED);
      assert.deepEqual((await store.listRuns({ limit: 4, offset: 2 })).map((r) => r.goal), [
        ...EXPECTED.slice(2, 6),
      ]);
      const page = await viewerSessions(store.db, {}, { offset: 0, limit: 20 });
      assert.deepEqual(page.sessions.map((s) => s.title), EXPECTED);
    }));

  Deno.test(`${dialect}: the viewer's age filters split a minute at the cutoff`, () =>
    withSqlStore(dialect, async (store) => {
      const now = new Date("2030-02-01T00:00:30.000Z");
      await seed(store, [
        ["old-in", "2030-01-02T00:00:29.999Z"], // just before the 30-day cutoff
        ["old-out", "2030-01-02T00:00:30.000Z"], // at it: not older
        ["day-in", "2030-01-31T00:00:30.000Z"], // at the 1-day cutoff: within the day
        ["day-out", "2030-01-31T00:00:29.999Z"],
      ]);
      const titles = async (age: "1d" | "older30d") =>
        (await viewerSessions(store.db, { age }, { offset: 0 }, now)).sessions.map((s) => s.title);
      assert.deepEqual(await titles("older30d"), ["old-in"]);
      assert.deepEqual(await titles("1d"), ["day-in"]);
    }));
}

/** Updates and HOT updates of `table` as the server's statistics have them. */
async function updates(url: string, table: string): Promise<{ all: number; hot: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT n_tup_upd AS all, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = $1",
      [table],
    );
    return { all: Number(rows[0].all), hot: Number(rows[0].hot) };
  } finally {
    await client.end();
  }
}

if (SQL_DIALECTS.includes("postgres")) {
  Deno.test("postgres: an advance's updates of its session and run are HOT", async () => {
    const url = await freshPostgresUrl();
    let at = Date.parse("2030-01-01T00:00:00.000Z");
    // within one minute, as an agent's advances mostly are: a new minute moves the index's key
    const store = await openStore(url, { now: () => new Date(at += 1).toISOString() });
    try {
      const deps = await engineDeps(store);
      let step = await start(deps, "project.plain");
      for (const notes of ["one", "two", "three"]) step = await ack(deps, step, notes);
    } finally {
      await store.close();
    }
    // each connection reports its counts as it closes: wait for some, then compare what came
    for (const table of ["sessions", "runs"]) {
      let seen = await updates(url, table);
      for (let i = 0; seen.all === 0 && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        seen = await updates(url, table);
      }
      assert.ok(seen.all > 0, `${table}: no updates reported`);
      assert.equal(seen.hot, seen.all, `${table}: ${seen.all - seen.hot} updates were not HOT`);
    }
  });
}
