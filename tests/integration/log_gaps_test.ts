/**
 * Doctor and the evidence it must keep, on either store (`WAYMARK_TEST_DB=postgres` runs this on
 * a PostgreSQL server): a row deleted from the middle or the end of a session's log is a hole
 * doctor names, and `--repair` never rebuilds over it (the projections that still hold the
 * deleted node are kept; the session is marked corrupt for a person to decide); a session that
 * cannot be rebuilt is its own verdict, and every other session is still checked and repaired.
 * @module
 */
import assert from "node:assert/strict";
import { openWaymark, type StepResponse, type Waymark } from "../../mod.ts";
import { runCli, sqlOn } from "../helpers/maintenance.ts";
import { dbUrlOf, tempHome } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

function open(home: string): Promise<Waymark> {
  return openWaymark({ home, dbUrl: dbUrlOf(home), workspace: home });
}

async function doctor(home: string, ...args: string[]): Promise<{ code: number; report: Json }> {
  const ran = await runCli(["doctor", "--json", ...args], { home });
  return { code: ran.code, report: JSON.parse(ran.out) as Json };
}

const findingOf = (report: Json, check: string): Json =>
  report.findings.find((f: Json) => f.check === check);

/** A run advanced `steps` times; its session id, run id and the responses in order. */
async function walked(home: string, goal: string, steps: number) {
  const wm = await open(home);
  try {
    const started = await wm.start({ workflowId: "waymark.bug_investigation", goal });
    assert.ok(started.ok);
    const at: StepResponse[] = [started.value];
    for (let i = 0; i < steps; i++) {
      const last = at.at(-1)!;
      const next = await wm.continue({
        stateToken: last.stateToken,
        ackToken: last.ackToken!,
        output: { notesMarkdown: `${goal}: step ${i}` },
      });
      assert.ok(next.ok, JSON.stringify(next));
      at.push(next.value);
    }
    const { sessionId, runId } = at[0]!.session!;
    const bare = (label: string) => label.replace(/^[a-z]+_/, "");
    return { sessionId: bare(sessionId), runId: bare(runId), at };
  } finally {
    await wm.close();
  }
}

Deno.test("a node_created row deleted mid-run is a gap doctor names; --repair keeps the projections and says a person decides", async () => {
  const { home, cleanup } = await tempHome();
  const db = dbUrlOf(home);
  try {
    const run = await walked(home, "gap in the middle", 3);
    const other = await walked(home, "an intact neighbour", 1);
    assert.equal((await doctor(home)).code, 0);
    const middle = placeOf(run.at[1]!).nodeId.replace(/^[a-z]+_/, "");
    const nodes = `SELECT count(*) AS n FROM nodes WHERE run_id = '${run.runId}'`;
    const before = Number((await sqlOn(db, nodes))[0]!.n);
    await sqlOn(
      db,
      `DELETE FROM events WHERE kind = 'node_created' AND session_id = '${run.sessionId}'
        AND payload LIKE '%"nodeId":"${middle}"%'`,
    );
    const found = await doctor(home);
    assert.equal(found.code, 1);
    const log = findingOf(found.report, "event_log");
    assert.equal(log.ok, false, JSON.stringify(found.report.findings));
    assert.match(
      log.message,
      new RegExp(`ses_${run.sessionId} \\(1 event\\(s\\) missing from the log`),
    );
    assert.match(log.fix, /never rebuilt from.*A person decides/s);
    assert.equal(findingOf(found.report, "projections").ok, true, "the neighbour is checked");

    const repaired = await doctor(home, "--repair");
    assert.equal(repaired.code, 1, "a log with a hole is not healthy after --repair");
    assert.ok(!repaired.report.repaired.some((r: string) => r.includes(run.sessionId)));
    assert.equal(findingOf(repaired.report, "event_log").ok, false);
    assert.equal(Number((await sqlOn(db, nodes))[0]!.n), before, "the deleted node's row is kept");
    const kept = await sqlOn(db, `SELECT node_id FROM nodes WHERE node_id = '${middle}'`);
    assert.equal(kept.length, 1);

    // the neighbour carries on; the damaged session is read-only until a person decides
    const wm = await open(home);
    try {
      const tip = other.at.at(-1)!;
      const next = await wm.continue({ stateToken: tip.stateToken, ackToken: tip.ackToken! });
      assert.ok(next.ok, JSON.stringify(next));
      const refused = await wm.continue({ stateToken: run.at.at(-1)!.stateToken });
      assert.ok(!refused.ok && refused.error.code === "STORAGE_CORRUPTION_DETECTED");
    } finally {
      await wm.close();
    }
  } finally {
    await cleanup();
  }
});

Deno.test("the last rows of a log deleted: doctor sees the log stop short of what the session counted", async () => {
  const { home, cleanup } = await tempHome();
  const db = dbUrlOf(home);
  try {
    const run = await walked(home, "gap at the end", 2);
    await sqlOn(
      db,
      `DELETE FROM events WHERE seq = (SELECT max(seq) FROM events WHERE session_id = '${run.sessionId}')`,
    );
    const found = await doctor(home, "--repair");
    assert.equal(found.code, 1);
    assert.match(
      findingOf(found.report, "event_log").message,
      /1 event\(s\) missing from the end of the log \(it stops at position \d+ of \d+\)/,
    );
  } finally {
    await cleanup();
  }
});

Deno.test("one session that cannot be rebuilt is its own verdict: every other session is still checked and repaired", async () => {
  const { home, cleanup } = await tempHome();
  const db = dbUrlOf(home);
  try {
    const stuck = await walked(home, "cannot be rebuilt", 1);
    const damaged = await walked(home, "projection damaged", 2);
    // a second copy of a run's start, with a good digest and the next place in the log: the
    // run is served as before, but projecting the log again meets a run that already exists
    const positions = await sqlOn(
      db,
      "SELECT count(*) AS n FROM waymark_migrations WHERE name = '0010_log_positions'",
    );
    const place = Number(positions[0]!.n) > 0
      ? [
        ", position",
        `, (SELECT max(position) + 1 FROM events WHERE session_id = '${stuck.sessionId}')`,
      ]
      : ["", ""];
    await sqlOn(
      db,
      `INSERT INTO events (session_id, run_id, kind, payload, digest, at${place[0]})
        SELECT session_id, run_id, kind, payload, digest, at${place[1]} FROM events
        WHERE session_id = '${stuck.sessionId}' AND kind = 'run_started'`,
      `DELETE FROM outputs WHERE run_id = '${damaged.runId}'`,
    );
    const found = await doctor(home);
    assert.equal(found.code, 1);
    const rows = findingOf(found.report, "projections");
    assert.match(
      rows.message,
      new RegExp(`1 session\\(s\\) disagree with their logs: ses_${damaged.sessionId}`),
    );
    assert.match(
      rows.message,
      new RegExp(`1 session\\(s\\) cannot be rebuilt from their logs: ses_${stuck.sessionId}`),
    );
    assert.deepEqual(rows.details.unrebuildable.map((u: Json) => u.sessionId), [
      `ses_${stuck.sessionId}`,
    ]);

    const repaired = await doctor(home, "--repair");
    assert.ok(
      repaired.report.repaired.includes(`rebuilt ses_${damaged.sessionId} from its log`),
      JSON.stringify(repaired.report),
    );
    const outputs = await sqlOn(
      db,
      `SELECT count(*) AS n FROM outputs WHERE run_id = '${damaged.runId}'`,
    );
    assert.equal(Number(outputs[0]!.n), 2, "the damaged session's outputs are back");
    const left = findingOf(repaired.report, "projections");
    assert.doesNotMatch(left.message, /disagree/);
    assert.match(left.message, /cannot be rebuilt/);
    assert.equal(repaired.code, 1);
  } finally {
    await cleanup();
  }
});
