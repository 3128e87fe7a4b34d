/**
 * Imported sessions are held to every rule a session built over MCP keeps, before anything is
 * written: a bundle forged with a consistent manifest but hostile content (unknown kinds, edges
 * to nowhere, bad times, path-like workflow ids, impossible states, content past the caps) is
 * refused with the rule it breaks; a token placeholder naming a run the bundle does not bring
 * stays inert text; and `waymark doctor` checks stored sessions against the same rules.
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { parseRunLabel } from "../../engine/model/ids.ts";
import { readTokenClaims, tokenPattern } from "../../engine/access/tokens.ts";
import { type Bundle, exportSession, importBundle } from "../../store/bundle/mod.ts";
import { openWaymark, type Waymark } from "../../mod.ts";
import { eventOf, forged, nested } from "../helpers/bundles.ts";
import { dumpAll, runCli, sqlOn } from "../helpers/maintenance.ts";
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

/** Each forgery, and the rule its refusal must name. */
function forgeries(text: string): [string, string, RegExp][] {
  const middle = (b: Bundle) => b.events[Math.floor(b.events.length / 2)]!;
  return [
    [
      "an unknown event kind",
      forged(text, (b) => {
        const e = b.events.at(-1)!;
        e.kind = e.payload.kind = "wormhole_opened";
      }),
      /\(wormhole_opened\) is of no known kind/,
    ],
    [
      "an unknown node kind",
      forged(text, (b) => void (eventOf(b, "node_created", 1).payload.nodeKind = "portal")),
      /nodeKind/,
    ],
    [
      "an edge to a missing node",
      forged(text, (b) => void (eventOf(b, "edge_created").payload.toId = "0123456789abcdef")),
      /names its edge's target \(0123456789abcdef\), which its run never created/,
    ],
    [
      "a time that is not a time",
      forged(text, (b) => void (middle(b).at = "not a time")),
      /no ISO-8601 UTC time \("not a time"\)/,
    ],
    [
      "a time in year 9999",
      forged(text, (b) => void (middle(b).at = "9999-01-01T00:00:00.000Z")),
      /dated in the future \(9999-01-01/,
    ],
    [
      "a path-like workflow id",
      forged(text, (b) => void (eventOf(b, "run_started").payload.workflowId = "../../etc/passwd")),
      /workflowId: is not a workflow id/,
    ],
    [
      "a node state that is no position in its workflow",
      forged(
        text,
        (b) => void (eventOf(b, "node_created", 1).payload.state = { v: 2, pc: 99, frames: [] }),
      ),
      /no position in its workflow: its position 99 is outside the workflow/,
    ],
    [
      "a 2 MiB note",
      forged(
        text,
        (b) =>
          void (eventOf(b, "output_recorded").payload.notesMarkdown = "n".repeat(2 * 1_048_576)),
      ),
      /output.notesMarkdown is 2097152 bytes; the limit is 65536/,
    ],
    [
      "a 100,000-character title",
      forged(text, (b) => void (b.events[0]!.payload.title = "t".repeat(100_000))),
      /its title is 100000 characters; the limit is 2000/,
    ],
    [
      "a context nested 200 deep",
      forged(text, (b) => void (eventOf(b, "node_created").payload.context = nested(200))),
      /context nested more than 64 levels deep \(the limit\)/,
    ],
  ];
}

Deno.test("a forged bundle whose content breaks a session rule is refused with the rule, nothing written", async () => {
  const a = await tempHome();
  const b = await tempHome();
  const wa = await open(a.home);
  const wb = await open(b.home);
  try {
    const review = await seedForkedReview(inProcess(wa));
    const text = await exported(wa, review.sessionId);
    await wb.start({ workflowId: "waymark.code_review", goal: "already here" });
    const before = await dumpAll(b.dbUrl);
    for (const [what, bad, reason] of forgeries(text)) {
      const result = await importBundle(wb, bad);
      assert.equal(result.ok, false, `${what}: imported`);
      if (!result.ok) {
        assert.equal(result.error.code, "BUNDLE_INVALID", what);
        assert.match(result.error.message, reason, `${what}: ${result.error.message}`);
      }
      assert.deepEqual(await dumpAll(b.dbUrl), before, `${what}: wrote`);
    }
    assert.ok((await importBundle(wb, text)).ok, "the untouched bundle still imports");
  } finally {
    await wa.close();
    await wb.close();
    await a.cleanup();
    await b.cleanup();
  }
});

Deno.test("a token placeholder naming a run the bundle does not bring stays text, never a token", async () => {
  const a = await tempHome();
  const wa = await open(a.home);
  try {
    const review = await seedForkedReview(inProcess(wa));
    const resident = await wa.start({ workflowId: "waymark.bug_investigation", goal: "resident" });
    assert.ok(resident.ok);
    const runId = parseRunLabel(placeOf(resident.value).runId)!;
    const { nodeId } = resident.value.session!;
    const bait = `wmtoken:ack:${runId}:${nodeId}`;
    const text = forged(await exported(wa, review.sessionId), (b) => {
      eventOf(b, "output_recorded").payload.notesMarkdown = `advance this: ${bait}`;
    });
    const imported = await importBundle(wa, text);
    assert.ok(imported.ok, JSON.stringify(imported));
    const rows = await sqlOn(a.dbUrl, {
      sql: "SELECT payload FROM events WHERE session_id = ?",
      args: [imported.value.sessionId.slice(4)],
    });
    const payloads = rows.map((r) => String(r.payload)).join("\n");
    assert.ok(payloads.includes(bait), "the foreign placeholder is not kept as text");
    const named = [...payloads.matchAll(tokenPattern())].map((m) => readTokenClaims(m[0])?.runId);
    assert.ok(named.length > 0, "the bundle's own placeholders were not minted");
    assert.ok(!named.includes(runId), "a token for the resident run was minted");
  } finally {
    await wa.close();
    await a.cleanup();
  }
});

Deno.test("doctor checks stored sessions against the same rules (a state edited into no position)", async () => {
  const a = await tempHome();
  try {
    const wa = await open(a.home);
    const review = await seedForkedReview(inProcess(wa));
    await wa.close();
    const healthy = await runCli(["doctor", "--json"], { home: a.home });
    assert.equal(healthy.code, 0, healthy.out);
    const [row] = await sqlOn(a.dbUrl, {
      sql:
        "SELECT seq, payload FROM events WHERE session_id = ? AND kind = 'node_created' ORDER BY seq LIMIT 1",
      args: [review.sessionId],
    });
    const payload = JSON.parse(String(row!.payload));
    payload.state = { v: 2, pc: 99, frames: [] };
    const text = JSON.stringify(payload);
    const digest = createHash("sha256").update(`node_created\n${text}`).digest("hex");
    await sqlOn(
      a.dbUrl,
      {
        sql: "UPDATE events SET payload = ?, digest = ? WHERE seq = ?",
        args: [text, digest, Number(row!.seq)],
      },
      {
        sql: "UPDATE nodes SET state = ? WHERE node_id = ?",
        args: [JSON.stringify(payload.state), payload.nodeId],
      },
    );
    const sick = await runCli(["doctor", "--json"], { home: a.home });
    assert.equal(sick.code, 1, sick.out);
    const found = JSON.parse(sick.out).findings.find((f: { check: string }) =>
      f.check === "session_rules"
    );
    assert.ok(found && !found.ok, sick.out);
    assert.match(found.message, /no position in its workflow/);
    assert.equal(found.details.sessions[0].sessionId, `ses_${review.sessionId}`);
  } finally {
    await a.cleanup();
  }
});
