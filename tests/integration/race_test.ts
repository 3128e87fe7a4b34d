/**
 * Four server processes on one database race the same `(stateToken, ackToken)`: exactly one
 * advance is recorded and every client gets a byte-identical answer. The processes coordinate
 * through SQLite transactions alone (on PostgreSQL through `SERIALIZABLE` transactions,
 * `tests/postgres/processes_pg_test.ts`).
 * @module
 */
import assert from "node:assert/strict";
import { openTestDb } from "../helpers/db.ts";
import { testingOnPostgres } from "../helpers/postgres.ts";
import type { StepResponse } from "../../mod.ts";
import {
  type CallResult,
  connect,
  ok,
  ROOT,
  serverArgs,
  tempHome,
  type TestClient,
} from "../helpers/server.ts";
import { writeProjectWorkflow } from "../helpers/workflows.ts";
import { placeOf } from "../helpers/answers.ts";
import { serveAsProcesses } from "../helpers/in_process.ts";

/** The servers here are processes: that is what these tests are about. */
serveAsProcesses();

const WORKFLOW_ID = "project.race_long";
const STEPS = 30;
const ROUNDS = 20;
const RACERS = 4;

/** Strips the `run_`/`ses_` label prefixes the agent-facing ids carry. */
function hex(label: string): string {
  return label.replace(/^[a-z]+_/, "");
}

function same(a: CallResult, b: CallResult, what: string): void {
  assert.equal(
    a.isError ?? false,
    false,
    `${what}: first client got an error: ${a.content[0]?.text}`,
  );
  assert.equal(
    b.isError ?? false,
    false,
    `${what}: second client got an error: ${b.content[0]?.text}`,
  );
  assert.equal(
    JSON.stringify(a.structuredContent),
    JSON.stringify(b.structuredContent),
    `${what}: the two processes answered differently`,
  );
  assert.deepEqual(a.content, b.content, `${what}: text content differs`);
}

Deno.test("four processes racing the same ack record exactly one advance and answer identically", async () => {
  const { home, dbUrl, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "waymark-race-ws-" });
  const clients: TestClient[] = [];
  const db = await openTestDb(dbUrl);
  try {
    await writeProjectWorkflow(workspace, { id: WORKFLOW_ID, steps: STEPS });
    const options = { extraArgs: ["--workspace", workspace] };
    // One after the other: starting together on a fresh database is its own test below.
    for (let i = 0; i < RACERS; i++) clients.push(await connect(home, options));
    const [a, b] = clients as [TestClient, TestClient];

    const started = ok(await a.call("start_workflow", { workflowId: WORKFLOW_ID }));
    assert.equal(started.pending.stepId, "s01");
    const runId = hex(placeOf(started).runId);
    let stateToken: string = started.stateToken;
    let expectedStep = 1;

    for (let round = 0; round < ROUNDS; round++) {
      // A fresh ack for the current tip, from alternating processes; rehydrate writes nothing.
      const eventsBefore = await db.number("SELECT count(*) AS n FROM events");
      const fresh = ok(await (round % 2 === 0 ? a : b).call("continue_workflow", { stateToken }));
      const eventsAfter = await db.number("SELECT count(*) AS n FROM events");
      assert.equal(eventsAfter, eventsBefore, `round ${round}: rehydrate wrote events`);
      assert.equal(fresh.pending.stepId, `s${String(expectedStep).padStart(2, "0")}`);
      const nodeId: string = placeOf(fresh).nodeId;
      const args = {
        stateToken: fresh.stateToken,
        ackToken: fresh.ackToken,
        context: { round },
        output: { notesMarkdown: `round ${round} done` },
      };
      // Rotate who sends first so no process always wins.
      const order = clients.map((_, i) => clients[(i + round) % clients.length]!);
      const [r1, ...rest] = await Promise.all(order.map((c) => c.call("continue_workflow", args)));
      for (const [i, r] of rest.entries()) same(r1!, r, `round ${round}, racer ${i + 2}`);
      const advanced = r1!.structuredContent as unknown as StepResponse;
      assert.equal(advanced.forked, undefined, `round ${round}: the race produced a fork`);
      expectedStep++;
      assert.equal(advanced.pending?.stepId, `s${String(expectedStep).padStart(2, "0")}`);

      // Exactly one attempt and exactly one child for the raced ack.
      const attempts = await db.rows(
        "SELECT result_node_id, response FROM attempts WHERE run_id = ? AND node_id = ? AND attempt_kind = 'ack'",
        [runId, nodeId],
      );
      assert.equal(
        attempts.length,
        1,
        `round ${round}: ${attempts.length} attempts rows for one ack`,
      );
      const children = await db.rows(
        "SELECT node_id FROM nodes WHERE run_id = ? AND parent_id = ?",
        [
          runId,
          nodeId,
        ],
      );
      assert.equal(children.length, 1, `round ${round}: ${children.length} children for one ack`);
      assert.equal(attempts[0]!.result_node_id, children[0]!.node_id);
      assert.equal(placeOf(advanced).nodeId, children[0]!.node_id);
      // The stored response is the one every client received.
      assert.equal(attempts[0]!.response, JSON.stringify(advanced));

      // A third, late replay of the same pair still answers byte-identically.
      if (round % 5 === 4) {
        same(r1!, await order[1]!.call("continue_workflow", args), `round ${round} late replay`);
      }

      stateToken = advanced.stateToken;
    }

    // The whole run: a straight line, one ack per node, and a log that matches the projections.
    const count = (sql: string) => db.number(sql, [runId]);
    assert.equal(await count("SELECT count(*) AS n FROM nodes WHERE run_id = ?"), ROUNDS + 1);
    assert.equal(await count("SELECT count(*) AS n FROM edges WHERE run_id = ?"), ROUNDS);
    assert.equal(await count("SELECT count(*) AS n FROM attempts WHERE run_id = ?"), ROUNDS);
    assert.equal(await count("SELECT count(*) AS n FROM outputs WHERE run_id = ?"), ROUNDS);
    assert.equal(
      await count(
        "SELECT count(*) AS n FROM events WHERE run_id = ? AND kind = 'advance_recorded'",
      ),
      ROUNDS,
    );
    assert.equal(
      await count("SELECT count(*) AS n FROM events WHERE run_id = ? AND kind = 'node_created'"),
      ROUNDS + 1,
    );
    assert.equal(
      await count(
        "SELECT count(*) AS n FROM (SELECT parent_id FROM nodes WHERE run_id = ? GROUP BY parent_id HAVING count(*) > 1) AS forks",
      ),
      0,
      "some node has more than one child",
    );
    const session = await db.rows(
      "SELECT s.event_count, (SELECT count(*) FROM events e WHERE e.session_id = s.session_id) AS n FROM sessions s",
    );
    assert.equal(session.length, 1);
    assert.equal(Number(session[0]!.event_count), Number(session[0]!.n));
  } finally {
    await db.close();
    await Promise.all(clients.map((c) => c.close()));
    await cleanup();
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});

/**
 * Spawns a server, sends the handshake and a call (serve answers `initialize` from its early
 * server and opens, so creates, the database only when a call needs it), closes stdin, and
 * returns how it went.
 */
async function firstCallOnce(
  home: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: serverArgs(home),
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  const messages = [
    {
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "race", version: "1.0.0" },
      },
    },
    { method: "notifications/initialized" },
    { id: 2, method: "tools/call", params: { name: "list_workflows", arguments: {} } },
  ];
  const lines = messages.map((m) => `${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`).join("");
  await writer.write(new TextEncoder().encode(lines)).catch(() => {});
  await writer.close().catch(() => {});
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("server processes started together on a fresh database all come up", async () => {
  // One chat window per process: opening several at once on a new WAYMARK_HOME must not make
  // any of them fail while creating the schema. Each process makes a call, so each opens the
  // database (an `initialize` alone is answered before serve opens it: the fifteen tries of
  // that this test used to make never created a schema at once). Four processes spawned
  // together boot in step and create the schema together; whether two overlap in that moment
  // still depends on scheduling, so this tries a few fresh homes (stopping at the first failure).
  const PROCESSES = 4;
  // PostgreSQL serialises them on an advisory lock, not on file creation: fewer tries show it
  const ATTEMPTS = testingOnPostgres() ? 2 : 3;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const { home, cleanup } = await tempHome({ blank: true });
    try {
      const results = await Promise.all(
        Array.from({ length: PROCESSES }, () => firstCallOnce(home)),
      );
      for (const [i, r] of results.entries()) {
        const answered = (id: number) =>
          r.stdout.split("\n").some((line) =>
            line.includes(`"id":${id}`) && line.includes('"result"') &&
            !line.includes('"isError":true')
          );
        assert.ok(
          r.code === 0 && answered(1) && answered(2),
          `attempt ${attempt}, process ${i}: exit ${r.code}, answered initialize: ${
            answered(1)
          }, the call: ${answered(2)}; stderr: ${r.stderr.trim()}`,
        );
      }
      // And the database they created together works.
      if (attempt !== ATTEMPTS - 1) continue;
      const client = await connect(home);
      try {
        ok(await client.call("start_workflow", { workflowId: "waymark.code_review" }));
      } finally {
        await client.close();
      }
    } finally {
      await cleanup();
    }
  }
});
