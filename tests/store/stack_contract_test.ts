/**
 * The store contract for nested runs and node events, on both stores: the DeepWork use-cases
 * push, finish and abort runs on a stack, and each store answers `getStack`,
 * `findStackSession`, `listStacks`, `getStackFrame`, `getNodeEvents`, `getBranchOutputs` and
 * `getRun().status` the same way, and moves a stack to a new holder on `stack_claimed`.
 * Jobs come from the job files written for the tests, through the real job-folder adapter.
 */
import assert from "node:assert/strict";
import { abortJobWorkflow } from "../../engine/deepwork/abort.ts";
import { finishStep } from "../../engine/deepwork/finish.ts";
import type { JobPorts } from "../../engine/deepwork/ports.ts";
import { startJobWorkflow } from "../../engine/deepwork/start.ts";
import { parseRunLabel } from "../../engine/model/ids.ts";
import type { EngineDeps } from "../../engine/model/ports.ts";
import { abortRun } from "../../engine/use_cases/abort_run.ts";
import { deriveNodeId } from "../../engine/model/ids.ts";
import { createJobSource } from "../../tools/profiles/deepwork/job_folders.ts";
import { diskFiles } from "../../tools/profiles/deepwork/files.ts";
import { jobWorkspace, writeIn } from "../helpers/deepwork.ts";
import { engineDeps, SUBJECTS, value } from "./subjects.ts";

const WS = (workspace: string) => ({ workspace, gitBranch: null, gitHeadSha: null });

async function scenario(deps: EngineDeps, ports: JobPorts, ws: string) {
  const store = deps.store;
  const workspace = WS(ws);
  const outer = value(
    await startJobWorkflow({ ...deps, ...ports }, {
      goal: "o",
      job_name: "nest",
      workflow_name: "outer",
      workspace,
    }),
  );
  const outerRun = parseRunLabel(outer.begin_step.session_id)!;
  const sessionId = (await store.getStackFrame(outerRun))!.sessionId;
  value(
    await startJobWorkflow({ ...deps, ...ports }, {
      goal: "m",
      job_name: "nest",
      workflow_name: "middle",
      workspace,
    }),
  );
  const inner = value(
    await startJobWorkflow({ ...deps, ...ports }, {
      goal: "i",
      job_name: "nest",
      workflow_name: "inner",
      workspace,
    }),
  );
  await writeIn(ws, "mark.txt", "m");
  const done = value(
    await finishStep({ ...deps, ...ports }, {
      outputs: { mark: "mark.txt" },
      quality_review_override_reason: "checked by hand",
      workspace,
    }),
  );
  assert.equal(done.status, "workflow_complete");
  value(await abortJobWorkflow({ ...deps, ...ports }, { explanation: "not needed", workspace }));
  return { sessionId, outer, inner };
}

for (const [storeName, open] of Object.entries(SUBJECTS)) {
  Deno.test(`${storeName}: the stack, node events and branch outputs of nested runs`, async () => {
    const subject = await open();
    const ws = await jobWorkspace(["nest"]);
    try {
      const deps = await engineDeps(subject.store);
      const ports: JobPorts = {
        jobs: createJobSource({ dirs: [] }),
        files: diskFiles,
        gate: { maxAttempts: 3, timeoutMs: 1000, runner: null },
        presence: { self: "me", isLive: (owner) => owner === "me" },
      };
      const { store } = subject;
      const main = { agentId: null, owner: null };
      assert.equal(await store.findStackSession(ws.dir, main), null);
      const { sessionId, inner } = await scenario(deps, ports, ws.dir);
      assert.equal(await store.findStackSession(ws.dir, main), sessionId);
      assert.equal(await store.findStackSession(ws.dir, { agentId: null, owner: "me" }), sessionId);
      assert.equal(await store.findStackSession(ws.dir, { agentId: null, owner: "other" }), null);
      assert.equal(await store.findStackSession("/elsewhere", main), null);
      assert.equal(await store.findStackSession(ws.dir, { agentId: "helper", owner: null }), null);
      const view = await store.getStack(sessionId, null);
      assert.deepEqual(
        view.frames.map((f) => [f.workflowId, f.pendingStepId, f.depth, f.parentRunId, f.owner]),
        [["nest.outer", "outer_start", 0, null, "me"]],
      );
      const listed = await store.listStacks(ws.dir, { agentId: null, limit: 10 });
      assert.deepEqual(listed.map((s) => [s.sessionId, s.owner, s.workflowId, s.pendingStepId]), [
        [sessionId, "me", "nest.outer", "outer_start"],
      ]);
      assert.deepEqual(await store.listStacks(ws.dir, { agentId: "helper", limit: 10 }), []);
      await store.write((tx) =>
        tx.append([{ kind: "stack_claimed", sessionId, agentId: null, from: "me", owner: "you" }])
      );
      assert.equal(
        await store.findStackSession(ws.dir, { agentId: null, owner: "you" }),
        sessionId,
      );
      assert.equal((await store.getStackFrame(view.lastFinished!.runId))!.owner, "you");
      assert.equal(view.lastFinished?.workflowId, "nest.middle");
      assert.equal(view.lastFinished?.status, "aborted");
      assert.equal(view.lastFinished?.parentRunId, view.frames[0]!.runId);
      assert.deepEqual((await store.getStack(sessionId, "helper")).frames, []);
      const innerRun = inner.stack.at(-1)!.run_id.slice("run_".length);
      assert.equal((await store.getRun(innerRun))!.status, "complete");
      const middle = view.lastFinished!;
      assert.equal((await store.getRun(middle.runId))!.status, "aborted");
      const aborted = await store.getNodeEvents(middle.runId, middle.tipNodeId);
      assert.deepEqual(aborted.map((e) => e.kind), ["run_aborted"]);
      // the inner run: the override gap at the node whose step was finished (its root)
      const innerRoot = await deriveNodeId(["root", innerRun]);
      const events = await store.getNodeEvents(innerRun, innerRoot);
      assert.deepEqual(events.map((e) => [e.kind, e.kind === "gap_recorded" ? e.code : null]), [
        ["gap_recorded", "QUALITY_REVIEW_OVERRIDDEN"],
      ]);
      const tip = await store.getPreferredTip(innerRun, innerRoot);
      const outputs = await store.getBranchOutputs(innerRun, tip.nodeId, 10);
      assert.deepEqual(outputs.map((o) => [o.stepId, o.artifacts[0]?.kind]), [
        ["inner_only", "wr.job_outputs"],
      ]);
      // aborting an aborted run records nothing more; a complete one cannot be aborted
      const again = value(await abortRun(deps, { runId: middle.runId, explanation: "again" }));
      assert.equal(again.alreadyAborted, true);
      const complete = await abortRun(deps, { runId: innerRun, explanation: "late" });
      assert.equal(complete.ok ? "ok" : complete.error.code, "RUN_COMPLETE");
    } finally {
      await ws.cleanup();
      await subject.cleanup();
    }
  });
}
