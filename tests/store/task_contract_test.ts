/**
 * The store contract for runs read as tasks, on both stores: `getBranchSteps`,
 * `getRunListing`, `listRuns` and `changeCounter` answer the same way, and the use-cases built
 * on them (a task's view, the user's answers as a context checkpoint that the next
 * acknowledgement reads) behave the same.
 */
import assert from "node:assert/strict";
import { parseRunLabel } from "../../engine/model/ids.ts";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startSession } from "../../engine/use_cases/start_session.ts";
import { taskView } from "../../engine/use_cases/task_views.ts";
import { recordUserInput } from "../../engine/use_cases/user_input.ts";
import { loadWorkflowFiles, resolveCatalog } from "../../engine/workflow/catalog.ts";
import { ack, engineDeps, rehydrate, start, SUBJECTS, value } from "./subjects.ts";
import { placeOf } from "../helpers/answers.ts";

const ASK = {
  id: "project.ask",
  name: "Ask",
  description: "A step only the user can unblock.",
  version: "1.0.0",
  steps: [
    { id: "first", title: "First", prompt: "1" },
    {
      id: "decide",
      title: "Decide",
      prompt: "2",
      userDependencies: [{ contextKey: "target", reason: "user_decision", message: "Where?" }],
    },
    { id: "last", title: "Last", prompt: "3" },
  ],
};

async function withAsk(deps: EngineDeps): Promise<EngineDeps> {
  const base = await deps.workflows.load();
  const [loaded] = await loadWorkflowFiles([
    { source: "project", file: "ask.json", text: JSON.stringify(ASK) },
  ]);
  assert.ok(loaded!.ok);
  const set = resolveCatalog([...base.workflows, loaded.workflow], []);
  return { ...deps, workflows: { load: () => Promise.resolve(set) } };
}

const runOf = (r: StepResponse) => parseRunLabel(placeOf(r).runId)!;

for (const [name, open] of Object.entries(SUBJECTS)) {
  Deno.test(`${name}: branch steps, run listings and the change counter`, async () => {
    const subject = await open();
    try {
      const deps = await engineDeps(subject.store);
      const counter0 = await subject.store.changeCounter();
      const first = await start(deps, "project.plain", { goal: "the goal" });
      const second = await ack(deps, first, "one");
      await ack(deps, second, "two");
      // a rewind: a fresh ack on the first node starts a sibling branch
      const fork = await ack(deps, await rehydrate(deps, first), "one again");
      assert.ok((await subject.store.changeCounter()) > counter0, "appends move the counter");
      const runId = runOf(first);
      const listing = (await subject.store.getRunListing(runId))!;
      assert.equal(listing.goal, "the goal");
      assert.equal(listing.status, "running");
      assert.equal(listing.sessionKind, "workflow");
      assert.equal(listing.tipNodeId, placeOf(fork).nodeId, "the newest node is the tip");
      const branch = await subject.store.getBranchSteps(runId, placeOf(fork).nodeId, 10);
      assert.deepEqual(
        branch.map((b) => [b.nodeKind, b.completedStepId, b.notesMarkdown]),
        [["step", null, null], ["step", "s1", "one again"]],
      );
      const nearest = await subject.store.getBranchSteps(runId, placeOf(second).nodeId, 1);
      assert.deepEqual(nearest.map((b) => b.nodeId), [placeOf(second).nodeId]);
      await startSession(deps, { title: "notes only" }, {});
      const other = await start(deps, "project.plain");
      const runs = await subject.store.listRuns({ limit: 10, offset: 0 });
      assert.deepEqual(runs.map((r) => r.runId), [runOf(other), runId], "newest first, no notes");
      assert.deepEqual(
        (await subject.store.listRuns({ limit: 1, offset: 1 })).map((r) => r.runId),
        [runId],
      );
      assert.equal(await subject.store.getRunListing("0000000000000000"), null);
    } finally {
      await subject.cleanup();
    }
  });

  Deno.test(`${name}: the user's answers are a checkpoint the next acknowledgement reads`, async () => {
    const subject = await open();
    try {
      const deps = await withAsk(await engineDeps(subject.store));
      const first = await start(deps, "project.ask");
      const decide = await ack(deps, first, "first done");
      const runId = runOf(first);
      const waiting = await taskView(deps, (await deps.store.getRunListing(runId))!, {
        progress: true,
      });
      assert.equal(waiting.status, "input_required");
      assert.deepEqual(waiting.questions.map((q) => q.contextKey), ["target"]);
      assert.deepEqual(waiting.progress!.steps.map((s) => s.status), [
        "done",
        "blocked",
        "pending",
      ]);
      const answered = value(await recordUserInput(deps, { runId, answers: { target: "prod" } }));
      assert.deepEqual(answered.recorded, ["target"]);
      const again = value(await recordUserInput(deps, { runId, answers: { target: "prod" } }));
      assert.deepEqual(again, { recorded: [], nodeId: null }, "nothing is asked any more");
      assert.equal(
        (await taskView(deps, (await deps.store.getRunListing(runId))!, { progress: true })).status,
        "working",
      );
      // the agent's ack token from before the answer still works, and carries it
      const next = value(
        await continueWorkflow(deps, {
          stateToken: decide.stateToken,
          ackToken: decide.ackToken!,
          output: { notesMarkdown: "decided" },
        }),
      );
      assert.equal(next.kind, "ok");
      assert.equal(next.pending?.stepId, "last");
      const node = (await subject.store.getNode(runId, placeOf(next).nodeId))!;
      assert.equal(node.context.target, "prod");
      const branch = await subject.store.getBranchSteps(runId, node.nodeId, 10);
      assert.deepEqual(branch.map((b) => b.nodeKind), ["step", "step", "checkpoint", "step"]);
      assert.match(branch[2]!.notesMarkdown!, /answered through the MCP client: `target`/);
    } finally {
      await subject.cleanup();
    }
  });
}
