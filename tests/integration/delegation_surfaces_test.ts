/**
 * A child run where a run is looked for, over MCP: `resume_session` finds it by its goal's words
 * and by its run id, and says it is a child (its parent run and step), while the parent is not
 * marked; a task on the parent while its parallel step waits counts the children that ended,
 * in the status message `tasks/get` shows (read afresh: a child's end does not change its
 * parent's run).
 * @module
 */
import assert from "node:assert/strict";
import {
  abandonChild,
  delegationWorkspace,
  driveChild,
  reachParallel,
} from "../helpers/delegation.ts";
import { connect, ok, tempHome } from "../helpers/server.ts";
import { ModernClient } from "../helpers/tasks.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

Deno.test("resume_session finds a child run by its goal and by its id, and says whose child it is", async () => {
  const { home, cleanup } = await tempHome();
  const ws = await delegationWorkspace();
  const agent = await connect(home, { extraArgs: ws.args });
  try {
    const atParallel = await reachParallel(agent, "Billing change fan-out");
    const storage = atParallel.delegations[1] as Json;
    const byGoal = ok(await agent.call("resume_session", { query: "review storage" }));
    const child = byGoal.candidates.find((c: Json) => c.runId === storage.runId);
    assert.ok(child, JSON.stringify(byGoal.candidates.map((c: Json) => c.runId)));
    assert.equal(byGoal.candidates[0].runId, storage.runId, "the storage review ranks first");
    assert.deepEqual(child.delegatedFrom, {
      parentRunId: placeOf(atParallel).runId,
      parentStepId: "reviews",
      index: 1,
    });
    assert.equal(child.workflowId, storage.workflowId);
    assert.equal(child.tip.pendingStepId, "read");
    // Its tip's tokens drive the child like any run's.
    const rehydrated = ok(
      await agent.call("continue_workflow", { stateToken: child.tip.stateToken }),
    );
    assert.match(rehydrated.pending.prompt, /Read storage/);

    const byId = ok(await agent.call("resume_session", { query: storage.runId }));
    assert.equal(byId.candidates.length, 1);
    assert.equal(byId.candidates[0].match, "id");
    assert.equal(byId.candidates[0].delegatedFrom.parentRunId, placeOf(atParallel).runId);

    const parent = ok(await agent.call("resume_session", { query: placeOf(atParallel).runId }));
    assert.equal(parent.candidates[0].runId, placeOf(atParallel).runId);
    assert.equal(parent.candidates[0].delegatedFrom, undefined, "the parent is no child");
  } finally {
    await agent.close();
    await ws.cleanup();
    await cleanup();
  }
});

Deno.test("a parent's task counts its children while the parallel step waits", async () => {
  const { home, cleanup } = await tempHome();
  const ws = await delegationWorkspace();
  const agent = await connect(home, { extraArgs: ws.args });
  const host = new ModernClient(home, ws.args);
  try {
    const atParallel = await reachParallel(agent, "Billing change fan-out");
    const taskId = placeOf(atParallel).runId as string;
    const message = async () => (await host.result("tasks/get", { taskId })).statusMessage;
    assert.equal(await message(), "Step 2 of 4: Parallel reviews · 0 of 3 child runs ended");

    const [first, second, third] = atParallel.delegations as Json[];
    await driveChild(agent, first!.delegationToken, (s) => `first ${s}`);
    await abandonChild(agent, third!.delegationToken, "Out of scope.");
    assert.equal(await message(), "Step 2 of 4: Parallel reviews · 2 of 3 child runs ended");
    // A child's own task says nothing of children.
    assert.equal(
      (await host.result("tasks/get", { taskId: second!.runId })).statusMessage,
      "Step 1 of 2: Read the part",
    );

    await driveChild(agent, second!.delegationToken, (s) => `second ${s}`);
    assert.equal(await message(), "Step 2 of 4: Parallel reviews · 3 of 3 child runs ended");
    // Past the parallel step, the count is gone.
    const blocked = ok(
      await agent.call("continue_workflow", { stateToken: atParallel.stateToken }),
    );
    ok(
      await agent.call("continue_workflow", {
        stateToken: blocked.stateToken,
        ackToken: blocked.ackToken,
      }),
    );
    assert.doesNotMatch(await message(), /child runs/);
  } finally {
    await host.close();
    await agent.close();
    await ws.cleanup();
    await cleanup();
  }
});
