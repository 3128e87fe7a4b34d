/**
 * DeepWork jobs in the default profile: each job workflow is an ordinary workflow
 * `<job>.<workflow>` whose declared outputs are an output contract (blocked attempts apply),
 * a job named `waymark` is refused, and both profiles share one store: a run started in the
 * DeepWork profile is found by `resume_session`, continued, and aborted with the default
 * profile's `abort_workflow`, which the DeepWork profile then sees.
 */
import assert from "node:assert/strict";
import { connect, err, ok, tempHome } from "../helpers/server.ts";
import { connectDeepwork, jobWorkspace, writeIn } from "../helpers/deepwork.ts";

Deno.test("job workflows run in the default profile as <job>.<workflow>, outputs as a contract", async () => {
  const home = await tempHome();
  const ws = await jobWorkspace();
  const c = await connect(home.home, { cwd: ws.dir });
  try {
    const listed = ok(await c.call("list_workflows", {}));
    const ids = listed.workflows.map((w: { id: string }) => w.id);
    for (const id of ["release_notes.full", "release_notes.quick", "research.deep", "tidy.only"]) {
      assert.ok(ids.includes(id), id);
    }
    assert.ok(!ids.some((id: string) => id.startsWith("waymark.sneaky")));
    const errors = JSON.stringify(listed.loadErrors);
    assert.match(errors, /`waymark`: the `waymark\.` namespace is reserved/);
    assert.match(errors, /YAML syntax error/);
    const started = ok(await c.call("start_workflow", { workflowId: "tidy.only", goal: "tidy" }));
    assert.equal(started.pending.stepId, "note");
    assert.equal(started.pending.outputContract.contractRef, "wr.contracts.job_outputs");
    const base = { stateToken: started.stateToken, ackToken: started.ackToken };
    const missing = ok(await c.call("continue_workflow", base));
    assert.equal(missing.kind, "blocked");
    assert.equal(missing.blockers[0].code, "MISSING_REQUIRED_OUTPUT");
    const wrongName = ok(
      await c.call("continue_workflow", {
        stateToken: started.stateToken,
        ackToken: missing.ackToken,
        output: { artifacts: [{ kind: "wr.job_outputs", outputs: { bogus: "x" } }] },
      }),
    );
    assert.equal(wrongName.kind, "blocked");
    assert.equal(wrongName.blockers[0].code, "INVALID_REQUIRED_OUTPUT");
    assert.match(
      wrongName.blockers[0].message,
      /Unknown output name\(s\) `bogus`.*Valid output names: `summary_text`, `log`/,
    );
    const done = ok(
      await c.call("continue_workflow", {
        stateToken: started.stateToken,
        ackToken: wrongName.ackToken,
        output: {
          notesMarkdown: "tidied",
          artifacts: [{ kind: "wr.job_outputs", outputs: { summary_text: "Tidied." } }],
        },
      }),
    );
    assert.equal(done.isComplete, true);
  } finally {
    await c.close();
    await ws.cleanup();
    await home.cleanup();
  }
});

Deno.test("one store: a DeepWork run is resumed and aborted from the default profile, and the DeepWork profile sees it", async () => {
  const home = await tempHome();
  const ws = await jobWorkspace(["release_notes"]);
  const dw = await connectDeepwork(home.home, ws.dir, { extraArgs: ["--no-quality-gate"] });
  const plain = await connect(home.home, { cwd: ws.dir, client: "v1" });
  try {
    ok(
      await dw.call("start_workflow", {
        goal: "notes for the parser fix",
        job_name: "release_notes",
        workflow_name: "quick",
      }),
    );
    await writeIn(ws.dir, "changes.md", "- parser fix\n");
    ok(
      await dw.call("finished_step", {
        outputs: { "changes.md": "changes.md" },
        notes: "gathered the parser fix",
      }),
    );
    const found = ok(await plain.call("resume_session", { query: "parser" }));
    const candidate = found.candidates[0];
    assert.equal(candidate.workflowId, "release_notes.quick");
    assert.equal(candidate.status, "running");
    const rehydrated = ok(
      await plain.call("continue_workflow", { stateToken: candidate.tip.stateToken }),
    );
    assert.equal(rehydrated.pending.stepId, "publish");
    const aborted = ok(
      await plain.call("abort_workflow", {
        stateToken: candidate.tip.stateToken,
        explanation: "superseded by 1.3",
      }),
    );
    assert.deepEqual(
      { status: aborted.status, again: aborted.alreadyAborted, step: aborted.abortedStepId },
      { status: "aborted", again: false, step: "publish" },
    );
    const twice = ok(
      await plain.call("abort_workflow", {
        stateToken: candidate.tip.stateToken,
        explanation: "again",
      }),
    );
    assert.equal(twice.alreadyAborted, true);
    const refused = err(
      await plain.call("continue_workflow", {
        stateToken: rehydrated.stateToken,
        ackToken: rehydrated.ackToken,
        output: { artifacts: [{ kind: "wr.job_outputs", outputs: { "release.md": "r.md" } }] },
      }),
    );
    assert.equal(refused.code, "RUN_ABORTED");
    const after = ok(await plain.call("resume_session", { query: "parser" }));
    assert.equal(after.candidates[0].status, "aborted");
    const gone = err(await dw.call("finished_step", { outputs: { "release.md": "release.md" } }));
    assert.equal(gone.code, "NO_ACTIVE_WORKFLOW");
  } finally {
    await dw.close();
    await plain.close();
    await ws.cleanup();
    await home.cleanup();
  }
});
