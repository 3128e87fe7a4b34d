/**
 * Runs as tasks for a client speaking the 2026-07-28 revision and its tasks extension
 * (`io.modelcontextprotocol/tasks`), in raw JSON-RPC over stdio: the extension advertised and
 * gated per request, `start_workflow` answering a flat `CreateTaskResult`, `tasks/get` with the
 * progress `_meta`, `input_required` with the question as an input request, `tasks/update`
 * recording the answer, the agent going on with the tokens it had, a completed task inlining
 * its result, `tasks/cancel` as an empty ack, and a run started in one process polled from
 * another and after a restart.
 */
import assert from "node:assert/strict";
import { ModernClient, taskHome, TASKS_EXT } from "../helpers/tasks.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Any = Record<string, any>;

const PLAN = (task: Any) =>
  (task._meta["_workflow.progress"].steps as Any[]).map((s) => `${s.name}:${s.status}`);

Deno.test("2026-07-28: a run is a task a client starts, polls, answers, finishes and cancels", async () => {
  const home = await taskHome();
  const client = new ModernClient(home.home);
  try {
    const discovered = await client.result("server/discover", {});
    assert.deepEqual(discovered.capabilities.extensions, { [TASKS_EXT]: {} });
    assert.equal(discovered.capabilities.tasks, undefined, "no 2025-11-25 tasks slot");

    const created = await client.call("start_workflow", { workflowId: "user.deploy" });
    assert.equal(created.resultType, "task");
    assert.match(created.taskId, /^run_[0-9a-f]{16}$/);
    assert.equal(created.status, "working");
    assert.equal(created.ttlMs, null);
    assert.ok(Number.isInteger(created.pollIntervalMs) && created.pollIntervalMs > 0);
    for (const absent of ["task", "ttl", "pollInterval", "result", "error", "inputRequests"]) {
      assert.ok(!(absent in created), `no ${absent} on a CreateTaskResult`);
    }
    assert.match(created._meta["io.modelcontextprotocol/model-immediate-response"], /# Prepare/);
    const start = created._meta["waymark/result"];
    const taskId = created.taskId as string;

    const working = await client.result("tasks/get", { taskId });
    assert.equal(working.resultType, "complete");
    assert.equal(working.status, "working");
    assert.equal(working.statusMessage, "Step 1 of 4: Prepare");
    assert.deepEqual(PLAN(working), [
      "prepare:current",
      "optional:skipped",
      "decide:pending",
      "round:pending",
      "finish:pending",
    ]);

    // without the extension in the request: no task surface, and start answers at once
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const refused = await client.request(method, { taskId }, {});
      assert.equal(refused.error?.code, -32021, method);
      assert.deepEqual(refused.error.data.requiredCapabilities, {
        extensions: { [TASKS_EXT]: {} },
      });
    }
    const plain = await client.call("start_workflow", { workflowId: "user.deploy" }, {
      capabilities: {},
    });
    assert.equal(plain.resultType, "complete");
    assert.equal(plain.structuredContent.pending.stepId, "prepare");
    assert.equal(plain._meta["_workflow.task"].status, "working");
    assert.equal(plain._meta["io.modelcontextprotocol/related-task"], undefined);
    for (const method of ["tasks/list", "tasks/result"]) {
      assert.equal((await client.request(method, { taskId })).error?.code, -32601, method);
    }
    assert.equal((await client.request("tasks/get", { taskId: "nope" })).error?.code, -32602);

    // the agent does the step; the next one waits on the user
    const decide = await client.call("continue_workflow", {
      stateToken: start.stateToken,
      ackToken: start.ackToken,
      output: { notesMarkdown: "prepared" },
    }, { capabilities: {} });
    assert.equal(decide._meta["_workflow.task"].status, "input_required");
    const waiting = await client.result("tasks/get", { taskId });
    assert.equal(waiting.status, "input_required");
    assert.deepEqual(PLAN(waiting).slice(0, 3), [
      "prepare:done",
      "optional:skipped",
      "decide:blocked",
    ]);
    assert.deepEqual(waiting._meta["_workflow.result.prepare"], {
      notesPreview: "prepared",
      artifacts: [],
    });
    const ask = waiting.inputRequests.user_input;
    assert.equal(ask.method, "elicitation/create");
    assert.deepEqual(ask.params.requestedSchema.required, ["target"]);
    assert.equal(ask.params.requestedSchema.properties.target.type, "string");

    const ack = await client.result("tasks/update", {
      taskId,
      inputResponses: { user_input: { action: "accept", content: { target: "prod" } } },
    });
    assert.deepEqual(Object.keys(ack).filter((k) => k !== "_meta"), ["resultType"]);
    assert.equal(ack.resultType, "complete");
    assert.equal((await client.result("tasks/get", { taskId })).status, "working");

    // the agent goes on with the ack token it held from before the answer
    let at = (await client.call("continue_workflow", {
      stateToken: decide.structuredContent.stateToken,
      ackToken: decide.structuredContent.ackToken,
      output: { notesMarkdown: "decided" },
    })).structuredContent;
    assert.equal(at.kind, "ok");
    assert.equal(at.pending.stepId, "round");
    while (!at.isComplete) {
      at = (await client.call("continue_workflow", {
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        output: { notesMarkdown: `done ${at.pending.stepId}` },
      })).structuredContent;
    }
    const completed = await client.result("tasks/get", { taskId });
    assert.equal(completed.status, "completed");
    assert.deepEqual(PLAN(completed), [
      "prepare:done",
      "optional:skipped",
      "decide:done",
      "round:done",
      "finish:done",
    ]);
    assert.equal(completed.result.structuredContent.isComplete, true);
    assert.ok(completed.result.content[0].text.length > 0);
    assert.equal(completed.result._meta?.["io.modelcontextprotocol/related-task"], undefined);
    assert.equal(completed.requestState, undefined);
    assert.deepEqual(
      Object.keys(await client.result("tasks/cancel", { taskId })).filter((k) => k !== "_meta"),
      ["resultType"],
      "cancelling a finished task is an empty ack too",
    );
    assert.equal((await client.result("tasks/get", { taskId })).status, "completed");

    // cancelling a working task aborts its run
    const other = placeOf(plain.structuredContent).runId as string;
    assert.equal((await client.result("tasks/cancel", { taskId: other })).resultType, "complete");
    const cancelled = await client.result("tasks/get", { taskId: other });
    assert.equal(cancelled.status, "cancelled");
    assert.equal(cancelled.result, undefined);
  } finally {
    await client.close();
    await home.cleanup();
  }
});

Deno.test("2026-07-28: a task started in one process is polled from another, and after a restart", async () => {
  const home = await taskHome();
  const first = new ModernClient(home.home);
  const second = new ModernClient(home.home);
  let taskId = "";
  try {
    const created = await first.call("start_workflow", { workflowId: "user.deploy" });
    taskId = created.taskId as string;
    const start = created._meta["waymark/result"];
    assert.equal((await second.result("tasks/get", { taskId })).status, "working");
    await first.call("continue_workflow", {
      stateToken: start.stateToken,
      ackToken: start.ackToken,
    }, { capabilities: {} });
    const waiting = await second.result("tasks/get", { taskId });
    assert.equal(waiting.status, "input_required");
    assert.equal(waiting.statusMessage, "Waiting for the user: target (Where should it deploy?)");
    await second.result("tasks/cancel", { taskId });
    assert.equal((await first.result("tasks/get", { taskId })).status, "cancelled");
  } finally {
    await first.close();
    await second.close();
  }
  const restarted = new ModernClient(home.home);
  try {
    const again = await restarted.result("tasks/get", { taskId });
    assert.equal(again.status, "cancelled", "the cancel is durable");
    assert.deepEqual(PLAN(again).slice(0, 2), ["prepare:done", "optional:skipped"]);
  } finally {
    await restarted.close();
    await home.cleanup();
  }
});
