/**
 * libSQL's full-text index catches up when it is read, not as runs and outputs are written:
 * starts and advances write no index rows, a search first indexes what is pending and answers
 * as if each row had been indexed when written, writers catch up every `BACKLOG_LIMIT` rows,
 * and rows deleted from the top of their table (a session removed) never hide later ones.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sql } from "kysely";
import { resumeSession } from "../../engine/use_cases/resume_session.ts";
import { openStore, type SqliteStore } from "../../store/mod.ts";
import { BACKLOG_LIMIT } from "../../store/libsql/fts_backlog.ts";
import { deleteSession } from "../../store/sql/tables.ts";
import { ack, engineDeps, start, value } from "../store/subjects.ts";
import { placeOf } from "../helpers/answers.ts";

async function withStore(fn: (store: SqliteStore) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waymark-backlog-" });
  const store = await openStore(`file:${join(dir, "waymark.db")}`) as SqliteStore;
  try {
    await fn(store);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function count(store: SqliteStore, table: string): Promise<number> {
  const rows = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`
    .execute(store.db);
  return Number(rows.rows[0]!.n);
}

async function through(store: SqliteStore, name = "outputs"): Promise<number> {
  const rows = await sql<{ through: number }>`SELECT through FROM search_backlog
    WHERE name = ${name}`.execute(store.db);
  return Number(rows.rows[0]!.through);
}

Deno.test("starts and advances write no index rows; the next search indexes them and finds the latest notes", async () => {
  await withStore(async (store) => {
    const deps = await engineDeps(store);
    const root = await start(deps, "project.plain", { goal: "Numbat backlog" });
    const a1 = await ack(deps, root, "The quokka migration started.");
    await ack(deps, a1, "The wallaby cutover is done.");
    assert.equal(await count(store, "search_titles"), 0, "a start indexed its title");
    assert.equal(await count(store, "search_outputs"), 0, "an advance indexed its output");
    assert.equal(await count(store, "search_tips"), 0);

    const titled = value(await resumeSession(deps, { query: "numbat" })).candidates;
    assert.deepEqual(titled.map((c) => c.runId), [placeOf(root).runId]);
    assert.equal(await count(store, "search_titles"), 1);
    assert.equal(await through(store, "titles"), 1);

    const deep = value(await resumeSession(deps, { query: "quokka" })).candidates;
    assert.deepEqual(deep.map((c) => c.runId), [placeOf(root).runId]);
    assert.equal(await count(store, "search_outputs"), 2);
    assert.equal(await through(store), await count(store, "outputs"));
    // the tip is the run's latest output, as when each was indexed on its own
    const tip = value(await resumeSession(deps, { query: "wallaby" })).candidates;
    assert.deepEqual(tip.map((c) => c.runId), [placeOf(root).runId]);
    const tips = await sql<{ text: string }>`SELECT text FROM search_tips`.execute(store.db);
    assert.deepEqual(tips.rows.map((r) => r.text), ["The wallaby cutover is done."]);
  });
});

Deno.test("writers catch the index up every BACKLOG_LIMIT rows", async () => {
  await withStore(async (store) => {
    const deps = await engineDeps(store);
    let at = await start(deps, "project.long");
    for (let i = 0; i < BACKLOG_LIMIT + 2; i++) at = await ack(deps, at, `step ${i} notes`);
    const indexed = await count(store, "search_outputs");
    const written = await count(store, "outputs");
    assert.ok(indexed > 0, "no output was indexed on the write path");
    assert.ok(written - indexed < BACKLOG_LIMIT, `${written - indexed} outputs left to index`);
    assert.ok(indexed < written, "every output was indexed as it was written");
    assert.equal(await through(store), indexed);
  });
});

Deno.test("outputs written after the newest ones were deleted are still found", async () => {
  await withStore(async (store) => {
    const deps = await engineDeps(store);
    const old = await start(deps, "project.plain", { goal: "Old" });
    await ack(deps, old, "An old note about otters.");
    const gone = await start(deps, "project.plain", { goal: "Gone" });
    const g1 = await ack(deps, gone, "A note about badgers.");
    await ack(deps, g1, "More about badgers.");
    value(await resumeSession(deps, { query: "badgers" })); // indexed through the newest
    const before = await through(store);
    await store.db.transaction().execute((tx) =>
      deleteSession(tx, store.dialect.search, gone.session!.sessionId.replace(/^ses_/, ""))
    );
    assert.ok(await through(store) < before, "deleting the newest outputs left the mark above");
    assert.equal(await through(store, "titles"), 1, "deleting the newest run left the mark above");
    // the next outputs take the deleted rows' rowids
    const next = await start(deps, "project.plain", { goal: "Next about aardvarks" });
    await ack(deps, next, "A note about pangolins.");
    const found = value(await resumeSession(deps, { query: "pangolins" })).candidates;
    assert.deepEqual(found.map((c) => c.runId), [placeOf(next).runId]);
    const titled = value(await resumeSession(deps, { query: "aardvarks" })).candidates;
    assert.deepEqual(titled.map((c) => c.runId), [placeOf(next).runId], "the run's title is lost");
    assert.deepEqual(
      value(await resumeSession(deps, { query: "badgers" })).candidates,
      [],
      "a deleted session's outputs are still found",
    );
  });
});

Deno.test("a database that cannot be written is searched as far as it is indexed", async () => {
  await withStore(async (store) => {
    const deps = await engineDeps(store);
    const root = await start(deps, "project.plain", { goal: "Read only" });
    const a1 = await ack(deps, root, "Indexed: the echidna plan.");
    value(await resumeSession(deps, { query: "echidna" }));
    await ack(deps, a1, "Pending: the bilby plan.");
    store.pragmaEverywhere("PRAGMA query_only = 1");
    try {
      const indexed = value(await resumeSession(deps, { query: "echidna" })).candidates;
      assert.deepEqual(indexed.map((c) => c.runId), [placeOf(root).runId]);
      assert.deepEqual(value(await resumeSession(deps, { query: "bilby" })).candidates, []);
    } finally {
      store.pragmaEverywhere("PRAGMA query_only = 0");
    }
    const caught = value(await resumeSession(deps, { query: "bilby" })).candidates;
    assert.deepEqual(caught.map((c) => c.runId), [placeOf(root).runId]);
  });
});
