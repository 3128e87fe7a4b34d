/**
 * Damage that a server and doctor must survive and say: a full-text table dropped (either store;
 * `WAYMARK_TEST_DB=postgres` runs this on PostgreSQL) or damaged (FTS5) is a clear, not
 * retryable error over MCP (never `INTERNAL_ERROR` with
 * "retry now"), and doctor rebuilds it from the sessions (derived data: no backup advised).
 * @module
 */
import assert from "node:assert/strict";
import { runCli, sqlOn } from "../helpers/maintenance.ts";
import { testingOnPostgres } from "../helpers/postgres.ts";
import { connect, dbUrlOf, err, ok, tempHome, type TestClient } from "../helpers/server.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

async function doctor(home: string, ...args: string[]): Promise<{ code: number; report: Json }> {
  const ran = await runCli(["doctor", "--json", ...args], { home });
  return { code: ran.code, report: JSON.parse(ran.out) as Json };
}

const problems = (report: Json) =>
  report.findings.filter((f: Json) => !f.ok).map((f: Json) => f.check);

/** A run with a checkpointed note, written over MCP. */
/** Runs `fn` with a client of a server on `home`, closed after. */
async function onServer(home: string, fn: (client: TestClient) => Promise<void>): Promise<void> {
  const client = await connect(home);
  try {
    await fn(client);
  } finally {
    await client.close();
  }
}

async function seed(client: TestClient): Promise<void> {
  const started = ok(
    await client.call("start_workflow", {
      workflowId: "waymark.bug_investigation",
      goal: "Flaky upload",
    }),
  );
  ok(
    await client.call("checkpoint_workflow", {
      stateToken: started.stateToken,
      checkpointToken: started.checkpointToken,
      output: { notesMarkdown: "the wombat cache evicts sessions" },
    }),
  );
}

for (
  const [what, damage] of [
    ["dropped", ["DROP TABLE search_tips"]],
    ["damaged", ["UPDATE search_tips_data SET block = x'ffffffffffff' WHERE id > 1"]],
  ] as const
) {
  Deno.test({
    name:
      `a ${what} search table: resume_session says so (not retryable) and doctor --repair rebuilds it without advising a backup`,
    // FTS5's own tables are libSQL's; a table dropped is either store's
    ignore: what === "damaged" && testingOnPostgres(),
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const { home, cleanup } = await tempHome();
      try {
        await onServer(home, async (client) => {
          await seed(client);
        });
        await sqlOn(dbUrlOf(home), ...damage);
        await onServer(home, async (client) => {
          const refused = err(await client.call("resume_session", { query: "wombat" }));
          assert.equal(refused.code, "STORAGE_CORRUPTION_DETECTED", refused.message);
          assert.deepEqual(refused.retry, { kind: "not_retryable" });
          assert.match(refused.message, /search index is missing or damaged.*doctor --repair/);
          // writes go on: the index is not a session's data
          ok(await client.call("start_workflow", { workflowId: "waymark.code_review" }));
        });
        const found = await doctor(home);
        assert.equal(found.code, 1);
        assert.deepEqual(problems(found.report), ["projections", "search_index"]);
        const index = found.report.findings.find((f: Json) => f.check === "search_index");
        assert.match(index.message, /search_tips/);
        assert.match(index.fix, /derived from the sessions.*no backup is needed/);
        assert.doesNotMatch(JSON.stringify(found.report), /Restore the latest backup/);

        const repaired = await doctor(home, "--repair");
        assert.equal(repaired.code, 0, JSON.stringify(repaired.report.findings));
        assert.match(repaired.report.repaired.join(), /rebuilt the search index/);
        await onServer(home, async (client) => {
          const back = ok(await client.call("resume_session", { query: "wombat" }));
          assert.equal(back.candidates.length, 1, JSON.stringify(back));
        });
      } finally {
        await cleanup();
      }
    },
  });
}

Deno.test({
  name:
    "text that is not UTF-8 is STORAGE_CORRUPTION_DETECTED, not a dead server; doctor names the row and --repair sets it aside",
  ignore: testingOnPostgres(),
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { home, dbFile, cleanup } = await tempHome();
    try {
      await onServer(home, async (client) => {
        await seed(client);
      });
      const [session] = await sqlOn(dbFile, "SELECT session_id FROM sessions");
      const sid = String(session!.session_id);
      await sqlOn(
        dbFile,
        "UPDATE sessions SET title = CAST(x'41ff42' AS TEXT)",
        `UPDATE events SET payload = CAST(CAST(payload AS BLOB) || x'c3' AS TEXT)
          WHERE kind = 'output_recorded'`,
      );
      await onServer(home, async (client) => {
        for (let i = 0; i < 2; i++) {
          const refused = err(await client.call("resume_session", {}));
          assert.equal(refused.code, "STORAGE_CORRUPTION_DETECTED", refused.message);
          assert.match(refused.message, /not valid UTF-8 \(column \w+ of a row.*waymark doctor/);
        }
        // the same process answers the next call
        ok(await client.call("list_workflows", {}));
      });
      const found = await doctor(home);
      assert.equal(found.code, 1);
      const text = found.report.findings.find((f: Json) => f.check === "text_encoding");
      assert.match(text.message, /2 stored text value\(s\) are not valid UTF-8/);
      assert.match(text.message, new RegExp(`sessions\\.title of row \\d+ \\(ses_${sid}\\)`));
      assert.match(text.message, new RegExp(`events\\.payload of row \\d+ \\(ses_${sid}\\)`));

      const repaired = await doctor(home, "--repair");
      assert.match(repaired.report.repaired.join(), /set aside 2 text value\(s\)/);
      // the log row kept its damage (in quarantine): its session is marked, nothing rebuilt over it
      assert.equal(repaired.code, 1);
      assert.deepEqual(problems(repaired.report), ["event_log"]);
      const kept = await sqlOn(
        dbFile,
        "SELECT table_name, column_name, original_hex FROM quarantine ORDER BY table_name",
      );
      assert.deepEqual(kept.map((r) => `${r.table_name}.${r.column_name}`), [
        "events.payload",
        "sessions.title",
      ]);
      assert.equal(kept[1]!.original_hex, "41FF42");
      assert.match(String(kept[0]!.original_hex), /C3$/);
      await onServer(home, async (client) => {
        // readable again; its projections are kept as they are (its log is damaged) and marked
        const back = ok(await client.call("resume_session", {}));
        assert.equal(back.candidates[0].title, "A\uFFFDB", JSON.stringify(back));
        assert.equal(back.candidates[0].corrupt, true);
      });
    } finally {
      await cleanup();
    }
  },
});

Deno.test({
  name:
    "a blob where text belongs reads as its text when that is UTF-8, and a blob or a large value that is not is STORAGE_CORRUPTION_DETECTED naming its column",
  ignore: testingOnPostgres(),
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { home, dbFile, cleanup } = await tempHome();
    try {
      await onServer(home, async (client) => {
        await seed(client);
      });
      // JSON holds no bytes: these rows take the guard's value-by-value path
      await sqlOn(dbFile, "UPDATE sessions SET title = CAST('Wombat ✓' AS BLOB)");
      await onServer(home, async (client) => {
        const read = ok(await client.call("resume_session", {}));
        assert.equal(read.candidates[0].title, "Wombat ✓", JSON.stringify(read));
      });
      // a blob that is not UTF-8, and a row too large to read as JSON with a bad byte at its end
      for (
        const bad of [
          "x'41ff42'",
          "CAST(CAST(printf('%.9000c', 'a') AS BLOB) || x'ff' AS TEXT)",
        ]
      ) {
        await sqlOn(dbFile, `UPDATE sessions SET title = ${bad}`);
        await onServer(home, async (client) => {
          const refused = err(await client.call("resume_session", {}));
          assert.equal(refused.code, "STORAGE_CORRUPTION_DETECTED", refused.message);
          assert.match(refused.message, /not valid UTF-8 \(column title of a row/);
          ok(await client.call("list_workflows", {}));
        });
      }
    } finally {
      await cleanup();
    }
  },
});
