/**
 * The store contract: every case runs against the libSQL store on a real file and against
 * PostgreSQL, through the engine's use-cases, with the same assertions. What a case checks
 * is what the engine relies on (forks and preferred tips, byte-identical replays, rehydrates
 * and replays that write nothing, checkpoints that never fork, blocked attempts that are not
 * branches, recaps, resume layers and ranking, atomic writes, corrupt sessions). Search
 * relevance differs between the stores by design (FTS5 bm25 vs `ts_rank`), so no case depends on
 * it beyond what both agree on.
 * @module
 */
import assert from "node:assert/strict";
import { hashJson } from "../../engine/common/hash.ts";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { InvariantViolationError } from "../../engine/model/result.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { resumeSession } from "../../engine/use_cases/resume_session.ts";
import type { CompiledWorkflow } from "../../engine/workflow/compiled.ts";
import { parseRunLabel, parseSessionLabel } from "../../engine/model/ids.ts";
import {
  ack,
  checkpoint,
  engineDeps,
  rehydrate,
  start,
  type Subject,
  SUBJECTS,
  testWorkflows,
  value,
  walk,
} from "./subjects.ts";
import { placeOf } from "../helpers/answers.ts";
import type { Kysely } from "kysely";
import type { Database } from "../../store/sql/database.ts";

/** The stored ids of a response's session, run and node. */
function ids(r: StepResponse): { sessionId: string; runId: string; nodeId: string } {
  return {
    sessionId: parseSessionLabel(r.session!.sessionId)!,
    runId: parseRunLabel(placeOf(r).runId)!,
    nodeId: placeOf(r).nodeId,
  };
}

const node = (r: StepResponse) => placeOf(r).nodeId;
const WS = (workspace: string) => ({ workspace, gitBranch: null, gitHeadSha: null });

type Case = (subject: Subject, deps: EngineDeps) => Promise<void>;

const CASES: Record<string, Case> = {
  async "a run walks to completion with one projection row per fact"({ store }, deps) {
    const root = await start(deps, "project.plain", { workspace: "/w" });
    const done = (await walk(deps, root, { steps: 3, prefix: "did step" }))[2]!;
    assert.deepEqual([done.isComplete, done.pending, done.ackToken], [true, null, undefined]);
    const { sessionId, runId } = ids(done);
    assert.deepEqual(await store.counts(), {
      events: 5 + 3 * 4,
      sessions: 1,
      runs: 1,
      workflow_snapshots: 1,
      nodes: 4,
      edges: 3,
      attempts: 3,
      outputs: 3,
    });
    const tip = (await store.getNode(runId, node(done)))!;
    assert.deepEqual(
      [tip.nodeKind, tip.depth, tip.stepCount, tip.edgeKind, tip.notesMarkdown, tip.notesStepId],
      ["step", 3, 4, "acked_step", "did step 3", "s3"],
    );
    assert.deepEqual(await store.getRun(runId), {
      runId,
      sessionId,
      workflowId: "project.plain",
      workflowHash: root.workflow!.hash,
      corrupt: false,
      status: "complete",
      observed: WS("/w"),
      owner: null,
      access: null,
    });
    const session = (await store.getSession(sessionId))!;
    assert.deepEqual(
      [session.title, session.sessionKind, session.health, session.eventCount],
      ["Contract project.plain", "workflow", "healthy", 17],
    );
    // the log has no gap: its rows sit at positions 1 to the session's count, in order
    const logged = await (store as unknown as { db: Kysely<Database> }).db.selectFrom("events")
      .select("position").where("session_id", "=", sessionId).orderBy("seq").execute();
    assert.deepEqual(logged.map((r) => r.position), Array.from({ length: 17 }, (_, i) => i + 1));
    const [run] = session.runs;
    assert.deepEqual(
      [run!.status, run!.nodeCount, run!.tipNodeId, run!.tipPendingStepId, run!.latestNotes],
      ["complete", 4, node(done), null, "did step 3"],
    );
    const pinned = (await testWorkflows()).workflows.find((w) => w.id === "project.plain")!;
    assert.deepEqual(
      await store.getSnapshot(root.workflow!.hash),
      JSON.parse(JSON.stringify(pinned.compiled)),
    );
    // A second run of the same workflow pins no second snapshot and lists first.
    const second = await start(deps, "project.plain");
    assert.equal((await store.counts()).workflow_snapshots, 1);
    const listed = await store.listSessions({ limit: 10, offset: 0 });
    assert.deepEqual(listed.map((s) => s.sessionId), [ids(second).sessionId, sessionId]);
    assert.deepEqual(listed.map((s) => s.runs), [[], []]);
    assert.equal((await store.listSessions({ limit: 10, offset: 1 })).length, 1);
  },

  async "a replay returns the recorded response byte for byte and writes nothing"({ store }, deps) {
    const root = await start(deps, "project.plain");
    const args = {
      stateToken: root.stateToken,
      ackToken: root.ackToken!,
      output: { notesMarkdown: "one" },
    };
    const first = value(await continueWorkflow(deps, args));
    const before = await store.counts();
    const again = value(await continueWorkflow(deps, args));
    assert.equal(JSON.stringify(again), JSON.stringify(first));
    const noted = await checkpoint(deps, first, "a note");
    const middle = await store.counts();
    assert.deepEqual(middle, {
      ...before,
      events: before.events + 4,
      nodes: before.nodes + 1,
      edges: before.edges + 1,
      attempts: before.attempts + 1,
      outputs: before.outputs + 1,
    });
    assert.equal(JSON.stringify(await checkpoint(deps, first, "a note")), JSON.stringify(noted));
    assert.deepEqual(await store.counts(), middle);
  },

  async "two writers racing one ack record one advance and answer alike"({ store }, deps) {
    const root = await start(deps, "project.plain");
    const args = {
      stateToken: root.stateToken,
      ackToken: root.ackToken!,
      output: { notesMarkdown: "race" },
    };
    const [a, b] = await Promise.all([continueWorkflow(deps, args), continueWorkflow(deps, args)]);
    assert.equal(JSON.stringify(value(a)), JSON.stringify(value(b)));
    const counts = await store.counts();
    assert.deepEqual([counts.nodes, counts.attempts], [2, 1]);
  },

  async "an ack from an old node forks beside the branches and names the preferred tip"(
    { store },
    deps,
  ) {
    const root = await start(deps, "project.plain");
    const [a1, a2] = await walk(deps, root, { steps: 2, prefix: "first branch" });
    const { runId, nodeId: rootId } = ids(root);
    const back = await rehydrate(deps, root);
    assert.equal(back.tip?.nodeId, node(a2!));
    assert.deepEqual(back.forked?.existingBranches.map((b) => b.nodeId), [node(a1!)]);
    assert.equal(back.forked?.preferredTipNodeId, node(a2!));
    assert.deepEqual(
      back.forked?.downstreamRecap?.entries.map((e) => e.notesMarkdown),
      ["first branch 2", "first branch 1"],
    );
    const b1 = await ack(deps, back, "second branch 1");
    assert.equal(b1.pending?.stepId, "s2");
    assert.deepEqual(b1.forked?.existingBranches.map((b) => b.nodeId), [node(a1!)]);
    assert.equal(b1.forked?.preferredTipNodeId, node(a2!));
    const children = await store.getChildren(runId, rootId);
    assert.deepEqual(children.map((c) => [c.nodeId, c.parentId]), [
      [node(a1!), rootId],
      [node(b1), rootId],
    ]);
    assert.equal((await store.getPreferredTip(runId, rootId)).nodeId, node(b1));
    assert.equal((await store.getPreferredTip(runId, node(a1!))).nodeId, node(a2!));
    const later = await rehydrate(deps, root);
    assert.deepEqual(later.forked?.existingBranches.map((b) => b.nodeId), [node(a1!), node(b1)]);
    assert.deepEqual([later.forked?.preferredTipNodeId, later.tip?.nodeId], [node(b1), node(b1)]);
    const atTip = await rehydrate(deps, a2!);
    assert.deepEqual([atTip.forked, atTip.tip], [undefined, undefined]);
  },

  async "a rehydrate writes nothing"({ store }, deps) {
    const root = await start(deps, "project.plain");
    const [a1] = await walk(deps, root, { steps: 1, prefix: "step" });
    const { sessionId } = ids(root);
    const snapshot = async () => ({
      counts: await store.counts(),
      session: await store.getSession(sessionId),
      list: await store.listSessions({ limit: 5, offset: 0 }),
    });
    const before = await snapshot();
    await rehydrate(deps, root);
    await rehydrate(deps, a1!);
    const ignored = value(
      await continueWorkflow(deps, { stateToken: a1!.stateToken, output: { notesMarkdown: "x" } }),
    );
    assert.ok(ignored.warnings!.some((w) => w.code === "IGNORED_WITHOUT_ACK"));
    assert.deepEqual(await snapshot(), before);
  },

  async "a checkpoint never forks: it attaches after the node's last checkpoint"({ store }, deps) {
    const root = await start(deps, "project.plain");
    const [a1] = await walk(deps, root, { steps: 1, prefix: "step" });
    const { runId } = ids(root);
    const c1 = await checkpoint(deps, a1!, "note one");
    const c2 = await checkpoint(deps, await rehydrate(deps, a1!), "note two");
    assert.deepEqual([c1.forked, c2.forked], [undefined, undefined]);
    const [c1Id, c2Id] = [c1.checkpoint!.nodeId, c2.checkpoint!.nodeId];
    assert.deepEqual((await store.getChildren(runId, node(a1!))).map((c) => c.nodeId), [c1Id]);
    const second = (await store.getNode(runId, c2Id))!;
    assert.deepEqual(
      [second.parentId, second.nodeKind, second.edgeKind, second.depth, second.stepCount],
      [c1Id, "checkpoint", "checkpoint", 3, 2],
    );
    // An ack from the checkpointed node attaches at the end of the chain, without forking.
    const a2 = await ack(deps, a1!, "step 2");
    assert.equal(a2.forked, undefined);
    assert.equal((await store.getNode(runId, node(a2)))!.parentId, c2Id);
    const recap = (await rehydrate(deps, a2)).recap!;
    assert.deepEqual(recap.entries.map((e) => [e.kind, e.notesMarkdown]), [
      ["step", "step 2"],
      ["checkpoint", "note two"],
      ["checkpoint", "note one"],
      ["step", "step 1"],
    ]);
    // A checkpoint at a node that already has a step child does not fork either.
    const c3 = await checkpoint(deps, await rehydrate(deps, root), "late note");
    assert.equal(c3.forked, undefined);
    const rootKids = await store.getChildren(runId, node(root));
    assert.deepEqual(rootKids.map((c) => c.nodeKind), ["step", "checkpoint"]);
  },

  async "a blocked attempt is recorded but is not a branch"({ store }, deps) {
    const root = await start(deps, "project.gate");
    const { runId, sessionId, nodeId: rootId } = ids(root);
    const before = await store.counts();
    const blocked = await ack(deps, root, "not yet");
    assert.deepEqual([blocked.kind, blocked.pending?.stepId, node(blocked)], [
      "blocked",
      "write",
      rootId,
    ]);
    const attemptId = blocked.blockedAttempt!.nodeId;
    const after = await store.counts();
    assert.deepEqual(
      [after.nodes, after.edges, after.attempts, after.outputs, after.events],
      [before.nodes + 1, before.edges, before.attempts + 1, before.outputs + 1, before.events + 3],
    );
    const attempt = (await store.getNode(runId, attemptId))!;
    assert.deepEqual(
      [
        attempt.nodeKind,
        attempt.parentId,
        attempt.edgeKind,
        attempt.notesMarkdown,
        attempt.stepCount,
      ],
      ["blocked_attempt", rootId, null, "not yet", 1],
    );
    assert.deepEqual(await store.getChildren(runId, rootId), []);
    assert.equal((await store.getPreferredTip(runId, rootId)).nodeId, rootId);
    const run = (await store.getSession(sessionId))!.runs[0]!;
    assert.deepEqual([run.tipNodeId, run.nodeCount, run.status], [rootId, 2, "running"]);
    assert.equal(JSON.stringify(await ack(deps, root, "not yet")), JSON.stringify(blocked));
    const retry = await rehydrate(deps, blocked);
    assert.deepEqual([retry.forked, retry.tip, retry.recap?.entries], [undefined, undefined, []]);
    const passed = await ack(deps, retry, "DONE now");
    assert.deepEqual([passed.kind, passed.forked, passed.pending?.stepId], [
      "ok",
      undefined,
      "end",
    ]);
    assert.deepEqual((await store.getChildren(runId, rootId)).map((c) => c.nodeId), [node(passed)]);
    assert.equal((await store.getPreferredTip(runId, rootId)).nodeId, node(passed));
  },

  async "recaps list notes newest first within the byte budget and the read window"(
    { store },
    deps,
  ) {
    let at = await start(deps, "project.plain");
    const { runId } = ids(at);
    for (const c of ["a", "b", "c"]) at = await ack(deps, at, c.repeat(1500));
    const recap = (await rehydrate(deps, at)).recap!;
    assert.deepEqual(recap.entries.map((e) => e.notesMarkdown[0]), ["c", "b"]);
    assert.deepEqual(
      [recap.truncated, recap.omitted, recap.omittedExact, recap.usedBytes],
      [true, 1, true, 3000],
    );
    const notes = await store.getAncestorNotes(runId, node(at), 2);
    assert.deepEqual(notes.map((n) => n.notesMarkdown?.[0]), ["c", "b"]);
    const all = await store.getAncestorNotes(runId, node(at), 10);
    assert.deepEqual(all.map((n) => [n.nodeKind, n.notesStepId]), [
      ["step", "s3"],
      ["step", "s2"],
      ["step", "s1"],
      ["step", null],
    ]);
    // Beyond the 64 nodes a recap reads, older entries count as omitted, not exactly.
    const long = await start(deps, "project.long");
    const tip = (await walk(deps, long, { steps: 66, prefix: "long" }))[65]!;
    const window = (await rehydrate(deps, tip)).recap!;
    assert.equal(window.entries.length, 64);
    assert.deepEqual(
      [window.entries[0]!.notesMarkdown, window.entries[63]!.notesMarkdown],
      ["long 66", "long 3"],
    );
    assert.deepEqual([window.truncated, window.omitted, window.omittedExact], [true, 3, false]);
  },

  async "resume searches layer by layer and ranks by workspace, layer, then recency"(_, deps) {
    const a = await start(deps, "project.plain", { goal: "alpha parser", workspace: "/wa" });
    const b = await ack(
      deps,
      await start(deps, "project.plain", { goal: "beta", workspace: "/wb" }),
      "the parser crashed",
    );
    const c0 = await start(deps, "project.plain", { goal: "gamma", workspace: "/wc" });
    const c = await ack(deps, await ack(deps, c0, "parser fixed"), "moved on to docs");
    const run = (r: StepResponse) => placeOf(r).runId;
    const search = async (
      query: string | undefined,
      options: { limit?: number; ws?: string } = {},
    ) =>
      value(
        await resumeSession(deps, { query, limit: options.limit }, {
          workspace: options.ws === undefined ? undefined : WS(options.ws),
        }),
      );
    const found = await search("parser");
    assert.deepEqual(found.searched, ["title", "tip_notes", "deep"]);
    assert.deepEqual(found.candidates.map((x) => [x.runId, x.match, x.rank]), [
      [run(a), "title", 1],
      [run(b), "tip_notes", 2],
      [run(c), "deep", 3],
    ]);
    for (const x of found.candidates) assert.match(x.snippet ?? "", /«parser»/i);
    assert.deepEqual(
      [
        found.candidates[2]!.tip.nodeId,
        found.candidates[2]!.tip.pendingStepId,
        found.candidates[2]!.status,
      ],
      [node(c), "s3", "running"],
    );
    const here = await search("parser", { ws: "/wc" });
    assert.deepEqual(here.candidates.map((x) => x.runId), [run(c), run(a), run(b)]);
    assert.equal(here.candidates[0]!.workspace.sameWorkspace, true);
    const one = await search("parser", { limit: 1 });
    assert.deepEqual([one.searched, one.candidates.map((x) => x.runId)], [["title"], [run(a)]]);
    const byId = await search(b.session!.sessionId);
    assert.deepEqual([byId.searched[0], byId.candidates.map((x) => [x.runId, x.match])], [
      "id",
      [[run(b), "id"]],
    ]);
    const recent = await search(undefined);
    assert.deepEqual(recent.searched, ["recent"]);
    assert.deepEqual(recent.candidates.map((x) => x.runId), [run(c), run(b), run(a)]);
    assert.equal(recent.candidates[0]!.snippet, "moved on to docs");
    const mine = await search(undefined, { ws: "/wa" });
    assert.deepEqual(mine.candidates.map((x) => x.runId), [run(a), run(c), run(b)]);
  },

  async "within a layer, a text that matches more often ranks first"(_, deps) {
    // Same length, so bm25 and ts_rank agree; recency would say otherwise.
    // The other runs keep the word rare, so bm25's idf is positive.
    for (let i = 0; i < 4; i++) await start(deps, "project.plain", { goal: "unrelated work" });
    const twice = await start(deps, "project.plain", { goal: "parser parser tool" });
    const once = await start(deps, "project.plain", { goal: "parser other tool" });
    const found = value(await resumeSession(deps, { query: "parser" }));
    assert.deepEqual(
      found.candidates.map((x) => x.runId),
      [placeOf(twice).runId, placeOf(once).runId],
    );
    assert.ok(found.candidates[0]!.updatedAt < found.candidates[1]!.updatedAt);
  },

  async "search folds case and accents and reads a word with underscores as a phrase"(_, deps) {
    const run = await start(deps, "project.plain", { goal: "Déjà vu in the code review" });
    const hits = async (query: string) =>
      value(await resumeSession(deps, { query })).candidates.map((x) => x.runId);
    assert.deepEqual(await hits("DEJA"), [placeOf(run).runId]);
    assert.deepEqual(await hits("code_review"), [placeOf(run).runId]);
    assert.deepEqual(await hits("review_code"), []);
  },

  async "a failed write leaves nothing and a taken attempt key fails the write"({ store }, deps) {
    const before = await store.counts();
    const doomed = "f".repeat(16);
    await assert.rejects(
      store.write(async (tx) => {
        await tx.append([{ kind: "session_created", sessionId: doomed, title: "doomed" }]);
        assert.equal((await tx.getSession(doomed))?.title, "doomed", "visible inside the write");
        throw new Error("boom");
      }),
      /boom/,
    );
    assert.deepEqual(await store.counts(), before);
    assert.equal(await store.getSession(doomed), null);
    const root = await start(deps, "project.plain");
    const { sessionId, runId, nodeId } = ids(root);
    const attempt = {
      kind: "advance_recorded" as const,
      sessionId,
      runId,
      nodeId,
      attemptId: "a".repeat(12),
      outcome: "advanced" as const,
      resultNodeId: nodeId,
      response: "{}",
    };
    assert.equal(await store.write(async (tx) => (await tx.append([attempt]), 42)), 42);
    const taken = await store.counts();
    await assert.rejects(store.write((tx) => tx.append([{ ...attempt, response: '{"x":1}' }])));
    assert.deepEqual(await store.counts(), taken);
    const kept = await store.getAttempt(runId, nodeId, attempt.attemptId, "ack");
    assert.equal(kept?.response, "{}");
    // a batch for a session no longer stored (removed after its node was read) is refused whole
    const gone = { ...attempt, sessionId: "e".repeat(16), attemptId: "b".repeat(12) };
    await assert.rejects(store.write((tx) => tx.append([gone])), /no longer stored/);
    assert.deepEqual(await store.counts(), taken);
    await start(deps, "project.plain"); // the store still takes writes
  },

  async "a corrupt session is refused by execution calls, replays included"(subject, deps) {
    const { store } = subject;
    const root = await start(deps, "project.plain");
    const [a1] = await walk(deps, root, { steps: 1, prefix: "step" });
    const { sessionId, runId } = ids(root);
    await subject.corrupt(sessionId);
    const refused = [
      await continueWorkflow(deps, { stateToken: a1!.stateToken, ackToken: a1!.ackToken }),
      await continueWorkflow(deps, { stateToken: a1!.stateToken }),
      await continueWorkflow(deps, { stateToken: root.stateToken, ackToken: root.ackToken }),
    ];
    for (const r of refused) assert.equal(!r.ok && r.error.code, "STORAGE_CORRUPTION_DETECTED");
    assert.equal((await store.getRun(runId))?.corrupt, true);
    assert.equal((await store.getSession(sessionId))?.health, "corrupt");
    const listed = value(await resumeSession(deps, {}));
    assert.equal(listed.candidates[0]?.corrupt, true);
  },

  async "records read back are copies the caller cannot change"({ store }, deps) {
    const root = await start(deps, "project.plain", { workspace: "/w" });
    const { sessionId, runId, nodeId } = ids(root);
    const read = (await store.getNode(runId, nodeId))!;
    read.context.x = 1;
    read.preferences.autonomy = "full_auto_never_stop";
    (await store.getSession(sessionId))!.runs.pop();
    (await store.getRun(runId))!.observed!.workspace = "/elsewhere";
    const again = (await store.getNode(runId, nodeId))!;
    assert.deepEqual([again.context, again.preferences.autonomy], [{}, "guided"]);
    assert.equal((await store.getSession(sessionId))!.runs.length, 1);
    assert.equal((await store.getRun(runId))!.observed!.workspace, "/w");
  },

  async "a format-1 snapshot reads back in the current compiled format"({ store }) {
    const [sessionId, runId] = ["5e55000000000001", "a000000000000001"];
    const formatOne = {
      format: 1,
      id: "user.old",
      name: "Old",
      description: "Flat steps, no kinds.",
      version: "1",
      metaGuidance: [],
      steps: [{ id: "a", title: "A", promptTemplate: "Do it.", requireConfirmation: false }],
    };
    // Pinned under the hash a format-1 server gave it: the hash of that stored form.
    const workflowHash = await hashJson(formatOne);
    await store.write((tx) =>
      tx.append([
        { kind: "session_created", sessionId, title: "Old" },
        { kind: "run_started", sessionId, runId, workflowId: "user.old", workflowHash, goal: null },
        {
          kind: "workflow_pinned",
          sessionId,
          runId,
          workflowHash,
          compiled: formatOne as unknown as CompiledWorkflow,
        },
      ])
    );
    assert.deepEqual(await store.getSnapshot(workflowHash), {
      ...formatOne,
      format: 2,
      kind: "workflow",
      capabilities: {},
      features: [],
      contracts: {},
      steps: [{ kind: "step", ...formatOne.steps[0] }],
    });
  },

  async "a snapshot whose content does not hash to its key is refused as an invariant violation"(
    { store },
    deps,
  ) {
    const s0 = await start(deps, "project.plain");
    const [sessionId, runId] = ["5e55000000000002", "a000000000000002"];
    const compiled = (await store.getSnapshot(s0.workflow!.hash))!;
    const workflowHash = `sha256:${"0".repeat(64)}`;
    assert.equal(await store.hasSnapshot(workflowHash), false);
    await store.write((tx) =>
      tx.append([
        { kind: "session_created", sessionId, title: "Mislabelled" },
        {
          kind: "run_started",
          sessionId,
          runId,
          workflowId: "project.plain",
          workflowHash,
          goal: null,
        },
        { kind: "workflow_pinned", sessionId, runId, workflowHash, compiled },
      ])
    );
    // only whether it is pinned: nothing decoded, so a start does not pay for the check
    assert.equal(await store.hasSnapshot(workflowHash), true);
    await assert.rejects(() => store.getSnapshot(workflowHash), (error: Error) => {
      assert.ok(error instanceof InvariantViolationError);
      assert.deepEqual(error.seen, {
        invariant: "snapshot_hash",
        workflowHash,
        contentHash: s0.workflow!.hash,
      });
      return true;
    });
  },
};

for (const [storeName, open] of Object.entries(SUBJECTS)) {
  for (const [name, body] of Object.entries(CASES)) {
    Deno.test(`${storeName}: ${name}`, async () => {
      const subject = await open();
      try {
        await body(subject, await engineDeps(subject.store));
      } finally {
        await subject.cleanup();
      }
    });
  }
}
