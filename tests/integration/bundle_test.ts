/**
 * Session bundles on real libSQL files: the same session exports to the same bytes (and again
 * after an import elsewhere), no token is ever inside, every kind of tampering is refused whole
 * with nothing written, an id already taken imports under new ids that still resume and
 * advance, versions are refused or upgraded, and a bundle imported twice is a no-op.
 * @module
 */
import assert from "node:assert/strict";
import { type Bundle, exportSession, importBundle, verifyBundle } from "../../store/bundle/mod.ts";
import {
  bundleText,
  canonicalDigest,
  eventDigest,
  seal,
} from "../../store/bundle/bundle_format.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { resumeSession } from "../../engine/use_cases/resume_session.ts";
import { openWaymark, type Waymark } from "../../mod.ts";
import { dumpAll, holdsToken, withoutTokens } from "../helpers/maintenance.ts";
import { dbUrlOf, tempHome } from "../helpers/server.ts";
import { inProcess, seedForkedReview } from "../helpers/viewer_fixture.ts";
import { placeOf } from "../helpers/answers.ts";

function open(home: string): Promise<Waymark> {
  return openWaymark({ home, dbUrl: dbUrlOf(home), workspace: home });
}

async function exported(wm: Waymark, sessionId: string): Promise<string> {
  const out = await exportSession(wm, sessionId);
  if (!out.ok) throw new Error(out.error.message);
  return out.value.text;
}

/** A home with a forked code review and a second session, and the review's bundle text. */
interface Origin {
  home: string;
  wm: Waymark;
  sessionId: string;
  text: string;
  cleanup(): Promise<void>;
}

/** A home with a forked code review and a second session; its bundle's text. */
async function origin(): Promise<Origin> {
  const { home, cleanup } = await tempHome();
  const wm = await open(home);
  const review = await seedForkedReview(inProcess(wm));
  await wm.start({ workflowId: "waymark.bug_investigation", goal: "Flaky upload test" });
  return {
    home,
    wm,
    sessionId: review.sessionId,
    text: await exported(wm, review.sessionId),
    cleanup,
  };
}

/** The bundle parsed, changed by `edit`, and sealed again (a tamperer who fixes the manifest). */
function resealed(text: string, edit: (b: Bundle) => void): string {
  const bundle = JSON.parse(text) as Bundle;
  edit(bundle);
  bundle.manifest = seal(bundle);
  return bundleText(bundle);
}

async function exportsStable(a: Origin): Promise<void> {
  const b = await tempHome();
  try {
    assert.equal(await exported(a.wm, a.sessionId), a.text, "a second export differs");
    assert.equal(holdsToken(a.text), false, "a token is in the bundle");
    assert.match(a.text, /wmtoken:state:[0-9a-f]{16}:[0-9a-f]{16}/);
    const bundle = JSON.parse(a.text) as Bundle;
    assert.equal(bundle.bundleSchemaVersion, 1);
    assert.deepEqual(bundle.events.map((e) => e.n), bundle.events.map((_, i) => i + 1));
    assert.deepEqual(bundle.snapshots.map((s) => s.workflowId), ["waymark.code_review"]);
    const wb = await open(b.home);
    try {
      const first = await importBundle(wb, a.text);
      assert.ok(first.ok && first.value.status === "imported" && !first.value.rekeyed);
      assert.equal(first.value.sessionId, `ses_${a.sessionId}`);
      assert.equal(await exported(wb, a.sessionId), a.text, "the re-export after import differs");
      const before = await dumpAll(b.dbUrl);
      const again = await importBundle(wb, a.text);
      assert.ok(again.ok && again.value.status === "already_imported");
      assert.deepEqual(await dumpAll(b.dbUrl), before, "a repeat import wrote");
    } finally {
      await wb.close();
    }
  } finally {
    await b.cleanup();
  }
}

/** Each tampering, and what the refusal must say. */
function tamperings(text: string, other: Bundle): [string, string, RegExp][] {
  const lines = text.split("\n");
  const eventLine = lines.findIndex((l) => l.includes('"kind":"output_recorded"'));
  const swap = [...lines];
  [swap[eventLine], swap[eventLine + 1]] = [swap[eventLine + 1]!, swap[eventLine]!];
  const nodeAt = (b: Bundle) => b.events.findIndex((e) => e.kind === "node_created" && e.n > 6);
  return [
    ["a changed byte", text.replace("exponential", "exponentiaL"), /events part does not match/],
    [
      "a changed byte, manifest fixed",
      resealed(text, (b) => void (b.events[eventLine - 4]!.at = "2000-01-01T00:00:00.000Z")),
      /event \d+ fails its digest check/,
    ],
    ["a removed event", lines.filter((_, i) => i !== eventLine).join("\n"), /part does not match/],
    [
      "a removed event, manifest fixed",
      resealed(text, (b) => void b.events.splice(5, 1)),
      /event 6 is numbered 7: events were removed or reordered/,
    ],
    ["a reordered event", swap.join("\n"), /events part does not match/],
    [
      "a reordered event, renumbered and digests fixed",
      resealed(text, (b) => {
        const i = nodeAt(b);
        [b.events[2], b.events[i]] = [b.events[i]!, b.events[2]!];
        b.events.forEach((e, k) => {
          e.n = k + 1;
          e.digest = eventDigest(e);
        });
      }),
      /before (its run started|its parent): events were reordered/,
    ],
    [
      "a swapped snapshot",
      resealed(text, (b) => void (b.snapshots[0]!.compiled = other.snapshots[0]!.compiled)),
      /does not match its hash/,
    ],
    [
      "a wrong manifest digest",
      text.replace(/"session":"([0-9a-f])/, (_m, c) => `"session":"${c === "0" ? "1" : "0"}`),
      /session part does not match the manifest/,
    ],
    [
      "a wrong whole digest",
      text.replace(/"whole":"[0-9a-f]{64}"/, `"whole":"${"0".repeat(64)}"`),
      /whole digest/,
    ],
    ["a truncated file", text.slice(0, Math.floor(text.length / 2)), /not valid JSON.*truncated/],
    [
      "a bundle from the future",
      text.replace('"bundleSchemaVersion":1', '"bundleSchemaVersion":2'),
      /bundleSchemaVersion 2, newer than 1/,
    ],
    [
      "a bundle from before version 1",
      text.replace('"bundleSchemaVersion":1', '"bundleSchemaVersion":0'),
      /bundleSchemaVersion 0, older than any this waymark can upgrade \(it reads 1\)/,
    ],
    [
      "a token inside",
      resealed(text, (b) => {
        const e = b.events.find((x) => x.kind === "output_recorded")!;
        e.payload.notesMarkdown = `st1_${"A".repeat(44)}`;
        e.digest = eventDigest(e);
      }),
      /holds a token/,
    ],
    ["not a bundle", '{"hello":"world"}', /not a waymark session bundle/],
  ];
}

async function tamperingRefused(a: Origin): Promise<void> {
  const b = await tempHome();
  try {
    const bug = (await a.wm.store.listSessions({ limit: 5, offset: 0 }))
      .find((s) => s.title === "Flaky upload test")!;
    const other = JSON.parse(await exported(a.wm, bug.sessionId)) as Bundle;
    const wb = await open(b.home);
    try {
      await wb.start({ workflowId: "waymark.code_review", goal: "already here" });
      const before = await dumpAll(b.dbUrl);
      for (const [what, text, reason] of tamperings(a.text, other)) {
        const result = await importBundle(wb, text);
        assert.equal(result.ok, false, `${what}: imported`);
        if (!result.ok) {
          assert.match(result.error.message, reason, `${what}: ${result.error.message}`);
        }
        assert.deepEqual(await dumpAll(b.dbUrl), before, `${what}: wrote`);
      }
      const future = await importBundle(
        wb,
        a.text.replace('"bundleSchemaVersion":1', '"bundleSchemaVersion":2'),
      );
      assert.ok(!future.ok && future.error.code === "BUNDLE_VERSION_UNSUPPORTED");
      assert.deepEqual(future.error.details, { bundleSchemaVersion: 2, supported: 1 });
      assert.ok((await importBundle(wb, a.text)).ok, "the untouched bundle still imports");
    } finally {
      await wb.close();
    }
  } finally {
    await b.cleanup();
  }
}

Deno.test("an id already taken imports under new ids that resume, advance and fork on their own", async () => {
  const a = await origin();
  try {
    const imported = await importBundle(a.wm, a.text);
    assert.ok(imported.ok && imported.value.status === "imported" && imported.value.rekeyed);
    const copy = imported.value.sessionId;
    assert.notEqual(copy, `ses_${a.sessionId}`);
    assert.equal(imported.value.sourceSessionId, `ses_${a.sessionId}`);
    const original = await a.wm.store.getSession(a.sessionId);
    const twin = await a.wm.store.getSession(copy.slice(4));
    assert.ok(original && twin);
    assert.equal(twin.runs.length, 1);
    assert.notEqual(twin.runs[0]!.runId, original.runs[0]!.runId, "the run id was not re-keyed");
    assert.deepEqual(
      withoutTokens({ ...twin, sessionId: 0, runs: twin.runs.map((r) => ({ ...r, runId: 0 })) }),
      withoutTokens({
        ...original,
        sessionId: 0,
        runs: original.runs.map((r) => ({ ...r, runId: 0 })),
      }),
    );
    // the copy resumes by its own id and advances without touching the original
    const found = await resumeSession(a.wm.deps, { query: copy });
    assert.ok(found.ok);
    const tip = found.value.candidates[0]!;
    assert.equal(tip.sessionId, copy);
    const rehydrated = await continueWorkflow(a.wm.deps, { stateToken: tip.tip.stateToken });
    assert.ok(rehydrated.ok, JSON.stringify(rehydrated));
    const next = await continueWorkflow(a.wm.deps, {
      stateToken: tip.tip.stateToken,
      ackToken: rehydrated.value.ackToken,
      output: { notesMarkdown: "carried on in the copy" },
    });
    assert.ok(next.ok && next.value.kind === "ok" && rehydrated.value.session!.sessionId === copy);
    const fork = await continueWorkflow(a.wm.deps, { stateToken: tip.tip.stateToken });
    assert.ok(fork.ok && fork.value.forked, "rehydrating the old tip reports the new branch");
    const sibling = await continueWorkflow(a.wm.deps, {
      stateToken: tip.tip.stateToken,
      ackToken: fork.value.ackToken,
      output: { notesMarkdown: "a fork in the copy" },
    });
    assert.ok(sibling.ok && placeOf(sibling.value).nodeId !== placeOf(next.value).nodeId);
    const after = await a.wm.store.getSession(a.sessionId);
    assert.equal(after?.eventCount, original.eventCount, "the original changed");
    // the same bundle again is a no-op, even though it was re-keyed
    const again = await importBundle(a.wm, a.text);
    assert.ok(
      again.ok && again.value.status === "already_imported" && again.value.sessionId === copy,
    );
  } finally {
    await a.wm.close();
    await a.cleanup();
  }
});

async function olderVersionUpgraded(a: Origin): Promise<void> {
  // a synthetic version 0: the summary called the title `name`, and the whole digest
  // covered version 0
  const v1 = JSON.parse(a.text) as Bundle;
  const { title, ...rest } = v1.session;
  const v0 = { ...v1, bundleSchemaVersion: 0, session: { ...rest, name: title } };
  const parts0 = { ...v0.manifest.parts, session: canonicalDigest(v0.session) };
  v0.manifest = {
    ...v0.manifest,
    parts: parts0,
    whole: canonicalDigest({ parts: parts0, v: 0 }),
  };
  const upgrades = {
    0: {
      verify: (b: Record<string, unknown>) => {
        const m = b.manifest as Bundle["manifest"];
        return canonicalDigest({ parts: m.parts, v: 0 }) === m.whole ? null : "bad v0 digest";
      },
      upgrade: (b: Record<string, unknown>) => {
        const { name, ...session } = b.session as Record<string, unknown>;
        const parts = { ...(b as Bundle), session: { ...session, title: name } } as Bundle;
        return { ...parts, bundleSchemaVersion: 1, manifest: seal(parts) };
      },
    },
  };
  const text0 = JSON.stringify(v0);
  const upgraded = await verifyBundle(text0, { upgrades, now: new Date().toISOString() });
  assert.ok(upgraded.ok, JSON.stringify(upgraded));
  assert.equal(upgraded.value.session.title, title);
  assert.equal(bundleText(upgraded.value), a.text, "the upgrade does not give the same session");
  const broken = await verifyBundle(
    text0.replace(/"whole":"[0-9a-f]+"/, `"whole":"${"1".repeat(64)}"`),
    { upgrades, now: new Date().toISOString() },
  );
  assert.ok(!broken.ok && /bad v0 digest \(bundleSchemaVersion 0\)/.test(broken.error.message));
  const unknown = await verifyBundle(text0, { now: new Date().toISOString() });
  assert.ok(!unknown.ok && unknown.error.code === "BUNDLE_VERSION_UNSUPPORTED");
}

// One origin for the three cases that only read it (each imports into a home of its own): one
// seeded home, not three. The re-keying case imports into its origin, so it keeps its own.
Deno.test("one origin: exports are stable, tampering is refused, older versions upgrade", async (t) => {
  const a = await origin();
  try {
    await t.step(
      "a session exports to the same bytes, without tokens, and again after an import elsewhere",
      () => exportsStable(a),
    );
    await t.step(
      "every kind of tampering is refused whole, with the reason, and nothing is written",
      () => tamperingRefused(a),
    );
    await t.step(
      "an older bundle version is upgraded through the path's steps, each checked by its own rules",
      () => olderVersionUpgraded(a),
    );
  } finally {
    await a.wm.close();
    await a.cleanup();
  }
});
