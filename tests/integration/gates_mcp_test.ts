/**
 * WorkRail's gates over a real stdio server with the v1 SDK client (which checks each result
 * against the published output schema): a missing-notes block, an assessment follow-up and its
 * passing retry, a missing context key, the context budget refused before any write, the
 * recorded assessment on its node in the viewer, and invariant violations answered as data.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openTestDb, withTestDb } from "../helpers/db.ts";
import { openWaymark } from "../../mod.ts";
import { createViewerApp } from "../../web/mod.ts";
import { connect, dbUrlOf, err, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const WORKFLOW = {
  id: "user.diagnose",
  name: "Diagnose",
  description: "A diagnosis behind a readiness gate.",
  version: "1.0.0",
  assessments: [{
    id: "readiness",
    purpose: "Whether the diagnosis is proven.",
    dimensions: [
      { id: "evidence", purpose: "Backed by runs.", levels: ["gaps", "complete"] },
      { id: "confidence", purpose: "How sure.", levels: ["low", "medium", "high"] },
    ],
  }],
  steps: [
    {
      id: "reproduce",
      title: "Reproduce",
      prompt: "Reproduce it and set `ticket`.",
      requiredContext: ["ticket"],
    },
    {
      id: "diagnose",
      title: "Diagnose",
      prompt: "Find the cause of {{ticket}}.",
      assessmentRefs: ["readiness"],
      assessmentConsequences: [{
        when: { anyEqualsLevel: "gaps" },
        effect: { kind: "require_followup", guidance: "Run the experiment that would refute it." },
      }],
    },
    {
      id: "double-check",
      title: "Double-check",
      prompt: "Medium confidence: check again.",
      runCondition: { var: "assessments.readiness.confidence", equals: "medium" },
    },
    { id: "fix", title: "Fix", prompt: "Fix it." },
  ],
};

async function withServer(fn: (c: TestClient, home: string) => Promise<void>): Promise<void> {
  const home = await tempHome();
  await Deno.mkdir(join(home.home, "workflows"), { recursive: true });
  await Deno.writeTextFile(join(home.home, "workflows", "diagnose.json"), JSON.stringify(WORKFLOW));
  const client = await connect(home.home, { client: "v1" });
  try {
    await fn(client, home.home);
  } finally {
    await client.close();
    await home.cleanup();
  }
}

async function advance(c: TestClient, from: Json, extra: Json = {}): Promise<Json> {
  return ok(
    await c.call("continue_workflow", {
      stateToken: from.stateToken,
      ackToken: from.ackToken,
      ...extra,
    }),
  );
}

const readiness = (evidence: string, confidence: string) => ({
  kind: "wr.assessment",
  assessmentId: "readiness",
  dimensions: { evidence, confidence },
});

/**
 * The v1 client's cases, in this order on one server and home (one process start, not three): the
 * budget case counts every row, the gates case every recorded assessment, and the invariant case
 * damages its own run, so it goes last.
 */
const V1_CASES: [string, (c: TestClient, home: string) => Promise<void>][] = [
  ["context over the budget is refused before any write", async (c, home) => {
    const big = { blob: "x".repeat(256 * 1024) };
    const refused = err(
      await c.call("start_workflow", { workflowId: "user.diagnose", context: big }),
    );
    assert.equal(refused.code, "INVALID_ARGUMENTS");
    assert.equal(refused.retry.kind, "not_retryable");
    assert.equal(refused.details?.reason, "context_budget_exceeded");
    assert.equal(refused.details?.maxBytes, 256 * 1024);
    assert.ok((refused.details?.bytes as number) > 256 * 1024);
    const start = ok(await c.call("start_workflow", { workflowId: "user.diagnose" }));
    const again = err(
      await c.call("continue_workflow", {
        stateToken: start.stateToken,
        ackToken: start.ackToken,
        context: big,
        output: { notesMarkdown: "x" },
      }),
    );
    assert.equal(again.details?.reason, "context_budget_exceeded");
    const db = await openTestDb(dbUrlOf(home));
    try {
      const sessions = await db.number("SELECT count(*) AS n FROM sessions");
      const nodes = await db.number("SELECT count(*) AS n FROM nodes");
      assert.deepEqual([sessions, nodes], [1, 1]);
    } finally {
      await db.close();
    }
  }],
  [
    "notes, a required context key and an assessment follow-up block; the retries advance",
    async (c, home) => {
      const start = ok(await c.call("start_workflow", { workflowId: "user.diagnose" }));
      const blocked = await advance(c, start, { context: { ticket: "BUG-7" } });
      assert.equal(blocked.kind, "blocked");
      assert.deepEqual(blocked.blockers.map((b: Json) => [b.code, b.pointer]), [[
        "MISSING_REQUIRED_NOTES",
        { kind: "workflow_step", stepId: "reproduce" },
      ]]);
      const noKey = await advance(c, blocked, { output: { notesMarkdown: "Reproduced." } });
      assert.deepEqual(noKey.blockers.map((b: Json) => [b.code, b.pointer]), [[
        "MISSING_CONTEXT_KEY",
        { kind: "context_key", key: "ticket" },
      ]]);
      const diagnose = await advance(c, noKey, {
        context: { ticket: "BUG-7" },
        output: { notesMarkdown: "Reproduced 5/5." },
      });
      assert.equal(diagnose.pending.stepId, "diagnose");
      assert.equal(diagnose.pending.prompt.startsWith("Find the cause of BUG-7."), true);
      assert.deepEqual(diagnose.pending.assessments, [{
        assessmentId: "readiness",
        dimensions: [
          { id: "evidence", levels: ["gaps", "complete"], required: true },
          { id: "confidence", levels: ["low", "medium", "high"], required: true },
        ],
      }]);

      const followUp = await c.call("continue_workflow", {
        stateToken: diagnose.stateToken,
        ackToken: diagnose.ackToken,
        output: { notesMarkdown: "Cause found.", artifacts: [readiness("gaps", "medium")] },
      });
      const f = ok(followUp);
      assert.equal(f.kind, "blocked");
      assert.deepEqual(f.blockers, [{
        code: "ASSESSMENT_FOLLOWUP_REQUIRED",
        pointer: {
          kind: "assessment_dimension",
          assessmentId: "readiness",
          dimensionId: "evidence",
        },
        message:
          "Follow-up required: readiness.evidence = `gaps`. The step stays pending: do what the suggested fix says, then acknowledge again with a new assessment.",
        suggestedFix: "Run the experiment that would refute it.",
      }]);
      assert.match(followUp.content[0]!.text, /BLOCKED[\s\S]*ASSESSMENT_FOLLOWUP_REQUIRED/);
      assert.equal(f.pending.stepId, "diagnose");

      const badLevel = await advance(c, f, {
        output: { notesMarkdown: "Cause found.", artifacts: [readiness("complete", "sure")] },
      });
      assert.equal(badLevel.blockers[0].code, "INVALID_REQUIRED_OUTPUT");
      assert.match(badLevel.blockers[0].message, /its levels: `low`, `medium`, `high`/);

      const passed = await advance(c, badLevel, {
        output: {
          notesMarkdown: "Proven by a revert.",
          artifacts: [readiness("complete", "medium")],
        },
      });
      assert.equal(passed.kind, "ok");
      assert.equal(passed.pending.stepId, "double-check", "medium confidence adds the check");

      // The assessments are events, shown on the node the acknowledgement created.
      const db = await openTestDb(dbUrlOf(home));
      try {
        const rows = await db.rows(
          "SELECT payload FROM events WHERE kind = 'assessment_recorded' ORDER BY seq",
        );
        const recorded = rows.map((r) => JSON.parse(String(r.payload)));
        assert.deepEqual(
          recorded.map((e: Json) => [e.nodeId === placeOf(passed).nodeId, e.dimensions]),
          [
            [false, { evidence: "gaps", confidence: "medium" }],
            [true, { evidence: "complete", confidence: "medium" }],
          ],
        );
      } finally {
        await db.close();
      }
    },
  ],
  [
    "a missing parent and a state outside the workflow answer INVARIANT_VIOLATION",
    async (c, home) => {
      const step = async (from: Json, extra: Json) => await advance(c, from, extra);
      const s0 = ok(
        await c.call("start_workflow", { workflowId: "user.diagnose", context: { ticket: "B" } }),
      );
      const s1 = await step(s0, { output: { notesMarkdown: "one" } });
      const s2 = await step(s1, {
        output: { notesMarkdown: "two", artifacts: [readiness("complete", "high")] },
      });
      const db = await openTestDb(dbUrlOf(home));
      try {
        // A parent that is gone: the recap's walk up from s2 stops short of the root.
        await db.run("DELETE FROM nodes WHERE node_id = ?", [placeOf(s1).nodeId]);
        const orphan = err(await c.call("continue_workflow", { stateToken: s2.stateToken }));
        assert.equal(orphan.code, "INVARIANT_VIOLATION");
        assert.equal(orphan.retry.kind, "not_retryable");
        assert.equal(orphan.details?.invariant, "parent_exists");
        assert.equal(orphan.details?.orphanNodeId, placeOf(s2).nodeId);

        // A state that is no position in the pinned workflow.
        await db.run("UPDATE nodes SET state = ? WHERE node_id = ?", [
          JSON.stringify({ v: 2, pc: 40, frames: [] }),
          placeOf(s0).nodeId,
        ]);
        const lost = err(await c.call("continue_workflow", { stateToken: s0.stateToken }));
        assert.equal(lost.code, "INVARIANT_VIOLATION");
        assert.equal(lost.details?.invariant, "state_in_workflow");
      } finally {
        await db.close();
      }
    },
  ],
];

Deno.test("over MCP (v1 client): the context budget, gates and invariant violations on one server", async (t) => {
  await withServer(async (c, home) => {
    for (const [name, run] of V1_CASES) await t.step(name, () => run(c, home));
  });
});

Deno.test("the viewer shows a node's recorded assessments", async () => {
  const home = await tempHome();
  const workspace = await Deno.makeTempDir();
  await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(
    join(workspace, ".waymark", "workflows", "diagnose.json"),
    JSON.stringify({ ...WORKFLOW, id: "project.diagnose" }),
  );
  const waymark = await openWaymark({ home: home.home, dbUrl: home.dbUrl, workspace });
  const viewer = createViewerApp({ db: waymark.store.db, allowedHosts: () => ["127.0.0.1:4321"] });
  try {
    const s0 = await waymark.start({ workflowId: "project.diagnose", context: { ticket: "B-1" } });
    assert.ok(s0.ok);
    const s1 = await waymark.continue({
      stateToken: s0.value.stateToken,
      ackToken: s0.value.ackToken,
      output: { notesMarkdown: "Reproduced." },
    });
    assert.ok(s1.ok);
    const s2 = await waymark.continue({
      stateToken: s1.value.stateToken,
      ackToken: s1.value.ackToken,
      output: { notesMarkdown: "Proven.", artifacts: [readiness("complete", "high")] },
    });
    assert.ok(s2.ok && s2.value.kind === "ok");
    const { sessionId } = s0.value.session!;
    const { runId, nodeId } = placeOf(s2.value);
    const page = await viewer.app.request(`/sessions/${sessionId}/runs/${runId}/nodes/${nodeId}`, {
      headers: { host: "127.0.0.1:4321" },
    });
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /<h3>Assessments<\/h3>/);
    assert.match(html, /<code>readiness<\/code>[\s\S]*evidence <strong>complete<\/strong>/);
    const api = await viewer.app.request(
      `/api/sessions/${sessionId}/runs/${runId}/nodes/${nodeId}`,
      { headers: { host: "127.0.0.1:4321" } },
    );
    const body = await api.json();
    assert.ok(
      JSON.stringify(body).includes('"assessment_recorded"'),
      "the node's JSON carries the recorded assessment",
    );
  } finally {
    viewer.close();
    await waymark.close();
    await home.cleanup();
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});

Deno.test("over MCP (v1 client): a snapshot that does not hash to its key answers INVARIANT_VIOLATION", async () => {
  // The snapshot check runs once per process per hash: a fresh server sees the edit.
  const home = await tempHome();
  await Deno.mkdir(join(home.home, "workflows"), { recursive: true });
  await Deno.writeTextFile(join(home.home, "workflows", "diagnose.json"), JSON.stringify(WORKFLOW));
  // the run is started in-process; the server that must see the edit is a fresh process
  let c = await connect(home.home);
  try {
    const s0 = ok(await c.call("start_workflow", { workflowId: "user.diagnose" }));
    await c.close();
    await withTestDb(home.dbUrl, (db) =>
      db.run(
        "UPDATE workflow_snapshots SET compiled = replace(compiled, 'Fix it.', 'Delete it all.')",
      ));
    c = await connect(home.home, { client: "v1" });
    const swapped = err(await c.call("continue_workflow", { stateToken: s0.stateToken }));
    assert.equal(swapped.code, "INVARIANT_VIOLATION");
    assert.equal(swapped.details?.invariant, "snapshot_hash");
    assert.equal(swapped.details?.workflowHash, s0.workflow.hash);
    assert.notEqual(swapped.details?.contentHash, s0.workflow.hash);
  } finally {
    await c.close();
    await home.cleanup();
  }
});
