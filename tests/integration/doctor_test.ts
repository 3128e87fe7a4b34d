/**
 * `waymark doctor` and `waymark backup` on real libSQL files: a healthy store exits 0; each
 * kind of damage doctor claims to find is found (exit 1) with a fix, and `--repair` rebuilds
 * projections, search rows and snapshots from the log so that every read answers exactly as
 * before the damage; a log that fails its digests is marked corrupt and left alone; a new home
 * is reported as not used yet (exit 0); it cannot run on a missing database file named to it or
 * one from a newer waymark (exit 2). A backup taken while a
 * server writes passes doctor, and so does a home restored from it.
 * @module
 */
import assert from "node:assert/strict";
import { copyFile } from "node:fs/promises";
import { openWaymark, resumeSession, type Waymark } from "../../mod.ts";
import { createViewerApp } from "../../web/mod.ts";
import { runDoctor } from "../../store/maintenance/doctor.ts";
import { createWorkflowSource, MIGRATIONS, openStore } from "../../store/mod.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { runCli, sqlOn, withoutTokens } from "../helpers/maintenance.ts";
import { connect, ok, tempHome } from "../helpers/server.ts";
import { type ForkedReview, inProcess, seedForkedReview } from "../helpers/viewer_fixture.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

function open(home: string): Promise<Waymark> {
  return openWaymark({ home, dbUrl: `file:${home}/waymark.db`, workspace: home });
}

async function doctor(home: string, ...args: string[]): Promise<{ code: number; report: Json }> {
  const ran = await runCli(["doctor", "--json", ...args], { home });
  return { code: ran.code, report: JSON.parse(ran.out) as Json };
}

function problems(report: Json): string[] {
  return report.findings.filter((f: Json) => !f.ok).map((f: Json) => f.check);
}

/** Everything the read paths answer about the store, fresh tokens left out. */
async function answers(home: string, review: ForkedReview & { replay: Replay }): Promise<Json> {
  const wm = await open(home);
  const viewer = createViewerApp({ db: wm.store.db, allowedHosts: () => ["127.0.0.1:1"] });
  const api = async (path: string) =>
    await (await viewer.app.request(path, { headers: { host: "127.0.0.1:1" } })).json();
  const sid = `ses_${review.sessionId}`;
  const run = `/api/sessions/${sid}/runs/run_${review.runId}`;
  try {
    const out: Json = {};
    for (const query of [undefined, "retry logic", "4xx stops", "Flaky upload"]) {
      out[`resume ${query}`] = await resumeSession(wm.deps, query ? { query } : {});
    }
    for (const tip of [review.oldTip, review.newTip]) {
      out[`rehydrate ${placeOf(tip).nodeId}`] = await wm.continue({ stateToken: tip.stateToken });
    }
    out.sessions = await wm.store.listSessions({ limit: 10, offset: 0 });
    out.session = await wm.store.getSession(review.sessionId);
    for (const path of ["/api/sessions", `/api/sessions/${sid}`, `/api/sessions/${sid}/timeline`]) {
      out[path] = await api(path);
    }
    out.graph = await api(`${run}/graph`);
    out.node = await api(`${run}/nodes/${review.notedNodeId}`);
    const replayed = await wm.continue(review.replay);
    return { ...withoutTokens(out) as Json, replayed };
  } finally {
    viewer.close();
    await wm.close();
  }
}

/** A code review with a fork and a bug investigation, written in-process. */
async function seeded(home: string): Promise<ForkedReview & { replay: Replay }> {
  const wm = await open(home);
  try {
    const review = await seedForkedReview(inProcess(wm));
    const bug = await wm.start({
      workflowId: "waymark.bug_investigation",
      goal: "Flaky upload test",
    });
    assert.ok(bug.ok);
    // one more ack whose recorded answer a replay must return byte for byte
    const at = await wm.continue({ stateToken: review.newTip.stateToken });
    assert.ok(at.ok);
    const replay = {
      stateToken: at.value.stateToken,
      ackToken: at.value.ackToken!,
      output: { notesMarkdown: "the answer a replay returns" },
    };
    assert.ok((await wm.continue(replay)).ok);
    return { ...review, replay };
  } finally {
    await wm.close();
  }
}

type Replay = { stateToken: string; ackToken: string; output: { notesMarkdown: string } };

Deno.test("damaged projections, search rows and snapshots are found, and --repair makes every read answer as before", async () => {
  const { home, dbFile, cleanup } = await tempHome();
  try {
    const review = await seeded(home);
    const healthy = await doctor(home);
    assert.equal(healthy.code, 0, JSON.stringify(healthy.report));
    assert.deepEqual(healthy.report.repaired, []);
    const before = await answers(home, review);
    const runs = `(SELECT run_id FROM runs WHERE session_id = '${review.sessionId}')`;
    await sqlOn(
      dbFile,
      `DELETE FROM outputs WHERE node_id = '${review.notedNodeId}'`,
      `UPDATE nodes SET pending_step_id = 'nowhere' WHERE node_id = '${review.forkNodeId}'`,
      `DELETE FROM edges WHERE to_id = '${review.checkpointNodeId}'`,
      `UPDATE runs SET last_node_id = NULL, status = 'complete' WHERE run_id IN ${runs}`,
      "DELETE FROM sessions WHERE title = 'Flaky upload test'",
      `UPDATE attempts SET response = replace(response, '"kind":"ok"', '"kind":"ko"')
        WHERE run_id IN ${runs} AND attempt_kind = 'ack'`,
      "INSERT INTO edges VALUES ('ffffffffffffffff', 'a', 'b', 'acked_step', 1)",
      "DELETE FROM search_tips",
      "UPDATE search_outputs SET text = 'nothing here' WHERE rowid = (SELECT min(rowid) FROM search_outputs)",
      "INSERT INTO search_outputs (rowid, text) VALUES (999999, 'an orphan')",
      `UPDATE workflow_snapshots SET compiled = replace(compiled, '"name":"Code Review"', '"name":"Code Reviewed"')`,
    );
    // replaying the damaged attempt marks the session corrupt, as execution does
    const marked = await open(home);
    try {
      const refused = await marked.continue(review.replay);
      assert.ok(!refused.ok && refused.error.code === "STORAGE_CORRUPTION_DETECTED");
    } finally {
      await marked.close();
    }
    const damaged = await doctor(home);
    assert.equal(damaged.code, 1);
    assert.deepEqual(
      problems(damaged.report),
      ["snapshots", "projections", "search_index"],
      JSON.stringify(damaged.report, null, 1),
    );
    const projections = damaged.report.findings.find((f: Json) => f.check === "projections");
    assert.match(
      projections.message,
      /2 session\(s\) disagree with their logs.*1 row\(s\) belong to no run/,
    );
    assert.match(projections.fix, /--repair/);

    const repaired = await doctor(home, "--repair");
    assert.equal(repaired.code, 0, JSON.stringify(repaired.report.findings));
    assert.ok(repaired.report.repaired.some((r: string) => /rebuilt ses_/.test(r)));
    assert.ok(repaired.report.repaired.some((r: string) => /restored pinned workflow/.test(r)));
    assert.deepEqual(
      await answers(home, review),
      before,
      "a read answers differently after --repair",
    );

    // and execution carries on from the repaired rows
    const wm = await open(home);
    try {
      const next = await wm.continue({
        stateToken: review.newTip.stateToken,
        ackToken: review.newTip.ackToken,
        output: { notesMarkdown: "after the repair" },
      });
      assert.ok(next.ok, JSON.stringify(next));
    } finally {
      await wm.close();
    }
  } finally {
    await cleanup();
  }
});

Deno.test("a log that fails its digests is marked corrupt, refused by execution, and never rebuilt from", async () => {
  const { home, dbFile, cleanup } = await tempHome();
  try {
    const review = await seeded(home);
    await sqlOn(
      dbFile,
      `UPDATE events SET payload = replace(payload, 'exponential', 'exponentiaL')
        WHERE session_id = '${review.sessionId}' AND kind = 'output_recorded'`,
    );
    const found = await doctor(home);
    assert.equal(found.code, 1);
    assert.deepEqual(problems(found.report), ["event_log"]);
    const finding = found.report.findings.find((f: Json) => f.check === "event_log");
    assert.match(
      finding.message,
      new RegExp(
        `marked corrupt: ses_${review.sessionId} \\(event \\d+ \\(output_recorded\\) fails its digest check\\)`,
      ),
    );
    const health = await sqlOn(
      dbFile,
      `SELECT health FROM sessions WHERE session_id = '${review.sessionId}'`,
    );
    assert.equal(health[0]!.health, "corrupt");
    const wm = await open(home);
    try {
      const refused = await wm.continue({ stateToken: review.newTip.stateToken });
      assert.ok(!refused.ok && refused.error.code === "STORAGE_CORRUPTION_DETECTED");
    } finally {
      await wm.close();
    }
    const repair = await doctor(home, "--repair");
    assert.equal(repair.code, 1, "a log that fails cannot be repaired from");
    assert.deepEqual(problems(repair.report), ["event_log"]);
    const exported = await runCli(["sessions", "export", `ses_${review.sessionId}`], { home });
    assert.equal(exported.code, 1);
    assert.match(exported.err, /fails its digest check/);
  } finally {
    await cleanup();
  }
});

Deno.test("keyring, workflow files, WAL, integrity, schema age: each found, with its fix", async () => {
  const { home, dbFile, cleanup } = await tempHome();
  try {
    await seeded(home);
    const keys = `${home}/keys.json`;
    const saved = await Deno.readTextFile(keys);
    const keyring = async () => {
      const found = await doctor(home);
      assert.deepEqual(problems(found.report), ["keyring"]);
      return found.report.findings.find((f: Json) => f.check === "keyring");
    };
    await Deno.chmod(keys, 0o644);
    const loose = await keyring();
    assert.match(loose.message, /mode 0644; it must be 0600/);
    assert.match(loose.fix, /chmod 600/);
    assert.doesNotMatch(loose.fix, /move it aside|backup/, "a mode's fix is the mode");
    await Deno.writeTextFile(keys, "{not json", { mode: 0o600 });
    const garbled = await keyring();
    assert.match(garbled.message, /keys\.json is not valid JSON/);
    assert.match(garbled.fix, /move it aside/);
    assert.doesNotMatch(garbled.fix, /chmod/, "a broken file's fix is not its mode");
    await Deno.writeTextFile(keys, '{"version": 1}', { mode: 0o600 });
    assert.match(
      (await keyring()).message,
      /keys\.json is not a waymark keyring \(version 1 with a current key; current:/,
    );
    await Deno.remove(keys);
    // a used home that lost its keyring: a problem, unlike a new home's
    const lost = await keyring();
    assert.match(lost.message, /keys\.json does not exist/);
    assert.match(lost.fix, /creates a new keyring.*restore the file from a backup/);
    assert.doesNotMatch(lost.fix, /chmod/);
    await Deno.writeTextFile(keys, saved, { mode: 0o600 });

    await Deno.mkdir(`${home}/workflows`);
    await Deno.writeTextFile(`${home}/workflows/broken.json`, '{"id": "user.broken", "steps": 3}');
    const broken = await doctor(home);
    assert.deepEqual(problems(broken.report), ["workflows"]);
    assert.match(JSON.stringify(broken.report), /broken\.json/);
    await Deno.remove(`${home}/workflows/broken.json`);

    // a WAL over the limit, with a writer holding it open
    const writer = await open(home);
    try {
      await writer.start({ workflowId: "waymark.code_review" });
      const target = {
        version: "test",
        buildKind: "source",
        dbUrl: `file:${dbFile}`,
        keysFile: keys,
        workflows: createWorkflowSource(BUNDLED_WORKFLOWS, []),
        open: () => openStore(`file:${dbFile}`, { migrate: false }),
      };
      const big = await runDoctor(target, { walLimitBytes: 1 });
      assert.deepEqual(big.findings.filter((f) => !f.ok).map((f) => f.check), ["wal"]);
      assert.match(big.findings.find((f) => f.check === "wal")!.fix!, /checkpoint/);
      const fixed = await runDoctor(target, { walLimitBytes: 1, repair: true });
      assert.ok(fixed.repaired.some((r) => /checkpointed/.test(r)), JSON.stringify(fixed));
      assert.equal(fixed.exitCode, 0, JSON.stringify(fixed.findings));
    } finally {
      await writer.close();
    }

    // a damaged page: the index of the log
    const [index] = await sqlOn(
      dbFile,
      "PRAGMA wal_checkpoint(TRUNCATE)",
      "SELECT rootpage FROM sqlite_master WHERE name = 'events_by_session'",
    );
    const file = await Deno.open(dbFile, { write: true });
    await file.seek((Number(index!.rootpage) - 1) * 4096, Deno.SeekMode.Start);
    await file.write(new Uint8Array(4096));
    file.close();
    const damaged = await doctor(home);
    assert.equal(damaged.code, 1);
    const integrity = damaged.report.findings.find((f: Json) => f.check === "integrity");
    assert.equal(integrity.ok, false);
    assert.match(integrity.fix, /Restore the latest backup/);
  } finally {
    await cleanup();
  }
});

Deno.test("a brand-new home is a normal state: doctor says it is not used yet, exits 0 and creates nothing", async () => {
  const { home: parent, cleanup } = await tempHome();
  const home = `${parent}/new`;
  try {
    const fresh = await doctor(home);
    assert.equal(fresh.code, 0, JSON.stringify(fresh.report.findings));
    assert.equal(fresh.report.status, "unused");
    assert.deepEqual(problems(fresh.report), []);
    const said = (check: string) =>
      fresh.report.findings.find((f: Json) => f.check === check).message;
    assert.match(said("database"), /waymark\.db not created yet: this home is not used yet/);
    assert.match(said("keyring"), /keys\.json not created yet/);
    assert.equal(await Deno.stat(home).catch(() => null), null, "doctor created the home");
    const text = await runCli(["doctor"], { home });
    assert.equal(text.code, 0);
    assert.doesNotMatch(text.out, /PROBLEM/);
    assert.match(text.out, /a new home, not used yet: nothing is wrong \(exit 0\)\n$/);

    // its first use makes it a used home, and a healthy one
    assert.equal((await runCli(["workflows", "list"], { home })).code, 0);
    const used = await doctor(home);
    assert.equal(used.code, 0, JSON.stringify(used.report.findings));
    assert.equal(used.report.status, "healthy");
  } finally {
    await cleanup();
  }
});

Deno.test("doctor cannot run on a missing database or one from a newer waymark (exit 2), and migrates an older one only on --repair", async () => {
  const { home, dbFile, cleanup } = await tempHome();
  try {
    const missing = await runCli(["doctor", `${home}/nowhere.db`], { home });
    assert.equal(missing.code, 2);
    assert.match(missing.out, /nowhere\.db does not exist/);
    assert.equal(
      await Deno.stat(`${home}/nowhere.db`).catch(() => null),
      null,
      "doctor created it",
    );

    await seeded(home);
    await sqlOn(
      dbFile,
      "DROP TABLE bundle_imports",
      "DELETE FROM waymark_migrations WHERE name = '0005_bundle_imports'",
    );
    const older = await doctor(home);
    assert.equal(older.code, 1);
    assert.match(JSON.stringify(older.report), /0005_bundle_imports pending/);
    assert.equal(
      (await sqlOn(dbFile, "SELECT count(*) AS n FROM waymark_migrations"))[0]!.n,
      Object.keys(MIGRATIONS).length - 1,
      "doctor migrated",
    );
    const migrated = await doctor(home, "--repair");
    assert.equal(migrated.code, 0, JSON.stringify(migrated.report.findings));
    assert.match(migrated.report.repaired.join(), /migrated the schema \(0005_bundle_imports\)/);

    await sqlOn(dbFile, "INSERT INTO waymark_migrations VALUES ('9999_from_the_future', 'later')");
    const newer = await doctor(home);
    assert.equal(newer.code, 2);
    assert.match(JSON.stringify(newer.report), /newer waymark.*9999_from_the_future/);
  } finally {
    await cleanup();
  }
});

Deno.test({
  name: "a backup taken while a server writes passes doctor, and a home restored from it works",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const a = await tempHome();
    const restored = await tempHome();
    try {
      const client = await connect(a.home);
      const backup = `${a.home}/backup.db`;
      let at = ok(await client.call("start_workflow", { workflowId: "waymark.code_review" }));
      const copying = runCli(["backup", backup], { home: a.home });
      let done = false;
      copying.then(() => done = true);
      let writes = 0;
      for (let i = 0; (!done || i < 3) && i < 200; i++) {
        at = ok(await client.call("continue_workflow", { stateToken: at.stateToken }));
        at = ok(
          await client.call("checkpoint_workflow", {
            stateToken: at.stateToken,
            checkpointToken: at.checkpointToken,
            output: { notesMarkdown: `note ${i}` },
          }),
        );
        writes += 1;
      }
      await client.close();
      const copied = await copying;
      assert.equal(copied.code, 0, copied.err);
      assert.match(copied.err, /integrity ok/);
      assert.ok(writes > 0);
      const again = await runCli(["backup", backup], { home: a.home });
      assert.equal(again.code, 1);
      assert.match(again.err, /already exists/);

      const checked = await runCli(["doctor", backup], { home: a.home });
      assert.equal(checked.code, 0, checked.out);
      await copyFile(backup, `${restored.home}/waymark.db`);
      await copyFile(`${a.home}/keys.json`, `${restored.home}/keys.json`);
      const healthy = await runCli(["doctor"], { home: restored.home });
      assert.equal(healthy.code, 0, healthy.out);
      const listed = await runCli(["sessions", "list", "--json"], { home: restored.home });
      assert.equal(JSON.parse(listed.out).sessions.length, 1);
      const resumed = await connect(restored.home);
      try {
        const found = ok(await resumed.call("resume_session", {}));
        const tip = found.candidates[0].tip;
        const here = ok(await resumed.call("continue_workflow", { stateToken: tip.stateToken }));
        ok(
          await resumed.call("continue_workflow", {
            stateToken: here.stateToken,
            ackToken: here.ackToken,
            output: { notesMarkdown: "after the restore" },
          }),
        );
      } finally {
        await resumed.close();
      }
    } finally {
      await a.cleanup();
      await restored.cleanup();
    }
  },
});
