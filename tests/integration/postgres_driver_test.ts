/**
 * The PostgreSQL driver's round-trip savings on a real server (`tests/helpers/postgres.ts`):
 * writes sent ahead do not wait for their answers, their failures still stop the transaction
 * (thrown by the next statement that waits, or at the commit before the COMMIT goes out), and
 * a statement's protocol messages leave in one socket write.
 * @module
 */
import assert from "node:assert/strict";
import net from "node:net";
import pg from "pg";
import { Kysely, sql } from "npm:kysely@0.29.9";
import { createPool, sendAhead, WaymarkPostgresDialect } from "../../store/postgres/driver.ts";
import { isConnectionLost, transact } from "../../store/postgres/pg_faults.ts";
import { coalesceWrites, socketOf } from "../../store/postgres/wire.ts";
import { prepare } from "../../store/sql/prepared.ts";
import { freshPostgresUrl, postgresBin } from "../helpers/postgres.ts";

const ignore = postgresBin() === null && !Deno.env.get("CI");

interface Db {
  t: { id: number };
}

/** A Kysely over the driver on a fresh database with one table `t (id int primary key)`. */
async function database(): Promise<Kysely<Db>> {
  const pool = createPool(await freshPostgresUrl(), { connectTimeoutMs: 5000 });
  const db = new Kysely<Db>({ dialect: new WaymarkPostgresDialect({ pool }) });
  await sql`CREATE TABLE t (id int PRIMARY KEY)`.execute(db);
  return db;
}

const ids = async (db: Kysely<Db>) =>
  (await db.selectFrom("t").select("id").orderBy("id").execute()).map((r) => r.id);

Deno.test({
  name: "writes sent ahead return at once; the next statement that waits waits for them too",
  ignore,
  async fn() {
    const db = await database();
    try {
      await db.transaction().execute(async (tx) => {
        await tx.selectFrom("t").select("id").execute(); // the BEGIN is confirmed
        const t0 = performance.now();
        // the server takes 300 ms over this insert
        await sendAhead(tx).insertInto("t")
          .values({ id: sql<number>`(SELECT 1 FROM pg_sleep(0.3))` }).execute();
        assert.ok(performance.now() - t0 < 150, "the write sent ahead did not wait");
        const rows = await tx.selectFrom("t").select("id").execute();
        assert.ok(performance.now() - t0 >= 300, "the read waited behind the write");
        assert.deepEqual(rows, [{ id: 1 }]);
      });
      assert.deepEqual(await ids(db), [1]);
    } finally {
      await db.destroy();
    }
  },
});

/** A write compiled once (`store/sql/prepared.ts`) whose server takes 300 ms. */
const slowInsert = prepare((db, p: { id: number }) =>
  (db as unknown as Kysely<Db>).insertInto("t")
    .values({ id: sql<number>`(SELECT ${p.id}::int FROM pg_sleep(0.3))` })
);

Deno.test({
  name: "a precompiled write first run outside any transaction is still sent ahead in one",
  ignore,
  async fn() {
    const db = await database();
    try {
      // compiled on the connection, as the start-up rehearsal compiles every query
      await slowInsert.execute(db as never, { id: 1 });
      await db.transaction().execute(async (tx) => {
        await tx.selectFrom("t").select("id").execute(); // the BEGIN is confirmed
        const t0 = performance.now();
        await slowInsert.execute(sendAhead(tx) as never, { id: 2 });
        assert.ok(performance.now() - t0 < 150, "the write sent ahead did not wait");
        // and the same query on the transaction itself waits, as any write does
        await slowInsert.execute(tx as never, { id: 3 });
        assert.ok(performance.now() - t0 >= 600, "the write on the transaction waited");
      });
      assert.deepEqual(await ids(db), [1, 2, 3]);
    } finally {
      await db.destroy();
    }
  },
});

Deno.test({
  name: "until the server confirmed a transaction's BEGIN, writes sent ahead wait",
  ignore,
  async fn() {
    const db = await database();
    try {
      await db.transaction().execute(async (tx) => {
        const t0 = performance.now();
        // were the BEGIN to fail, a write not waited for would commit on its own
        await sendAhead(tx).insertInto("t")
          .values({ id: sql<number>`(SELECT 1 FROM pg_sleep(0.3))` }).execute();
        assert.ok(performance.now() - t0 >= 300, "the first write waited");
      });
      assert.deepEqual(await ids(db), [1]);
    } finally {
      await db.destroy();
    }
  },
});

Deno.test({
  name: "a failed write sent ahead is thrown by the next statement that waits; nothing commits",
  ignore,
  async fn() {
    const db = await database();
    try {
      await db.insertInto("t").values({ id: 1 }).execute();
      const failed = await db.transaction().execute(async (tx) => {
        await tx.selectFrom("t").select("id").execute();
        const ahead = sendAhead(tx);
        await ahead.insertInto("t").values({ id: 2 }).execute();
        await ahead.insertInto("t").values({ id: 1 }).execute(); // the key is taken
        await ahead.insertInto("t").values({ id: 3 }).execute();
        await tx.selectFrom("t").selectAll().execute();
      }).then(() => null, (error) => error);
      // the cause, not the "transaction is aborted" of the statements behind it
      assert.equal(failed?.code, "23505");
      assert.deepEqual(await ids(db), [1]);
    } finally {
      await db.destroy();
    }
  },
});

Deno.test({
  name:
    "a failed write sent ahead at a transaction's end turns its commit into a rollback: tried again as a taken key is",
  ignore,
  async fn() {
    const db = await database();
    try {
      await db.insertInto("t").values({ id: 1 }).execute();
      let tries = 0;
      const policy = { conflictMs: 5000, connectionTries: 3, location: "test" };
      const failed = await transact(db as never, async (tx) => {
        tries++;
        await sql`SELECT 1`.execute(tx); // the BEGIN is confirmed
        await sendAhead(tx).insertInto("t" as never).values({ id: 1 } as never).execute();
      }, policy).then(() => null, (error) => error);
      assert.equal(failed?.code, "23505");
      // a failure during the commit would not be tried again (it might have committed)
      assert.equal(tries, 4, "the first try and three more after a taken key");
      assert.deepEqual(await ids(db), [1]);
    } finally {
      await db.destroy();
    }
  },
});

Deno.test({
  name: "a statement's protocol messages leave in one socket write",
  ignore,
  async fn() {
    const client = new pg.Client({ connectionString: await freshPostgresUrl() });
    await client.connect();
    try {
      const socket = socketOf(client)!;
      let writes = 0;
      const write = socket.write.bind(socket);
      socket.write = (...args: [unknown, ...unknown[]]) => {
        writes++;
        return write(...args);
      };
      const query = () => client.query({ name: "one", text: "SELECT $1::int AS n", values: [7] });
      await query(); // parse, bind, describe, execute, sync
      assert.ok(writes > 1, `pg alone writes each message (${writes} writes)`);
      coalesceWrites(socket);
      writes = 0;
      assert.deepEqual((await query()).rows, [{ n: 7 }]);
      assert.equal(writes, 1);
    } finally {
      await client.end();
    }
  },
});

Deno.test({
  name:
    "statements are prepared once per connection, except graph walks (planned for their values)",
  ignore,
  async fn() {
    const db = await database();
    try {
      const prepared = await db.transaction().execute(async (tx) => {
        await tx.selectFrom("t").select("id").where("id", "=", 1).execute();
        await sql`WITH RECURSIVE up(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM up WHERE n < ${3})
          SELECT n FROM up`.execute(tx);
        // the view lists what this connection prepared
        const rows = await sql<{ statement: string }>`
          SELECT statement FROM pg_prepared_statements`.execute(tx);
        return rows.rows.map((r) => r.statement);
      });
      assert.ok(prepared.some((s) => s.includes(`from "t" where "id" = $1`)), String(prepared));
      assert.ok(!prepared.some((s) => /recursive/i.test(s)), String(prepared));
    } finally {
      await db.destroy();
    }
  },
});

Deno.test({
  name:
    "a transaction's BEGIN, its writes sent ahead and its COMMIT leave with statements that wait",
  ignore,
  async fn() {
    // count what reaches the sockets (before any client binds `write`)
    const socket = net.Socket.prototype as unknown as { write: (...a: unknown[]) => boolean };
    const write = socket.write;
    let writes = 0;
    socket.write = function (this: unknown, ...args: unknown[]) {
      writes++;
      return write.apply(this, args);
    };
    const db = await database();
    try {
      await db.selectFrom("t").select("id").execute(); // the connection is made
      writes = 0;
      await db.transaction().execute(async (tx) => {
        await tx.selectFrom("t").select("id").execute(); // 1: BEGIN and this read
        for (const id of [1, 2, 3]) await sendAhead(tx).insertInto("t").values({ id }).execute();
        await tx.selectFrom("t").select("id").execute(); // 2: the three inserts and this read
        await sendAhead(tx).insertInto("t").values({ id: 4 }).execute();
      }); // 3: the last insert and the COMMIT
      assert.equal(writes, 3);
      assert.deepEqual(await ids(db), [1, 2, 3, 4]);
    } finally {
      socket.write = write;
      await db.destroy();
    }
  },
});

Deno.test({
  name: "statements held for a connection the server closed fail as a lost connection",
  ignore,
  async fn() {
    const db = await database();
    const admin = new pg.Client({ connectionString: await freshPostgresUrl() });
    await admin.connect();
    try {
      const [{ pid }] = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db))
        .rows;
      const failed = await db.transaction().execute(async (tx) => {
        // the BEGIN is held for the first statement; the server ends the session meanwhile
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.selectFrom("t").select("id").execute();
      }).then(() => null, (error) => error);
      assert.ok(isConnectionLost(failed), `a lost connection, not ${failed}`);
      assert.deepEqual(await ids(db), [], "a new connection serves the next call");
    } finally {
      await admin.end();
      await db.destroy();
    }
  },
});

Deno.test("writes held on a socket that ended meanwhile are dropped, not written after its end", async () => {
  const dir = await Deno.makeTempDir();
  const server = net.createServer((peer) => peer.resume());
  await new Promise<void>((resolve) => server.listen(`${dir}/s`, resolve));
  const socket = net.connect(`${dir}/s`);
  try {
    await new Promise((resolve) => socket.once("connect", resolve));
    const errors: unknown[] = [];
    socket.on("error", (error) => errors.push(error));
    coalesceWrites(socketOf({ connection: { stream: socket } })!);
    socket.cork();
    socket.write(new Uint8Array([1, 2, 3]));
    socket.end(); // as when the server closes the connection under a held statement
    socket.uncork();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(errors, []);
  } finally {
    socket.destroy();
    await new Promise((resolve) => server.close(resolve));
    await Deno.remove(dir, { recursive: true });
  }
});
