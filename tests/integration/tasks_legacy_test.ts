/**
 * Runs as tasks for a client of the 2025-11-25 design: the v1 SDK client and its experimental
 * tasks API list, poll and cancel runs over stdio; `start_workflow` augmented with `task`
 * answers a `CreateTaskResult`; a run's status changes through the connection arrive as
 * `notifications/tasks/status`; `tasks/result` waits for the run, asking the user through the
 * client when the run waits on them.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
import { StdioClientTransport as StdioClientTransportV1 } from "npm:@modelcontextprotocol/sdk@1.32.2/client/stdio.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from "npm:@modelcontextprotocol/sdk@1.32.2/types.js";
import { openWaymark } from "../../mod.ts";
import { connect, ok, serverParams } from "../helpers/server.ts";
import { taskHome } from "../helpers/tasks.ts";

// deno-lint-ignore no-explicit-any
type Any = Record<string, any>;

async function v1Client(
  home: string,
  options: { onElicit?: (params: Any) => Any } = {},
): Promise<{ client: ClientV1; statuses: string[] }> {
  const client = new ClientV1(
    { name: "waymark-test-v1-tasks", version: "1.0.0" },
    { capabilities: options.onElicit ? { elicitation: {} } : {} },
  );
  const statuses: string[] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n: Any) => {
    statuses.push(`${n.params.taskId}:${n.params.status}`);
  });
  if (options.onElicit) {
    const answer = options.onElicit;
    client.setRequestHandler(
      ElicitRequestSchema,
      (request: Any) => answer(request.params) as never,
    );
  }
  await client.connect(
    new StdioClientTransportV1(serverParams(home)),
  );
  return { client, statuses };
}

async function until(what: string, check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts `user.deploy` as a task with a raw request, to see the whole `CreateTaskResult`. */
async function startAsTask(client: ClientV1): Promise<{ taskId: string; start: Any }> {
  const created = await client.request({
    method: "tools/call",
    params: { name: "start_workflow", arguments: { workflowId: "user.deploy" }, task: {} },
  }, CreateTaskResultSchema) as Any;
  assert.equal(created.task.status, "working");
  assert.equal(created.task.ttl, null);
  assert.equal(created.task.pollInterval, 2000);
  assert.match(created._meta["io.modelcontextprotocol/model-immediate-response"], /# Prepare/);
  assert.deepEqual(created._meta["io.modelcontextprotocol/related-task"], {
    taskId: created.task.taskId,
  });
  return { taskId: created.task.taskId, start: created._meta["waymark/result"] };
}

Deno.test("2025-11-25: a v1 client lists, polls and cancels runs as tasks", async () => {
  const home = await taskHome();
  const { client, statuses } = await v1Client(home.home);
  try {
    assert.deepEqual(client.getServerCapabilities()?.tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const tools: Any[] = (await client.listTools()).tools;
    const start = tools.find((t) => t.name === "start_workflow")!;
    assert.equal(start.execution?.taskSupport, "optional");
    assert.equal(
      tools.find((t) => t.name === "list_workflows")!.execution?.taskSupport,
      "forbidden",
    );
    assert.equal(
      tools.find((t) => t.name === "abort_workflow")!.annotations?.destructiveHint,
      true,
    );

    // the SDK's own task stream starts it as a task
    const stream = client.experimental.tasks.callToolStream(
      { name: "start_workflow", arguments: { workflowId: "user.deploy", goal: "ship it" } },
      CallToolResultSchema,
      { task: {} },
    );
    let streamed = "";
    for await (const message of stream) {
      if (message.type === "taskCreated") streamed = message.task.taskId;
      break;
    }
    assert.match(streamed, /^run_/);

    const { taskId, start: first } = await startAsTask(client);
    const polled = await client.experimental.tasks.getTask(taskId) as Any;
    assert.equal(polled.status, "working");
    assert.equal(polled.statusMessage, "Step 1 of 4: Prepare");
    assert.equal(polled._meta["_workflow.progress"].steps[0].status, "current");

    const decide = ok(
      await client.callTool({
        name: "continue_workflow",
        arguments: { stateToken: first.stateToken, ackToken: first.ackToken },
      }) as never,
    );
    assert.equal(decide.pending.stepId, "decide");
    await until("input_required", () => statuses.includes(`${taskId}:input_required`));
    assert.equal((await client.experimental.tasks.getTask(taskId)).status, "input_required");

    // a page holds 50 tasks; the cursor gets the rest
    const waymark = await openWaymark({ home: home.home, dbUrl: home.dbUrl });
    for (let i = 0; i < 50; i++) {
      assert.ok((await waymark.start({ workflowId: "user.deploy" })).ok);
    }
    await waymark.close();
    const page = await client.experimental.tasks.listTasks();
    assert.equal(page.tasks.length, 50);
    assert.equal(page.nextCursor, "50");
    const rest = await client.experimental.tasks.listTasks(page.nextCursor);
    assert.equal(rest.tasks.length, 2);
    assert.equal(rest.nextCursor, undefined);
    const all = [...page.tasks, ...rest.tasks].map((t) => t.taskId);
    assert.ok(all.includes(taskId) && all.includes(streamed));

    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    assert.equal(cancelled.status, "cancelled");
    await until("cancelled", () => statuses.includes(`${taskId}:cancelled`));
    await assert.rejects(client.experimental.tasks.cancelTask(taskId), /-32602|already cancelled/);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.equal(result.isError, true);
    assert.equal((result.structuredContent as Any).error.code, "RUN_ABORTED");
  } finally {
    await client.close();
    await home.cleanup();
  }
});

Deno.test("2025-11-25: tasks/result waits for the run and asks the user what it waits on", async () => {
  const home = await taskHome();
  const asked: Any[] = [];
  const { client } = await v1Client(home.home, {
    onElicit: (params) => {
      asked.push(params);
      return { action: "accept", content: { target: "prod" } };
    },
  });
  const agent = await connect(home.home);
  try {
    const { taskId, start } = await startAsTask(client);
    const decide = ok(
      await agent.call("continue_workflow", {
        stateToken: start.stateToken,
        ackToken: start.ackToken,
      }),
    );
    const waited = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    // Awaited below; if a step before fails, closing the client rejects it, and that rejection
    // must not surface as an uncaught error in place of the step's own failure.
    waited.catch(() => {});
    await until("the question", () => asked.length > 0);
    // the question is asked before it is answered: wait for the answer to be recorded
    while ((await client.experimental.tasks.getTask(taskId)).status === "input_required") {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(asked[0]!.requestedSchema.required, ["target"]);
    assert.deepEqual(asked[0]!._meta["io.modelcontextprotocol/related-task"], { taskId });
    // the agent goes on with the tokens it had; the user's answer is in the context
    let at = ok(
      await agent.call("continue_workflow", {
        stateToken: decide.stateToken,
        ackToken: decide.ackToken,
      }),
    );
    assert.equal(at.kind, "ok");
    while (!at.isComplete) {
      at = ok(
        await agent.call("continue_workflow", { stateToken: at.stateToken, ackToken: at.ackToken }),
      );
    }
    const result = await waited as Any;
    assert.equal(result.isError, undefined);
    assert.equal(result.structuredContent.isComplete, true);
    assert.deepEqual(result._meta["io.modelcontextprotocol/related-task"], { taskId });
    assert.equal(asked.length, 1, "asked once");
  } finally {
    await agent.close();
    await client.close();
    await home.cleanup();
  }
});
