/**
 * End-to-end walks over both MCP client lines (the v2 client package, on a server in-process, and
 * the v1 SDK client, on a real stdio server; one server per line, each case a step on it):
 * listing and inspecting, a full walk, byte-identical replays, rehydrates that write nothing, forks, checkpoints, and run conditions. The database is inspected
 * directly (a second connection to the server's database) to check what was written; with
 * `tests/postgres/` it all runs on PostgreSQL too.
 * @module
 */
import assert from "node:assert/strict";
import { withTestDb } from "../helpers/db.ts";
import { type CallResult, connect, err, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { gated } from "../helpers/workflows.ts";
import { BUNDLED_IDS as BUNDLED } from "../helpers/library.ts";
import { placeOf } from "../helpers/answers.ts";

type Line = "v1" | "v2";
const LINES: readonly Line[] = ["v1", "v2"];

/**
 * The recorded answer of a call, as text: its content and structured content. Its `_meta`
 * carries the run's task as it is now (status, progress), which a replay reports afresh.
 */
function recorded(result: unknown): string {
  const { _meta: _, ...answer } = result as Record<string, unknown>;
  return JSON.stringify(answer);
}
// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** Runs `fn` against a fresh server (own WAYMARK_HOME) and always closes and cleans up. */
async function withServer(
  line: Line,
  fn: (c: TestClient, dbUrl: string) => Promise<void>,
): Promise<void> {
  const home = await tempHome();
  let client: TestClient | undefined;
  try {
    client = await connect(home.home, { client: line });
    await fn(client, home.dbUrl);
  } finally {
    await client?.close();
    await home.cleanup();
  }
}

/** Runs SQL on the server's database through a separate, short-lived connection. */
function query(dbUrl: string, sql: string, args: (string | number)[] = []): Promise<Json[]> {
  return withTestDb(dbUrl, (db) => db.rows(sql, args));
}

/** Row counts and full contents of every table, to prove a call wrote nothing at all. */
function snapshot(dbUrl: string): Promise<{ counts: Record<string, number>; dump: string }> {
  return withTestDb(dbUrl, (db) => db.snapshot());
}

/** Hex run id as stored, from the `run_…` label agents see. */
function runHex(response: Json): string {
  const label = placeOf(response).runId as string;
  assert.match(label, /^run_[0-9a-f]{16}$/);
  return label.slice(4);
}

function assertTokens(response: Json): void {
  assert.match(response.stateToken, /^st1_[A-Za-z0-9_-]+$/);
  assert.match(response.checkpointToken, /^chk1_[A-Za-z0-9_-]+$/);
  if (response.isComplete) {
    assert.equal(response.ackToken, undefined, "a complete node has no ackToken");
  } else assert.match(response.ackToken, /^ack1_[A-Za-z0-9_-]+$/);
  for (const key of ["stateToken", "ackToken", "checkpointToken"]) {
    if (response[key] !== undefined) {
      assert.ok(response[key].length < 60, `${key} too long: ${response[key]}`);
    }
  }
}

/** Acknowledges the pending step of `from` with notes; returns the whole result and its data. */
async function advance(
  c: TestClient,
  from: Json,
  extra: Record<string, unknown> = {},
): Promise<{ result: CallResult; data: Json }> {
  const result = await c.call("continue_workflow", {
    stateToken: from.stateToken,
    ackToken: from.ackToken,
    output: { notesMarkdown: `Did ${from.pending.stepId}.`, ...gated(from.pending) },
    ...extra,
  });
  const data = ok(result);
  assert.equal(data.kind, "ok");
  assertTokens(data);
  return { result, data };
}

/** Walks a run to completion; returns the pending step ids seen, in order, and every response. */
async function walk(c: TestClient, start: Json): Promise<{ visited: string[]; steps: Json[] }> {
  const visited: string[] = [];
  const steps: Json[] = [start];
  let current = start;
  while (!current.isComplete) {
    assert.ok(visited.length < 30, "walk did not terminate");
    visited.push(current.pending.stepId);
    current = (await advance(c, current)).data;
    steps.push(current);
  }
  return { visited, steps };
}

async function inspect(c: TestClient, workflowId: string): Promise<Json> {
  return ok(await c.call("inspect_workflow", { workflowId }));
}

/** What each client line proves, in order, on one server and home of its own. */
const CASES: [string, (c: TestClient, dbUrl: string) => Promise<void>][] = [
  [
    "list_workflows lists the bundled workflows sorted; inspect_workflow previews without writing",
    async (c, dbUrl) => {
      const listResult = await c.call("list_workflows", {});
      const list = ok(listResult);
      const ids = list.workflows.map((w: Json) => w.id);
      assert.deepEqual(ids, BUNDLED);
      assert.deepEqual(list.loadErrors, []);
      for (const w of list.workflows) {
        assert.equal(w.kind, w.id.includes(".routine-") ? "routine" : "workflow");
        assert.equal(w.idStatus, "namespaced");
        assert.equal(w.source, "bundled");
        assert.match(w.workflowHash, /^sha256:[0-9a-f]{64}$/);
        assert.ok(listResult.content[0]!.text.includes(w.id), `text rendering lacks ${w.id}`);
      }

      const before = await snapshot(dbUrl);
      for (const summary of list.workflows) {
        const inspected = await inspect(c, summary.id);
        assert.equal(inspected.workflow.id, summary.id);
        assert.equal(inspected.workflow.workflowHash, summary.workflowHash);
        assert.equal(inspected.steps.length, summary.stepCount);
        assert.ok(inspected.steps.length > 0);
        for (const step of inspected.steps) {
          assert.equal(typeof step.stepId, "string");
          assert.equal(typeof step.conditional, "boolean");
          assert.ok(step.promptPreview.length > 0 && step.promptPreview.length <= 280);
        }
      }
      const review = await inspect(c, "waymark.code_review");
      assert.deepEqual(
        review.steps.filter((s: Json) => s.conditional).map((s: Json) => s.stepId),
        ["cross-cutting-impact"],
      );
      const missing = err(await c.call("inspect_workflow", { workflowId: "wr.no_such_workflow" }));
      assert.equal(missing.code, "WORKFLOW_NOT_FOUND");
      assert.deepEqual(missing.details?.knownIds, BUNDLED);
      const after = await snapshot(dbUrl);
      assert.deepEqual(after.counts, before.counts);
      assert.equal(after.dump, before.dump, "inspect_workflow wrote to the database");
    },
  ],

  [
    "a bundled workflow walks to completion; replays are byte-identical; rehydrate writes nothing",
    async (c, dbUrl) => {
      const inspected = await inspect(c, "waymark.bug_investigation");
      // Without context, `reproducible` and `isRegression` are unset: both conditional steps skip.
      const expected = inspected.steps.filter((s: Json) => !s.conditional).map((s: Json) =>
        s.stepId
      );
      assert.ok(expected.length >= 5);

      const startResult = await c.call("start_workflow", {
        workflowId: "waymark.bug_investigation",
        goal: "Find why the export button hangs",
      });
      const start = ok(startResult);
      assertTokens(start);
      assert.equal(start.isComplete, false);
      assert.equal(start.workflow.id, "waymark.bug_investigation");
      assert.equal(start.workflow.hash, inspected.workflow.workflowHash);
      assert.match(start.session.sessionId, /^ses_[0-9a-f]{16}$/);

      // Walk, keeping every whole result to compare replays against.
      const results: CallResult[] = [];
      const steps: Json[] = [start];
      const visited: string[] = [];
      let current = start;
      while (!current.isComplete) {
        assert.ok(visited.length < 30, "walk did not terminate");
        visited.push(current.pending.stepId);
        const next = await advance(c, current);
        results.push(next.result);
        current = next.data;
        steps.push(current);
        assert.equal(placeOf(current).runId, placeOf(start).runId);
        // an acknowledgement's answer says what changed: the run's facts came with the start
        assert.equal(current.session, undefined);
        assert.equal(current.workflow, undefined);
        assert.equal(current.preferences, undefined);
        assert.equal(current.forked, undefined, "a straight walk never forks");
      }
      assert.deepEqual(visited, expected);
      const last = steps[steps.length - 1]!;
      assert.equal(last.isComplete, true);
      assert.equal(last.pending, null);
      assert.equal(last.ackToken, undefined);
      const runs = await query(dbUrl, "SELECT status, node_count FROM runs WHERE run_id = ?", [
        runHex(start),
      ]);
      assert.deepEqual(runs, [{ status: "complete", node_count: expected.length + 1 }]);
      const notes = await query(dbUrl, "SELECT count(*) AS n FROM outputs WHERE run_id = ?", [
        runHex(start),
      ]);
      assert.equal(Number(notes[0]!.n), expected.length);

      // Replays: an early pair and the pair that completed the run, after the run moved on.
      const beforeReplay = await snapshot(dbUrl);
      for (const index of [0, 1, results.length - 1]) {
        const from = steps[index]!;
        const replayed = await c.call("continue_workflow", {
          stateToken: from.stateToken,
          ackToken: from.ackToken,
          output: { notesMarkdown: `Did ${from.pending.stepId}.` },
        });
        assert.equal(
          recorded(replayed),
          recorded(results[index]),
          `replay of pair ${index} differs`,
        );
        // The replay answers from the record even when the call's other arguments differ, and
        // says beside it that those were not recorded.
        const differentNotes = await c.call("continue_workflow", {
          stateToken: from.stateToken,
          ackToken: from.ackToken,
          output: { notesMarkdown: "something else entirely" },
        }) as CallResult & { _meta?: Record<string, unknown> };
        assert.equal(
          JSON.stringify(differentNotes.structuredContent),
          JSON.stringify(results[index]!.structuredContent),
        );
        assert.deepEqual(differentNotes.content[0], results[index]!.content[0]);
        assert.match(differentNotes.content[1]!.text, /^Not recorded/);
        assert.deepEqual(differentNotes._meta?.["waymark/replay"], { payloadDiffers: true });
      }
      const afterReplay = await snapshot(dbUrl);
      assert.deepEqual(afterReplay.counts, beforeReplay.counts);
      assert.equal(afterReplay.dump, beforeReplay.dump, "a replay wrote to the database");

      // Rehydrates: the final node, an earlier (non-tip) node, and one with ignored arguments.
      const before = await snapshot(dbUrl);
      const end = ok(await c.call("continue_workflow", { stateToken: last.stateToken }));
      assert.equal(end.isComplete, true);
      assert.equal(end.pending, null);
      assert.equal(placeOf(end).nodeId, placeOf(last).nodeId);
      assert.equal(end.tip, undefined, "the final node is a tip");
      assert.equal(end.recap.truncated, false);
      assert.deepEqual(
        end.recap.entries.map((e: Json) => e.notesMarkdown),
        [...expected].reverse().map((id) => `Did ${id}.`),
        "recap holds every step's notes, most recent first",
      );

      const mid = steps[1]!;
      const again = ok(await c.call("continue_workflow", { stateToken: mid.stateToken }));
      assert.equal(again.pending.stepId, mid.pending.stepId);
      assert.equal(placeOf(again).nodeId, placeOf(mid).nodeId);
      assert.notEqual(again.ackToken, mid.ackToken, "rehydrate mints a fresh ackToken");
      assert.equal(again.tip?.nodeId, placeOf(last).nodeId, "non-tip rehydrate points at the tip");
      assert.equal(again.tip?.isComplete, true);

      const ignored = ok(
        await c.call("continue_workflow", {
          stateToken: mid.stateToken,
          context: { reproducible: false },
          output: { notesMarkdown: "not recorded" },
        }),
      );
      assert.ok(ignored.warnings.some((w: Json) => w.code === "IGNORED_WITHOUT_ACK"));
      const after = await snapshot(dbUrl);
      assert.deepEqual(after.counts, before.counts, "rehydrate changed a row count");
      assert.equal(after.dump, before.dump, "rehydrate changed a row");
    },
  ],

  [
    "advancing an older node forks: forked.existingBranches and two step children",
    async (c, dbUrl) => {
      const a0 = ok(await c.call("start_workflow", { workflowId: "waymark.feature_planning" }));
      const a1 = (await advance(c, a0)).data;
      const a2 = (await advance(c, a1)).data;
      assert.equal(a1.forked, undefined);
      assert.equal(a2.forked, undefined);

      const rehydrated = ok(await c.call("continue_workflow", { stateToken: a0.stateToken }));
      assert.equal(rehydrated.pending.stepId, a0.pending.stepId);
      assert.notEqual(rehydrated.ackToken, a0.ackToken);
      assert.equal(rehydrated.tip?.nodeId, placeOf(a2).nodeId);
      assert.match(rehydrated.tip?.stateToken ?? "", /^st1_/);
      assert.match(rehydrated.tip?.ackToken ?? "", /^ack1_/);

      const forkResult = await c.call("continue_workflow", {
        stateToken: rehydrated.stateToken,
        ackToken: rehydrated.ackToken,
        output: { notesMarkdown: "Second take on the goal." },
      });
      const fork = ok(forkResult);
      assert.ok(fork.forked, "advancing a node with children must say it forked");
      assert.ok(fork.forked.existingBranches.length > 0);
      assert.deepEqual(
        fork.forked.existingBranches.map((b: Json) => [b.nodeId, b.kind, b.pendingStepId]),
        [[placeOf(a1).nodeId, "step", a1.pending.stepId]],
      );
      assert.notEqual(placeOf(fork).nodeId, placeOf(a1).nodeId);
      assert.equal(
        fork.pending.stepId,
        a1.pending.stepId,
        "the fork is at the same step as the old branch",
      );
      assert.equal(placeOf(fork).runId, placeOf(a0).runId);

      const children = await query(
        dbUrl,
        "SELECT node_id FROM nodes WHERE run_id = ? AND parent_id = ? AND node_kind = 'step' ORDER BY created_seq",
        [runHex(a0), placeOf(a0).nodeId],
      );
      assert.deepEqual(children.map((r) => r.node_id), [placeOf(a1).nodeId, placeOf(fork).nodeId]);

      // Replaying the fork's pair returns the fork (with its `forked` field), and the original
      // pair still returns the first branch.
      const replayFork = await c.call("continue_workflow", {
        stateToken: rehydrated.stateToken,
        ackToken: rehydrated.ackToken,
        output: { notesMarkdown: "Second take on the goal." },
      });
      assert.equal(recorded(replayFork), recorded(forkResult));
      const replayOriginal = ok(
        await c.call("continue_workflow", {
          stateToken: a0.stateToken,
          ackToken: a0.ackToken,
        }),
      );
      assert.equal(placeOf(replayOriginal).nodeId, placeOf(a1).nodeId);
      assert.equal(replayOriginal.forked, undefined);

      // Both branches carry on independently; the tip of the old one does not fork.
      const a3 = (await advance(c, a2)).data;
      assert.equal(a3.forked, undefined);
      const f2 = (await advance(c, fork)).data;
      assert.equal(f2.forked, undefined);
      const stepNodes = await query(
        dbUrl,
        "SELECT count(*) AS n FROM nodes WHERE run_id = ? AND node_kind = 'step'",
        [runHex(a0)],
      );
      assert.equal(Number(stepNodes[0]!.n), 6);
    },
  ],

  [
    "checkpoint_workflow is idempotent and a later ack attaches after it without forking",
    async (c, dbUrl) => {
      const n = ok(await c.call("start_workflow", { workflowId: "waymark.code_review" }));
      const args = {
        stateToken: n.stateToken,
        checkpointToken: n.checkpointToken,
        output: {
          notesMarkdown: "Read the PR description; waiting on CI.",
          artifacts: [{ kind: "link", url: "x" }],
        },
      };
      const first = await c.call("checkpoint_workflow", args);
      const cp = ok(first);
      assertTokens(cp);
      const checkpointId = cp.checkpoint?.nodeId as string;
      assert.match(checkpointId, /^[0-9a-f]{16}$/);
      assert.equal(cp.pending.stepId, n.pending.stepId, "a checkpoint does not advance");
      const second = await c.call("checkpoint_workflow", args);
      assert.equal(recorded(second), recorded(first), "checkpoint replay differs");

      const checkpoints = await query(
        dbUrl,
        "SELECT node_id, parent_id FROM nodes WHERE run_id = ? AND node_kind = 'checkpoint'",
        [runHex(n)],
      );
      assert.deepEqual(checkpoints, [{ node_id: checkpointId, parent_id: placeOf(n).nodeId }]);

      const acked = await advance(c, n);
      assert.equal("forked" in acked.data, false, "an ack after a checkpoint must not fork");
      const row = await query(
        dbUrl,
        "SELECT parent_id, node_kind FROM nodes WHERE run_id = ? AND node_id = ?",
        [runHex(n), placeOf(acked.data).nodeId],
      );
      assert.deepEqual(row, [{ parent_id: checkpointId, node_kind: "step" }]);

      // Still idempotent after the node moved on; still one checkpoint.
      const third = await c.call("checkpoint_workflow", args);
      assert.equal(recorded(third), recorded(first));
      const count = await query(
        dbUrl,
        "SELECT count(*) AS n FROM nodes WHERE run_id = ? AND node_kind = 'checkpoint'",
        [runHex(n)],
      );
      assert.equal(Number(count[0]!.n), 1);

      // The checkpoint's notes reach the recap of the branch after it.
      const rehydrated = ok(
        await c.call("continue_workflow", { stateToken: acked.data.stateToken }),
      );
      assert.deepEqual(
        rehydrated.recap.entries.map((e: Json) => [e.kind, e.notesMarkdown]),
        [["step", `Did ${n.pending.stepId}.`], ["checkpoint", args.output.notesMarkdown]],
      );
    },
  ],

  [
    "start_workflow context drives runCondition: the conditional step is skipped or kept",
    async (c) => {
      const inspected = await inspect(c, "waymark.code_review");
      const all = inspected.steps.map((s: Json) => s.stepId);
      const unconditional = inspected.steps.filter((s: Json) => !s.conditional).map((s: Json) =>
        s.stepId
      );
      assert.ok(
        unconditional.length < all.length,
        "waymark.code_review should have a conditional step",
      );

      const small = ok(
        await c.call("start_workflow", {
          workflowId: "waymark.code_review",
          context: { changeSize: "small" },
        }),
      );
      const smallWalk = await walk(c, small);
      assert.deepEqual(smallWalk.visited, unconditional);
      assert.equal(smallWalk.visited.includes("cross-cutting-impact"), false);

      const large = ok(
        await c.call("start_workflow", {
          workflowId: "waymark.code_review",
          context: { changeSize: "large" },
        }),
      );
      const largeWalk = await walk(c, large);
      assert.deepEqual(largeWalk.visited, all);
    },
  ],
];

for (const line of LINES) {
  // One server and home per line, not per case: each case reads only its own runs or compares
  // the database before and after itself, so the sharing is not what is tested; for the v1
  // client it is one `waymark serve` process instead of five.
  Deno.test(`[${line}] list, walk, fork, checkpoint and run conditions on one server`, async (t) => {
    await withServer(line, async (c, dbUrl) => {
      for (const [name, run] of CASES) {
        await t.step(name, () => run(c, dbUrl));
      }
    });
  });
}

Deno.test("a second checkpoint beside an existing branch does not hide that branch from rehydrate or ack", async () => {
  // Node N is acked after a checkpoint K1 (so its step child C hangs off K1). Rewinding to N and
  // checkpointing again adds K2 beside K1. N still has a step descendant C: rehydrating N must
  // still point at the tip, and acking N again starts a sibling branch and must say so.
  await withServer("v2", async (c) => {
    const n = ok(await c.call("start_workflow", { workflowId: "waymark.code_review" }));
    ok(
      await c.call("checkpoint_workflow", {
        stateToken: n.stateToken,
        checkpointToken: n.checkpointToken,
        output: { notesMarkdown: "first checkpoint" },
      }),
    );
    const child = (await advance(c, n)).data;
    const r1 = ok(await c.call("continue_workflow", { stateToken: n.stateToken }));
    assert.equal(r1.tip?.nodeId, placeOf(child).nodeId);

    ok(
      await c.call("checkpoint_workflow", {
        stateToken: r1.stateToken,
        checkpointToken: r1.checkpointToken,
        output: { notesMarkdown: "second checkpoint, after a rewind" },
      }),
    );
    const r2 = ok(await c.call("continue_workflow", { stateToken: n.stateToken }));
    assert.ok(
      r2.tip && r2.forked?.existingBranches.length > 0,
      "rehydrating N after a second checkpoint no longer reports its existing branch (tip/forked missing)",
    );
    const again = (await advance(c, r2)).data;
    assert.notEqual(
      placeOf(again).nodeId,
      placeOf(child).nodeId,
      "the second ack made a new branch",
    );
    assert.ok(
      again.forked?.existingBranches.length > 0,
      "acking N again started a second branch without reporting `forked`",
    );
  });
});
