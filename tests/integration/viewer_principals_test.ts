/**
 * Who did what, where people read it: the viewer's run page says who started each run and
 * whether the team may continue it, a node's details say whose call made it, and `waymark
 * sessions show` prints who started each run and who acknowledged its steps.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Principal } from "../../engine/access/principal.ts";
import { actingAs } from "../../engine/access/team_policy.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { openWaymark, type Result, type StepResponse } from "../../mod.ts";
import { createViewerApp } from "../../web/mod.ts";
import { runCli } from "../helpers/maintenance.ts";
import { tempHome } from "../helpers/server.ts";
import { writeProjectWorkflow } from "../helpers/workflows.ts";

const HOST = "127.0.0.1:4321";
const ALICE: Principal = {
  subject: "https://idp.test#alice",
  displayName: "Alice",
  kind: "person",
};
const CI: Principal = { subject: "pat:ci", displayName: "ci-runner", kind: "bot" };

function value(result: Result<StepResponse>): StepResponse {
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

Deno.test("the viewer and sessions show say who started a run and who acknowledged its steps", async () => {
  const { home, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir();
  await writeProjectWorkflow(workspace, { id: "project.shown", steps: 3 });
  const waymark = await openWaymark({ home, workspace });
  const viewer = createViewerApp({ db: waymark.store.db, allowedHosts: () => [HOST] });
  try {
    const alice = actingAs(waymark.deps, { principal: ALICE, access: "team" });
    const ci = actingAs(waymark.deps, { principal: CI });
    const start = value(await startWorkflow(alice, { workflowId: "project.shown" }));
    value(
      await continueWorkflow(ci, {
        stateToken: start.stateToken,
        ackToken: start.ackToken!,
        output: { notesMarkdown: "the bot carried it on" },
      }),
    );
    const { sessionId, runId } = start.session!; // a start always names its session
    const get = async (path: string) => {
      const res = await viewer.app.request(path, { headers: { host: HOST } });
      assert.equal(res.status, 200, path);
      return await res.text();
    };
    const runPage = await get(`/sessions/${sessionId}/runs/${runId}`);
    assert.match(runPage, /started by Alice/);
    assert.match(runPage, /team may continue/);
    // the node the bot's acknowledgement made: the run's tip
    const listing = await waymark.store.getRunListing(runId.replace(/^run_/, ""));
    const nodeId = listing!.tipNodeId!;
    const nodePage = await get(`/sessions/${sessionId}/runs/${runId}/nodes/${nodeId}`);
    assert.match(nodePage, /ci-runner \(bot\)/);

    await waymark.close();
    const text = await runCli(["sessions", "show", sessionId], { home });
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /started by: Alice \(team may continue\)/);
    assert.match(text.out, /acknowledged by: ci-runner \(bot\) \(1\)/);
    const json = await runCli(["sessions", "show", sessionId, "--json"], { home });
    const shown = JSON.parse(json.out);
    assert.deepEqual(shown.runs[0].startedBy, ALICE);
    assert.deepEqual(shown.runs[0].acknowledgedBy, [{ ...CI, nodes: 1 }]);
  } finally {
    await waymark.close().catch(() => {});
    await Deno.remove(join(workspace), { recursive: true });
    await cleanup();
  }
});
