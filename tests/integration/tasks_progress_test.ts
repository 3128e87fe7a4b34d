/**
 * What a host shows of a run, against what the viewer shows of it: the progress object in
 * `_meta` follows the run's preferred branch exactly as the viewer draws it (steps it completed
 * are done, a step behind a false condition is skipped, a loop shows its iteration, and a
 * rewind's new branch replaces the old one's steps); a task cancelled through the client is an
 * abort the viewer shows; a subscriber hears of appends made by another process; and the task
 * a call carries (built from what the call knows) is the one a fresh read of the store builds.
 */
import assert from "node:assert/strict";
import { openWaymark } from "../../mod.ts";
import { RELATED_TASK_META_KEY } from "npm:@modelcontextprotocol/server@2.4.0";
import { parseRunLabel, parseSessionLabel } from "../../engine/model/ids.ts";
import { taskView } from "../../engine/use_cases/task_views.ts";
import { CALL_PLAN_STEPS, callMeta } from "../../tools/tasks/wire.ts";
import { plainWorkflow } from "../helpers/workflows.ts";
import { createViewerApp } from "../../web/mod.ts";
import { loadSessionView, type SessionView } from "../../web/model.ts";
import { connect, connectRich, ok, type TestClient } from "../helpers/server.ts";
import { ModernClient, taskHome } from "../helpers/tasks.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Any = Record<string, any>;

/** A call's structured answer and its `_meta`. */
async function call(agent: TestClient, name: string, args: Any): Promise<{ r: Any; meta: Any }> {
  const result = await agent.call(name, args) as Any;
  return { r: ok(result as never), meta: result._meta ?? {} };
}

/** The statuses the viewer's view of the preferred branch implies, step by step. */
function viewerStatuses(view: SessionView): Record<string, string> {
  const done = new Set(view.branch!.entries.map((e) => e.label.stepId).filter((s) => s !== null));
  const pending = view.node!.pending?.stepId ?? null;
  const list = view.pinned!.list;
  const at = pending === null ? list.length : list.findIndex((s) => s.id === pending);
  return Object.fromEntries(list.map((step, i) => [
    step.id,
    step.id === pending ? "current" : done.has(step.id) ? "done" : i < at ? "skipped" : "pending",
  ]));
}

const hostStatuses = (meta: Any) =>
  Object.fromEntries((meta["_workflow.progress"].steps as Any[]).map((s) => [s.name, s.status]));

Deno.test("the progress object matches the viewer's branch through loops, skipped steps and a fork", async () => {
  const home = await taskHome();
  const agent = await connect(home.home);
  const waymark = await openWaymark({ home: home.home, dbUrl: home.dbUrl });
  let startedIn = "";
  const viewOf = async (r: Any) =>
    await loadSessionView(
      waymark.store.db,
      parseSessionLabel(r.session?.sessionId ?? startedIn)!,
      parseRunLabel(placeOf(r).runId)!,
      null,
    ) as SessionView;
  try {
    const { r: start } = await call(agent, "start_workflow", { workflowId: "user.deploy" });
    startedIn = start.session.sessionId; // an acknowledgement's answer leaves the session out
    const ack = (r: Any, extra: Any = {}) =>
      call(agent, "continue_workflow", {
        stateToken: r.stateToken,
        ackToken: r.ackToken,
        ...extra,
      });
    const { r: decide } = await ack(start, { output: { notesMarkdown: "prepared" } });
    const { r: round1 } = await ack(decide, { context: { target: "prod" } });
    await ack(round1); // round 2 on the first branch
    // a rewind to `decide`: a fresh ack there starts a second branch
    const { r: again } = await call(agent, "continue_workflow", { stateToken: decide.stateToken });
    const { r: forked } = await ack(again, { context: { target: "staging" } });
    assert.ok(forked.forked, "a fork");
    const { r: tip, meta } = await ack(forked, { output: { notesMarkdown: "round one" } });
    const view = await viewOf(tip);
    assert.equal(view.graph!.branches.length, 2, "the viewer draws both branches");
    assert.equal(view.graph!.preferredTipId, placeOf(tip).nodeId);
    assert.deepEqual(hostStatuses(meta), viewerStatuses(view));
    assert.deepEqual(hostStatuses(meta), {
      prepare: "done",
      optional: "skipped",
      decide: "done",
      round: "current",
      finish: "pending",
    });
    const round = meta["_workflow.progress"].steps.find((s: Any) => s.name === "round");
    assert.equal(round.loop.iteration, (view.node!.pending as Any).loop.iteration);
    assert.equal(round.loop.iteration, 2);
    assert.deepEqual(meta["_workflow.result.round"], { notesPreview: "round one", artifacts: [] });
    assert.equal(meta["_workflow.task"].status, "working");

    const { r: finish } = await ack(tip);
    const { r: end, meta: last } = await ack(finish);
    assert.equal(end.isComplete, true);
    assert.deepEqual(hostStatuses(last), viewerStatuses(await viewOf(end)));
    assert.equal(last["_workflow.task"].status, "completed");
  } finally {
    await agent.close();
    await waymark.close();
    await home.cleanup();
  }
});

Deno.test("a task cancelled through the client is an abort the viewer shows, durably", async () => {
  const home = await taskHome();
  const client = new ModernClient(home.home);
  let sessionId = "";
  let taskId = "";
  try {
    const created = await client.call("start_workflow", { workflowId: "user.deploy" });
    taskId = created.taskId;
    sessionId = created._meta["waymark/result"].session.sessionId;
    await client.result("tasks/cancel", { taskId });
  } finally {
    await client.close();
  }
  const waymark = await openWaymark({ home: home.home, dbUrl: home.dbUrl });
  try {
    const viewer = createViewerApp({ db: waymark.store.db, allowedHosts: () => ["127.0.0.1:1"] });
    const detail = await (await viewer.app.request(`/api/sessions/${sessionId}`, {
      headers: { host: "127.0.0.1:1" },
    })).json();
    viewer.close();
    const run = detail.runs.find((r: Any) => r.runId === parseRunLabel(taskId));
    assert.equal(run.status, "aborted");
    const tip = await waymark.store.getNodeEvents(run.runId, run.lastNodeId);
    // The root also holds the workspace's snapshot at start (this checkout is a git repository).
    const kinds = tip.map((e) => e.kind).filter((kind) => kind !== "snapshot_recorded");
    assert.deepEqual(kinds, ["run_aborted"]);
    const abort = tip.find((e) => e.kind === "run_aborted") as Any;
    assert.match(abort.explanation, /tasks\/cancel/);
  } finally {
    await waymark.close();
    await home.cleanup();
  }
});

Deno.test("a subscriber hears of appends another process makes, within the poll interval", async () => {
  const home = await taskHome();
  const watcher = await connectRich(home.home);
  const writer = await connect(home.home);
  try {
    const { r: start } = await call(writer, "start_workflow", { workflowId: "user.deploy" });
    const uri = `waymark://sessions/${start.session.sessionId}`;
    await watcher.client.subscribeResource({ uri });
    await new Promise((r) => setTimeout(r, 1_500)); // the first poll notes the session's count
    const before = watcher.notifications.length;
    const at = Date.now();
    await call(writer, "continue_workflow", {
      stateToken: start.stateToken,
      ackToken: start.ackToken,
    });
    while (
      !watcher.notifications.slice(before).some((n) =>
        n.method === "notifications/resources/updated" && n.params?.uri === uri
      )
    ) {
      assert.ok(Date.now() - at < 5_000, "no resources/updated within 5 s");
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await watcher.close();
    await writer.close();
    await home.cleanup();
  }
});

Deno.test("the task a call carries is the one read back from the store, call after call", async () => {
  const home = await taskHome();
  const agent = await connect(home.home);
  const waymark = await openWaymark({ home: home.home, dbUrl: home.dbUrl });
  // What a fresh reader of the store says of the run: no call's own knowledge, nothing kept.
  const readBack = async (r: Any) => {
    const listing = await waymark.deps.store.getRunListing(parseRunLabel(placeOf(r).runId)!);
    return callMeta(await taskView(waymark.deps, listing!, { progress: true }));
  };
  const same = async (step: string, r: Any, meta: Any) => {
    const { [RELATED_TASK_META_KEY]: _related, ...carried } = meta;
    assert.deepEqual(carried, await readBack(r), step);
  };
  try {
    const { r: start, meta: m0 } = await call(agent, "start_workflow", {
      workflowId: "user.deploy",
    });
    await same("start", start, m0);
    const ack = (r: Any, extra: Any = {}) =>
      call(agent, "continue_workflow", {
        stateToken: r.stateToken,
        ackToken: r.ackToken,
        ...extra,
      });
    const output = { notesMarkdown: "prepared", artifacts: [{ kind: "plan", steps: 2 }] };
    const { r: decide, meta: m1 } = await ack(start, { output });
    await same("an advance with an artifact", decide, m1);
    // a checkpoint between two acks: the next ack hangs below it
    await call(agent, "checkpoint_workflow", {
      stateToken: decide.stateToken,
      checkpointToken: decide.checkpointToken,
      output: { notesMarkdown: "halfway" },
    });
    const { r: round1, meta: m2 } = await ack(decide, { context: { target: "prod" } });
    await same("an advance after a checkpoint", round1, m2);
    const { r: round2, meta: m3 } = await ack(round1, { output: { notesMarkdown: "round 1" } });
    await same("an advance in a loop", round2, m3);
    const { r: replayed, meta: m4 } = await ack(round1, { output: { notesMarkdown: "round 1" } });
    await same("a replay", replayed, m4);
    const { r: again } = await call(agent, "continue_workflow", { stateToken: decide.stateToken });
    const { r: forked, meta: m5 } = await ack(again, { context: { target: "staging" } });
    await same("a fork", forked, m5);
  } finally {
    await agent.close();
    await waymark.close();
    await home.cleanup();
  }
});

/**
 * Advances into the 300-step plan: past the engine's own window start (a quarter of its 100 steps
 * before the current one), so the call's window is cut from a window that already omits steps
 * before it. How far past is not the proof (it was 150, which cost 110 more advances).
 */
const ADVANCES = 40; // the current step is then s041

Deno.test("a call's progress is a window around the current step; tasks/get has the whole plan", async () => {
  const home = await taskHome();
  await Deno.writeTextFile(`${home.home}/workflows/long.json`, plainWorkflow("user.long", 300));
  const client = new ModernClient(home.home);
  try {
    const created = await client.call("start_workflow", { workflowId: "user.long" });
    let at = created._meta["waymark/result"];
    let answer: Any = {};
    for (let i = 0; i < ADVANCES; i++) {
      answer = await client.call("continue_workflow", {
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        output: { notesMarkdown: `Did ${at.pending.stepId}.` },
      });
      at = answer.structuredContent;
    }
    const progress = answer._meta["_workflow.progress"];
    const names = progress.steps.map((s: Any) => `${s.name}:${s.status}`);
    assert.equal(progress.steps.length, CALL_PLAN_STEPS);
    assert.deepEqual(names.slice(0, 3), ["s039:done", "s040:done", "s041:current"]);
    assert.deepEqual(progress.omitted, { before: 38, after: 300 - 38 - CALL_PLAN_STEPS });
    assert.equal(progress.note, undefined, "the note is the whole plan's");
    const results = Object.keys(answer._meta).filter((k) => k.startsWith("_workflow.result."));
    assert.deepEqual(results, ["_workflow.result.s039", "_workflow.result.s040"]);
    const bytes = new TextEncoder().encode(JSON.stringify(answer)).length;
    assert.ok(bytes <= 3_000, `an advance answers ${bytes} bytes`);
    const task = await client.result("tasks/get", { taskId: created.taskId });
    const whole = task._meta["_workflow.progress"];
    assert.equal(whole.steps.length, 100, "the engine's window of a long plan");
    assert.equal(whole.omitted.before + whole.steps.length + whole.omitted.after, 300);
    assert.ok(whole.omitted.before > 0, "the engine's window already omits steps before it");
    assert.ok(whole.note);
    assert.ok(Object.keys(task._meta).filter((k) => k.startsWith("_workflow.result.")).length > 2);
  } finally {
    await client.close();
    await home.cleanup();
  }
});
