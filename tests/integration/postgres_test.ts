/**
 * The team store on a real PostgreSQL server (Debian's package, started by
 * `tests/helpers/postgres.ts`; never a mock): what only a shared server has: machines with
 * their own keyrings on one database, connections lost mid-call, the server going away,
 * servers migrating a new database together, and doctor and backup. The server-driving suites
 * themselves run on PostgreSQL too, from `tests/postgres/` (the store matrix).
 * @module
 */
import assert from "node:assert/strict";
import pg from "pg";
import { sql } from "npm:kysely@0.29.9";
import type { Store } from "../../engine/model/ports.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { resumeSession } from "../../engine/use_cases/resume_session.ts";
import { openStore } from "../../store/mod.ts";
import { MIGRATIONS } from "../../store/sql/migrations.ts";
import { runCli } from "../helpers/maintenance.ts";
import { freshPostgresUrl, postgresTestable, startPostgres } from "../helpers/postgres.ts";
import { connect, err, ok } from "../helpers/server.ts";
import { ack, engineDeps, start, value } from "../store/subjects.ts";
import { keepSession, placeOf } from "../helpers/answers.ts";
import { serveAsProcesses } from "../helpers/in_process.ts";

/** The servers here are processes: that is what these tests are about. */
serveAsProcesses();

/** Without a server installed the file is skipped, except on CI (which installs one). */
const ignore = !postgresTestable();

/** Two homes (two keyrings: two machines) on one database. */
async function twoMachines(): Promise<
  { homes: [string, string]; url: string; cleanup(): Promise<void> }
> {
  const url = await freshPostgresUrl();
  const a = await Deno.makeTempDir({ prefix: "waymark-machine-a-" });
  const b = await Deno.makeTempDir({ prefix: "waymark-machine-b-" });
  return {
    homes: [a, b],
    url,
    async cleanup() {
      for (const home of [a, b]) await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test({
  name:
    "a run started on machine A continues on machine B through resume_session; A's tokens are refused on B, saying so",
  ignore,
  async fn() {
    const { homes: [homeA, homeB], url, cleanup } = await twoMachines();
    const a = await connect(homeA, { extraArgs: ["--db", url] });
    const b = await connect(homeB, { extraArgs: ["--db", url] });
    try {
      const started = ok(
        await a.call("start_workflow", {
          workflowId: "waymark.bug_investigation",
          goal: "Checkout timeouts",
        }),
      );
      const onA = ok(
        await a.call("continue_workflow", {
          stateToken: started.stateToken,
          ackToken: started.ackToken,
          output: { notesMarkdown: "The wombat cache evicts sessions under load." },
        }),
      );
      // A's tokens on B: refused, naming what happened and the way on
      const foreign = err(
        await b.call("continue_workflow", {
          stateToken: onA.stateToken,
          ackToken: onA.ackToken,
          output: { notesMarkdown: "from B" },
        }),
      );
      assert.equal(foreign.code, "TOKEN_INVALID");
      assert.equal(foreign.details?.reason, "unknown_key");
      assert.match(foreign.message, /signed on another machine \(key [0-9a-f]{8}\)/);
      assert.match(foreign.message, /call resume_session/);
      // B finds the run in the shared store and gets its own tokens for A's tip
      const found = ok(await b.call("resume_session", { query: "wombat" }));
      assert.equal(found.candidates.length, 1);
      const c = found.candidates[0];
      assert.equal(c.sessionId, started.session.sessionId);
      assert.equal(c.tip.nodeId, placeOf(onA).nodeId);
      assert.notEqual(c.tip.stateToken, onA.stateToken, "B signs with its own key");
      const onB = ok(
        await b.call("continue_workflow", {
          stateToken: c.tip.stateToken,
          ackToken: c.tip.ackToken,
          output: { notesMarkdown: "Carried on from machine B: the wombat cache is fixed." },
        }),
      );
      assert.equal(placeOf(onB).runId, placeOf(started).runId);
      // and A sees B's step when it looks again
      const back = ok(await a.call("resume_session", { query: placeOf(started).runId }));
      assert.equal(back.candidates[0].tip.nodeId, placeOf(onB).nodeId);
      // A's own token still works on A: a replay of its ack answers as before
      const replay = ok(
        await a.call("continue_workflow", {
          stateToken: started.stateToken,
          ackToken: started.ackToken,
          output: { notesMarkdown: "The wombat cache evicts sessions under load." },
        }),
      );
      assert.deepEqual(replay, onA);
    } finally {
      await a.close();
      await b.close();
      await cleanup();
    }
  },
});

/** The waymark connections to a database cut by the server (as a restart or a proxy would). */
async function cutConnections(url: string): Promise<number> {
  const admin = new pg.Client({ connectionString: url, application_name: "test-admin" });
  await admin.connect();
  try {
    const result = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE application_name = 'waymark' AND datname = current_database()`,
    );
    return result.rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

Deno.test({
  name:
    "a connection lost in the middle of a write is tried again on a new one: one advance, the same answer",
  ignore,
  async fn() {
    const url = await freshPostgresUrl();
    const store = await openStore(url);
    try {
      let tries = 0;
      // the server cuts the connection while the ack's transaction is open (a run's first ack
      // in a process reads its node before the transaction, later ones inside it)
      const cut = async () => {
        if (tries++ === 0) assert.ok(await cutConnections(url) >= 1);
      };
      const cutting: Store = {
        ...store,
        write: (fn) => store.write(async (tx) => (await cut(), await fn(tx))),
        writeAttempt: (key, fn) =>
          store.writeAttempt!(key, async (tx, found) => (await cut(), await fn(tx, found))),
      };
      const deps = await engineDeps(cutting);
      const root = await start(deps, "project.plain");
      tries = 0;
      const next = await ack(deps, root, "cut once");
      assert.equal(tries, 2, "the write ran again after the cut");
      const counts = await store.counts();
      assert.equal(counts.attempts, 1);
      assert.equal(counts.nodes, 2);
      const replay = value(
        await continueWorkflow(deps, {
          stateToken: root.stateToken,
          ackToken: root.ackToken!,
          output: { notesMarkdown: "cut once" },
        }),
      );
      // `ack` names the run's session on its answer as the start did; the replay the same way
      assert.deepEqual(keepSession(replay, root), next);
      // Inside the transaction that read the attempt, what follows its first round trip leaves
      // with the COMMIT: a cut there is a cut during the commit, which may have committed, so
      // it is answered STORAGE_UNREACHABLE (retryable) and the retry records it once.
      tries = 0;
      const atCommit = await continueWorkflow(deps, {
        stateToken: next.stateToken,
        ackToken: next.ackToken!,
        output: { notesMarkdown: "cut inside the transaction that read it" },
      });
      assert.equal(atCommit.ok ? "ok" : atCommit.error.code, "STORAGE_UNREACHABLE");
      assert.equal(tries, 1, "not tried again past its commit");
      const third = await ack(deps, next, "cut inside the transaction that read it");
      assert.equal((await store.counts()).attempts, 2);
      // connections cut between calls: the next reads and writes open new ones
      await cutConnections(url);
      value(await resumeSession(deps, { query: "cut" }));
      await ack(deps, third, "after a cut between calls");
    } finally {
      await store.close();
    }
  },
});

Deno.test({
  name:
    "with the server down a call is STORAGE_UNREACHABLE (retryable) and writes nothing; once it is back the same call succeeds once",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = await startPostgres();
    const store = await openStore(await server.createDatabase(), { busyTimeoutMs: 500 });
    try {
      const deps = await engineDeps(store);
      const root = await start(deps, "project.plain");
      const args = {
        stateToken: root.stateToken,
        ackToken: root.ackToken!,
        output: { notesMarkdown: "while the server was away" },
      };
      await server.down();
      const refused = await continueWorkflow(deps, args);
      assert.ok(!refused.ok);
      assert.equal(refused.error.code, "STORAGE_UNREACHABLE", refused.error.message);
      assert.equal(refused.error.retry.kind, "retryable_after_ms");
      assert.match(refused.error.message, /cannot be reached/);
      const search = await resumeSession(deps, { query: "server" });
      assert.ok(!search.ok && search.error.code === "STORAGE_UNREACHABLE");
      await server.up();
      const done = value(await continueWorkflow(deps, args));
      assert.deepEqual(value(await continueWorkflow(deps, args)), done);
      const counts = await store.counts();
      assert.deepEqual([counts.attempts, counts.nodes, counts.outputs], [1, 2, 1]);
    } finally {
      await store.close();
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "a read-only PostgreSQL database is STORAGE_READ_ONLY in the server's terms: details.server, no file advice",
  ignore,
  async fn() {
    const url = await freshPostgresUrl();
    const store = await openStore(url);
    try {
      const deps = await engineDeps(store);
      const root = await start(deps, "project.plain");
      const admin = new pg.Client({ connectionString: url, application_name: "test-admin" });
      await admin.connect();
      try {
        await admin.query(
          "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_read_only = on', current_database()); END $$",
        );
      } finally {
        await admin.end();
      }
      // the pool's connections are made again, read-only now
      await cutConnections(url);
      const refused = await continueWorkflow(deps, {
        stateToken: root.stateToken,
        ackToken: root.ackToken!,
      });
      assert.ok(!refused.ok);
      assert.equal(refused.error.code, "STORAGE_READ_ONLY", refused.error.message);
      assert.deepEqual(refused.error.retry, { kind: "not_retryable" });
      assert.equal(refused.error.details?.file, undefined);
      assert.match(String(refused.error.details?.server), /^postgres/);
      assert.match(
        refused.error.message,
        /PostgreSQL database .* refuses writes \(SQLSTATE 25006\)/,
      );
      assert.doesNotMatch(refused.error.message, /-wal|-shm|WAYMARK_HOME|permission on that file/);
    } finally {
      await store.close();
    }
  },
});

Deno.test({
  name: "durability full asks the server for synchronous commits; normal leaves its setting",
  ignore,
  async fn() {
    // the setting as the database's default (not a server of its own): what a session starts
    // with unless the connection asks otherwise, as a server-wide setting would be
    const url = await freshPostgresUrl();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query("SELECT current_database() AS name");
      await admin.query(`ALTER DATABASE "${rows[0].name}" SET synchronous_commit = off`);
    } finally {
      await admin.end();
    }
    for (const [durability, expected] of [["normal", "off"], ["full", "on"]] as const) {
      const store = await openStore(url, { durability });
      try {
        const row = await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`
          .execute(store.db);
        assert.equal(row.rows[0]?.synchronous_commit, expected, durability);
      } finally {
        await store.close();
      }
    }
  },
});

Deno.test({
  name: "servers opening a new database together migrate it once",
  ignore,
  async fn() {
    const url = await freshPostgresUrl();
    const stores = await Promise.all(Array.from({ length: 6 }, () => openStore(url)));
    try {
      const status = await stores[0]!.maintenance.schemaStatus();
      assert.deepEqual(status.applied, Object.keys(MIGRATIONS).sort());
      assert.deepEqual([status.pending, status.unknown], [[], []]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  },
});

Deno.test({
  name:
    "doctor reports the server, its round trip, the pool and the schema; backup writes a libSQL file that checks out",
  ignore,
  async fn() {
    const url = await freshPostgresUrl();
    const home = await Deno.makeTempDir({ prefix: "waymark-pg-doctor-" });
    try {
      const client = await connect(home, { extraArgs: ["--db", url] });
      try {
        const started = ok(
          await client.call("start_workflow", { workflowId: "waymark.code_review" }),
        );
        ok(
          await client.call("continue_workflow", {
            stateToken: started.stateToken,
            ackToken: started.ackToken,
            output: { notesMarkdown: "Looked at the numbat parser." },
          }),
        );
      } finally {
        await client.close();
      }
      const doctor = await runCli(["doctor", "--json", "--db", url], { home });
      assert.equal(doctor.code, 0, doctor.out + doctor.err);
      const report = JSON.parse(doctor.out);
      const database = report.findings.find((f: { check: string }) => f.check === "database");
      assert.match(database.message, /PostgreSQL \d+\.\d+.*, round trip [\d.]+ ms, pool \d+ of 4/);
      assert.equal(database.details.server, "postgresql");
      assert.equal(typeof database.details.latencyMs, "number");
      assert.equal(database.details.pool.size, 4);
      const schema = report.findings.find((f: { check: string }) => f.check === "schema");
      assert.equal(schema.message, `schema current (${Object.keys(MIGRATIONS).sort().at(-1)})`);

      const copy = `${home}/backup.db`;
      const backup = await runCli(["backup", copy, "--db", url], { home });
      assert.equal(backup.code, 0, backup.err);
      const check = await runCli(["doctor", copy, "--json"], { home });
      assert.equal(check.code, 0, check.out);
      const sessions = await runCli(["sessions", "list", "--db", `file:${copy}`], { home });
      assert.equal(sessions.code, 0, sessions.err);
      const restored = await connect(home, { extraArgs: ["--db", `file:${copy}`] });
      try {
        const found = ok(await restored.call("resume_session", { query: "numbat" }));
        assert.equal(found.candidates.length, 1, "the copy's search index finds the notes");
      } finally {
        await restored.close();
      }
    } finally {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
