/**
 * Corrupt rows: a recorded response that no longer matches its digest, or a node whose stored
 * JSON is broken, must surface as `STORAGE_CORRUPTION_DETECTED` (never a crash or an
 * `INTERNAL_ERROR`), mark the session corrupt so execution tools refuse it, leave other
 * sessions working, and change nothing else: errors are data, and damage stays where it is.
 * @module
 */
import assert from "node:assert/strict";
import { openWaymark, type Result, type StepResponse, type Waymark } from "../../mod.ts";
import { withTestDb } from "../helpers/db.ts";
import { connect, dbUrlOf, tempHome } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

const CORRUPTION = "STORAGE_CORRUPTION_DETECTED";
const TABLES = [
  "events",
  "sessions",
  "runs",
  "workflow_snapshots",
  "nodes",
  "contexts",
  "edges",
  "attempts",
  "outputs",
];

function open(home: string): Promise<Waymark> {
  return openWaymark({ home, dbUrl: dbUrlOf(home), workspace: home });
}

function value(result: Result<StepResponse>, what: string): StepResponse {
  if (!result.ok) throw new Error(`${what} failed: ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** Asserts a structured corruption error that tells the agent how to recover. */
function assertCorruption(result: Result<StepResponse>, what: string): void {
  assert.equal(result.ok, false, `${what}: expected ${CORRUPTION}, got a success`);
  if (result.ok) return;
  assert.equal(
    result.error.code,
    CORRUPTION,
    `${what}: ${result.error.code}: ${result.error.message}`,
  );
  assert.match(
    result.error.message,
    /start a new run|recover|restore|import/i,
    `${what}: message gives no way out`,
  );
  assert.doesNotMatch(result.error.message, /\n\s+at /, `${what}: a stack trace leaked`);
  assert.equal(
    result.error.retry.kind,
    "not_retryable",
    `${what}: a corrupt row is not fixed by retrying`,
  );
}

/** Advances `steps` times from a response, each with notes. */
async function advance(wm: Waymark, from: StepResponse, steps: number): Promise<StepResponse[]> {
  const out: StepResponse[] = [];
  let at = from;
  for (let i = 0; i < steps; i++) {
    at = value(
      await wm.continue({
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        output: { notesMarkdown: `done ${at.pending?.stepId}` },
      }),
      `advance ${i}`,
    );
    out.push(at);
  }
  return out;
}

/** Every row of every table, in a stable order. */
function dump(dbUrl: string): Promise<Record<string, unknown[]>> {
  return withTestDb(dbUrl, async (db) => {
    const out: Record<string, unknown[]> = {};
    for (const table of TABLES) {
      out[table] = (await db.rows(`SELECT * FROM ${table}`)).map((row) => JSON.stringify(row))
        .sort();
    }
    return out;
  });
}

/** Runs one statement with a fresh connection; returns the rows changed. */
function exec(dbUrl: string, sql: string, args: (string | number)[] = []): Promise<number> {
  return withTestDb(dbUrl, (db) => db.run(sql, args));
}

function query(
  dbUrl: string,
  sql: string,
  args: (string | number)[] = [],
): Promise<Record<string, unknown>[]> {
  return withTestDb(dbUrl, (db) => db.rows(sql, args));
}

const hex = (label: string) => label.replace(/^[a-z]+_/, "");

Deno.test("a recorded response that fails its digest is refused, marks only its session corrupt and changes nothing else", async () => {
  const { home, dbUrl, cleanup } = await tempHome();
  let wm: Waymark | null = null;
  try {
    wm = await open(home);
    const s1 = value(await wm.start({ workflowId: "waymark.bug_investigation" }), "start s1");
    const [a1, a2, a3] = await advance(wm, s1, 3);
    const s2 = value(await wm.start({ workflowId: "waymark.code_review" }), "start s2");
    const [b1] = await advance(wm, s2, 1);
    // Rehydrating a non-tip node hands out a fresh ack to fork with (and writes nothing).
    const forkable = value(await wm.continue({ stateToken: a2.stateToken }), "rehydrate a2");
    assert.ok(forkable.ackToken && forkable.ackToken !== a2.ackToken);
    await wm.close();
    wm = null;

    // Corrupt the recorded answer of the ack that turned a1 into a2.
    const changed = await exec(
      dbUrl,
      `UPDATE attempts SET response = replace(response, '"kind":"ok"', '"kind":"ko"')
       WHERE run_id = ? AND node_id = ? AND attempt_kind = 'ack'`,
      [hex(placeOf(a1).runId), placeOf(a1).nodeId],
    );
    assert.equal(changed, 1, "the corrupting UPDATE hit no row");
    const before = await dump(dbUrl);
    const health = () =>
      query(dbUrl, "SELECT session_id, health FROM sessions ORDER BY session_id");
    assert.deepEqual((await health()).map((r) => r.health), ["healthy", "healthy"]);

    wm = await open(home);
    // Replaying that ack: detected, not replayed, not recomputed.
    const replay = await wm.continue({
      stateToken: a1.stateToken,
      ackToken: a1.ackToken,
      output: { notesMarkdown: `done ${a1.pending?.stepId}` },
    });
    assertCorruption(replay, "replay of the corrupt attempt");
    if (!replay.ok) assert.equal(replay.error.details?.sessionId, s1.session!.sessionId);

    // The session is now marked corrupt, the other one is not.
    const marked = await health();
    assert.deepEqual(
      Object.fromEntries(marked.map((r) => [`ses_${r.session_id}`, r.health])),
      { [s1.session!.sessionId]: "corrupt", [s2.session!.sessionId]: "healthy" },
    );

    // Execution in the corrupt session is refused with the same code.
    assertCorruption(
      await wm.continue({
        stateToken: a3.stateToken,
        ackToken: a3.ackToken,
        output: { notesMarkdown: "more" },
      }),
      "advance from the tip of the corrupt session",
    );
    assertCorruption(
      await wm.continue({ stateToken: forkable.stateToken, ackToken: forkable.ackToken }),
      "fork from an older node of the corrupt session",
    );
    assertCorruption(
      await wm.continue({ stateToken: a3.stateToken }),
      "rehydrate in the corrupt session",
    );
    assertCorruption(
      await wm.checkpoint({
        stateToken: a3.stateToken,
        checkpointToken: a3.checkpointToken,
        output: { notesMarkdown: "a note" },
      }),
      "checkpoint in the corrupt session",
    );
    // A second try of the corrupt replay answers the same way (no crash, no half-repair).
    assertCorruption(
      await wm.continue({ stateToken: a1.stateToken, ackToken: a1.ackToken }),
      "second replay of the corrupt attempt",
    );
    await wm.close();
    wm = null;

    // Nothing else changed: the refused calls wrote nothing, only the health flag moved.
    const after = await dump(dbUrl);
    const expected = structuredClone(before);
    expected.sessions = expected.sessions.map((row) => {
      const r = JSON.parse(row as string);
      return `ses_${r.session_id}` === s1.session!.sessionId
        ? JSON.stringify({ ...r, health: "corrupt" })
        : row;
    }).sort();
    assert.deepEqual(after, expected);

    // The other session still works, and a new run (the recovery the message suggests) too.
    wm = await open(home);
    const [b2] = await advance(wm, b1, 1);
    assert.equal(b2.kind, "ok");
    assert.equal(placeOf(b2).runId, placeOf(s2).runId);
    const again = value(
      await wm.continue({
        stateToken: b1.stateToken,
        ackToken: b1.ackToken,
        output: { notesMarkdown: `done ${b1.pending?.stepId}` },
      }),
      "replay in healthy session",
    );
    assert.equal(JSON.stringify(again), JSON.stringify(b2));
    const fresh = value(await wm.start({ workflowId: "waymark.bug_investigation" }), "new run");
    await advance(wm, fresh, 1);
  } finally {
    await wm?.close();
    await cleanup();
  }
});

Deno.test("a replay of an intact attempt in a session marked corrupt is refused too", async () => {
  // execution tools refuse a corrupt session; continue_workflow is one, replay or not.
  const { home, dbUrl, cleanup } = await tempHome();
  let wm: Waymark | null = null;
  try {
    wm = await open(home);
    const s1 = value(await wm.start({ workflowId: "waymark.bug_investigation" }), "start");
    const [a1] = await advance(wm, s1, 2);
    await wm.close();
    wm = null;
    assert.equal(
      await exec(dbUrl, "UPDATE attempts SET response = response || ' ' WHERE node_id = ?", [
        placeOf(a1).nodeId,
      ]),
      1,
    );
    wm = await open(home);
    assertCorruption(
      await wm.continue({ stateToken: a1.stateToken, ackToken: a1.ackToken }),
      "corrupt replay",
    );
    // The first ack (s1 → a1) is intact, but its session is corrupt now.
    assertCorruption(
      await wm.continue({
        stateToken: s1.stateToken,
        ackToken: s1.ackToken,
        output: { notesMarkdown: `done ${s1.pending?.stepId}` },
      }),
      "replay of an intact attempt in a corrupt session",
    );
  } finally {
    await wm?.close();
    await cleanup();
  }
});

Deno.test("a node whose stored JSON (context, state, preferences) is broken answers STORAGE_CORRUPTION_DETECTED, not a crash", async () => {
  const { home, dbUrl, cleanup } = await tempHome();
  let wm: Waymark | null = null;
  try {
    wm = await open(home);
    const cases: [column: "context" | "state" | "preferences", value: string][] = [
      ["context", "{not json"],
      ["context", "[1,2,3]"],
      ["context", "null"],
      ["context", "42"],
      ["state", "{"],
      ["preferences", '{"autonomy":"bogus"}'],
    ];
    const runs: { tip: StepResponse; parent: StepResponse }[] = [];
    for (const _ of cases) {
      const started = value(await wm.start({ workflowId: "waymark.bug_investigation" }), "start");
      const [a1, a2] = await advance(wm, started, 2);
      runs.push({ parent: a1, tip: a2 });
    }
    const healthy = value(await wm.start({ workflowId: "waymark.code_review" }), "start healthy");
    await wm.close();
    wm = null;

    for (const [i, [column, broken]] of cases.entries()) {
      const { tip } = runs[i];
      const runId = hex(placeOf(tip).runId);
      const nodeId = placeOf(tip).nodeId;
      // A node's context is stored once per change, in `contexts`; the node points at it.
      const changed = column === "context"
        ? await exec(
          dbUrl,
          `UPDATE contexts SET context = ? WHERE run_id = ? AND context_id =
            (SELECT context_id FROM nodes WHERE run_id = ? AND node_id = ?)`,
          [broken, runId, runId, nodeId],
        )
        : await exec(dbUrl, `UPDATE nodes SET ${column} = ? WHERE run_id = ? AND node_id = ?`, [
          broken,
          runId,
          nodeId,
        ]);
      assert.equal(changed, 1);
    }
    const before = await dump(dbUrl);

    wm = await open(home);
    for (const [i, [column, broken]] of cases.entries()) {
      const { tip, parent } = runs[i];
      const what = `${column} ${JSON.stringify(broken)}`;
      assertCorruption(await wm.continue({ stateToken: tip.stateToken }), `${what}: rehydrate`);
      assertCorruption(
        await wm.continue({
          stateToken: tip.stateToken,
          ackToken: tip.ackToken,
          output: { notesMarkdown: "x" },
        }),
        `${what}: advance`,
      );
      assertCorruption(
        await wm.checkpoint({
          stateToken: tip.stateToken,
          checkpointToken: tip.checkpointToken,
          output: { notesMarkdown: "x" },
        }),
        `${what}: checkpoint`,
      );
      // The parent is intact, but rehydrating it reads its (corrupt) child.
      assertCorruption(
        await wm.continue({ stateToken: parent.stateToken }),
        `${what}: rehydrate the parent`,
      );
    }
    // Another session is unaffected.
    const [h1] = await advance(wm, healthy, 1);
    assert.equal(h1.kind, "ok");
    await wm.close();
    wm = null;

    // The refused calls wrote nothing (only the healthy session moved on).
    const after = await dump(dbUrl);
    const healthySession = hex(healthy.session!.sessionId);
    const others = (d: Record<string, unknown[]>) =>
      Object.fromEntries(
        Object.entries(d).map(([t, rows]) => [
          t,
          rows.filter((r) =>
            !(r as string).includes(healthySession) &&
            !(r as string).includes(hex(placeOf(healthy).runId))
          ),
        ]),
      );
    assert.deepEqual(others(after), others(before));
  } finally {
    await wm?.close();
    await cleanup();
  }
});

Deno.test("over MCP stdio, a corrupt replay is an isError result with STORAGE_CORRUPTION_DETECTED", async () => {
  const { home, dbUrl, cleanup } = await tempHome();
  let wm: Waymark | null = null;
  try {
    wm = await open(home);
    const s1 = value(await wm.start({ workflowId: "waymark.bug_investigation" }), "start");
    const [a1, a2] = await advance(wm, s1, 2);
    await wm.close();
    wm = null;
    assert.equal(
      await exec(
        dbUrl,
        "UPDATE attempts SET response = replace(response, 'ack1', 'ack2') WHERE node_id = ?",
        [
          placeOf(a1).nodeId,
        ],
      ),
      1,
    );
    const client = await connect(home, { process: true });
    try {
      const replay = await client.call("continue_workflow", {
        stateToken: a1.stateToken,
        ackToken: a1.ackToken,
        output: { notesMarkdown: `done ${a1.pending?.stepId}` },
      });
      assert.equal(
        replay.isError,
        true,
        `expected an error, got ${replay.content[0]?.text?.slice(0, 200)}`,
      );
      const error = (replay.structuredContent as {
        error: { code: string; message: string; retry: { kind: string } };
      })
        .error;
      assert.equal(error.code, CORRUPTION);
      assert.match(error.message, /start a new run|recover|restore|import/i);
      assert.match(replay.content[0].text, new RegExp(CORRUPTION));
      assert.doesNotMatch(replay.content[0].text, /\n\s+at /);
      const next = await client.call("continue_workflow", {
        stateToken: a2.stateToken,
        ackToken: a2.ackToken,
      });
      assert.equal(next.isError, true);
      assert.equal((next.structuredContent as { error: { code: string } }).error.code, CORRUPTION);
      // Read-only tools still work.
      const list = await client.call("list_workflows", {});
      assert.notEqual(list.isError, true);
    } finally {
      await client.close();
    }
  } finally {
    await wm?.close();
    await cleanup();
  }
});
