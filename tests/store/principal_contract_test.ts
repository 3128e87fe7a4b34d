/**
 * Who did what, on both dialects: the events an authenticated caller's calls append name its
 * principal, its run records it as owner and each node who made it, the team policy refuses
 * another principal before anything is written, and a bundle carries the principals to another
 * database (of the other dialect), where the digests guard them as they guard every event.
 * @module
 */
import assert from "node:assert/strict";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { Principal } from "../../engine/access/principal.ts";
import { parseRunLabel, parseSessionLabel } from "../../engine/model/ids.ts";
import { actingAs } from "../../engine/access/team_policy.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { exportSession, importBundle, verifyBundle } from "../../store/bundle/mod.ts";
import type { OpenedSqlStore } from "../../store/mod.ts";
import { testKeyring } from "../helpers/memory.ts";
import { ack, engineDeps, start, SUBJECTS } from "./subjects.ts";

const ALICE: Principal = {
  subject: "https://idp.test#alice",
  displayName: "Alice",
  kind: "person",
};
const BOB: Principal = { subject: "pat:bob", displayName: "Bob", kind: "person" };

/** The events of a session as stored: their payloads, parsed. */
async function payloads(store: OpenedSqlStore, sessionId: string) {
  const rows = await store.db.selectFrom("events").select(["kind", "payload"])
    .where("session_id", "=", sessionId).orderBy("seq").execute();
  return rows.map((r) => ({ kind: r.kind, ...JSON.parse(r.payload) }));
}

for (const [name, open] of Object.entries(SUBJECTS)) {
  const other = Object.keys(SUBJECTS).find((n) => n !== name) ?? name;
  Deno.test(`${name}: events name their principal, the policy guards the run, bundles carry it to ${other}`, async () => {
    const a = await open();
    const b = await SUBJECTS[other]!();
    try {
      const deps = await engineDeps(a.store);
      const alice = actingAs(deps, { principal: ALICE });
      const bob = actingAs(deps, { principal: BOB });
      const first = await start(alice, "project.plain");
      const second = await ack(alice, first, "alice did s1");
      const runId = parseRunLabel(first.session!.runId)!;
      const sessionId = parseSessionLabel(first.session!.sessionId)!;

      const run = await a.store.getRun(runId);
      assert.deepEqual({ owner: run?.owner, access: run?.access }, {
        owner: ALICE,
        access: "owner",
      });
      const logged = await payloads(a.store as unknown as OpenedSqlStore, sessionId);
      assert.ok(
        logged.every((e) => e.principal?.subject === ALICE.subject),
        "every event names alice",
      );

      // bob may read (a rehydrate) but not act: refused, nothing written, a replay refused alike
      const before = await a.store.counts();
      const refused = await continueWorkflow(bob, {
        stateToken: second.stateToken,
        ackToken: second.ackToken!,
        output: { notesMarkdown: "bob tries" },
      });
      assert.ok(!refused.ok && refused.error.code === "RUN_NOT_YOURS");
      assert.equal(refused.error.retry.kind, "not_retryable");
      assert.deepEqual(refused.error.details?.owner, {
        subject: ALICE.subject,
        displayName: "Alice",
      });
      const replay = await continueWorkflow(bob, {
        stateToken: first.stateToken,
        ackToken: first.ackToken!,
      });
      assert.ok(!replay.ok && replay.error.code === "RUN_NOT_YOURS");
      assert.deepEqual(await a.store.counts(), before, "a refusal writes nothing");
      assert.ok((await continueWorkflow(bob, { stateToken: second.stateToken })).ok);
      // a call without a principal acts with the database's authority, and records none
      const third = await ack(deps, second, "a local call did s2");
      assert.notEqual(third.isComplete, true); // an acknowledgement says isComplete only once true

      // the bundle carries who did what; the importing database projects it again
      const out = await exportSession({ store: a.store as unknown as OpenedSqlStore }, sessionId);
      assert.ok(out.ok);
      const target = b.store as unknown as OpenedSqlStore;
      const targetDeps: Pick<EngineDeps, "keyring" | "random" | "clock"> = {
        ...await engineDeps(b.store),
        keyring: testKeyring(),
        // the subjects' clocks tick from 2030: the importing side reads it as now
        clock: { now: () => "2031-01-01T00:00:00.000Z" },
      };
      const imported = await importBundle({ store: target, deps: targetDeps }, out.value.text);
      assert.ok(imported.ok, JSON.stringify(imported));
      const moved = await b.store.getRun(runId);
      assert.deepEqual(moved?.owner, ALICE);
      const made = await target.db.selectFrom("nodes").select(["made_by"]).where(
        "run_id",
        "=",
        runId,
      )
        .orderBy("created_seq").execute();
      assert.deepEqual(
        made.map((n) => n.made_by && JSON.parse(n.made_by).displayName),
        ["Alice", "Alice", null],
      );

      // a principal changed in the bundle fails its event's digest: refused whole
      const forged = out.value.text.replace('"displayName":"Alice"', '"displayName":"Mallory"');
      assert.notEqual(forged, out.value.text);
      const verdict = await verifyBundle(forged, { now: "2031-01-01T00:00:00.000Z" });
      assert.ok(!verdict.ok, "a forged principal passed the bundle's checks");
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  });
}
