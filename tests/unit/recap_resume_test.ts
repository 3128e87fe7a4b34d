/**
 * Recap budgets at their edges and resume's query parsing and ranking (FTS syntax in a query must
 * reach libSQL's FTS as plain words), on a libSQL `:memory:` store.
 */
import assert from "node:assert/strict";
import { recapMarker } from "../../engine/answers/text.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { buildRecap } from "../../engine/answers/recap.ts";
import { parseQuery, resumeSession } from "../../engine/use_cases/resume_session.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { parseRunLabel } from "../../engine/model/ids.ts";
import { memoryDeps } from "../helpers/memory.ts";
import { placeOf } from "../helpers/answers.ts";

Deno.test("a recap keeps whole entries up to the byte budget exactly, most recent first", async () => {
  const { store, deps } = await memoryDeps();
  try {
    const started = await startWorkflow(deps, { workflowId: "waymark.feature_planning" });
    assert.ok(started.ok);
    let at = started.value;
    // three notes of 100, 200 and 300 bytes (multi-byte characters count in bytes)
    for (const notes of ["é".repeat(50), "b".repeat(200), "c".repeat(300)]) {
      const next = await continueWorkflow(deps, {
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        output: { notesMarkdown: notes },
      });
      assert.ok(next.ok);
      at = next.value;
    }
    const tip = await store.getNode(parseRunLabel(placeOf(at).runId)!, placeOf(at).nodeId);
    assert.ok(tip);
    const whole = await buildRecap(store, tip, { budgetBytes: 600 });
    assert.deepEqual(
      [whole.entries.length, whole.truncated, whole.omitted, whole.usedBytes],
      [3, false, 0, 600],
    );
    const cut = await buildRecap(store, tip, { budgetBytes: 599 });
    assert.deepEqual(
      [cut.entries.length, cut.truncated, cut.omitted, cut.usedBytes],
      [2, true, 1, 500],
    );
    assert.equal(cut.entries[0]!.notesMarkdown[0], "c", "the most recent entry comes first");
    assert.equal(
      recapMarker(cut),
      "[recap truncated: policy most_recent_first kept the 2 most recent entries (500 of 599 bytes); 1 earlier entries omitted]",
    );
    // a budget smaller than the newest entry keeps nothing and says so
    const none = await buildRecap(store, tip, { budgetBytes: 10 });
    assert.deepEqual([none.entries.length, none.truncated, none.omitted], [0, true, 3]);
  } finally {
    await store.close();
  }
});

Deno.test("resume queries split into ids and words", () => {
  assert.deepEqual(parseQuery("ses_0123456789abcdef the Parser-bug, ÉTÉ x"), {
    ids: ["0123456789abcdef"],
    terms: ["0123456789abcdef", "the", "parser", "bug", "été"],
  });
  assert.deepEqual(parseQuery('"quoted" OR NEAR(a b)*'), {
    ids: [],
    terms: ["quoted", "or", "near"],
  });
});

Deno.test(`FTS syntax in a query is matched as words, and ties rank by recency then run id`, async () => {
  const { store, deps } = await memoryDeps();
  try {
    const ws = { workspace: "/w", gitBranch: "main", gitHeadSha: "a".repeat(40) };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await startWorkflow(deps, { workflowId: "waymark.code_review", goal: "same" }, {
        workspace: ws,
      });
      assert.ok(r.ok);
      ids.push(placeOf(r.value).runId);
    }
    const found = await resumeSession(deps, { query: 'same" OR "*' }, { workspace: ws });
    assert.ok(found.ok);
    assert.equal(found.value.candidates.length, 3);
    const expected = [...found.value.candidates].sort((a, b) =>
      a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.runId < b.runId ? -1 : 1
    );
    assert.deepEqual(found.value.candidates.map((c) => c.runId), expected.map((c) => c.runId));
    assert.deepEqual(new Set(ids), new Set(expected.map((c) => c.runId)));
    const again = await resumeSession(deps, { query: 'same" OR "*' }, { workspace: ws });
    assert.ok(again.ok);
    assert.deepEqual(
      again.value.candidates.map((c) => c.runId),
      found.value.candidates.map((c) => c.runId),
    );
    const other = await resumeSession(deps, { query: "same", limit: 2 }, {
      workspace: { workspace: "/elsewhere", gitBranch: null, gitHeadSha: null },
    });
    assert.ok(other.ok);
    assert.equal(other.value.candidates.length, 2);
    assert.equal(other.value.candidates[0]!.workspace.sameWorkspace, false);
    assert.deepEqual(
      other.value.searched,
      ["title"],
      "deeper layers are skipped once enough matched",
    );
  } finally {
    await store.close();
  }
});
