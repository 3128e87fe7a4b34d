/**
 * Loops over a real MCP connection, with unmodified corpus examples in the user's workflow
 * folder: a forEach loop whose item variables reach the prompts, and an artifact-driven loop
 * whose `wr.loop_control` decisions come through `output.artifacts` (and block when missing).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CORPUS_DIR } from "../helpers/corpus.ts";
import { connect, ok, tempHome, type TestClient } from "../helpers/server.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

async function withCorpusExamples(fn: (c: TestClient) => Promise<void>): Promise<void> {
  const home = await tempHome();
  await Deno.mkdir(join(home.home, "workflows"), { recursive: true });
  for (const rel of ["examples/loops/simple-batch.json", "test-artifact-loop-control.json"]) {
    await Deno.copyFile(
      join(CORPUS_DIR!, rel),
      join(home.home, "workflows", rel.split("/").pop()!),
    );
  }
  const client = await connect(home.home);
  try {
    await fn(client);
  } finally {
    await client.close();
    await home.cleanup();
  }
}

async function advance(c: TestClient, r: Json, extra: Json = {}): Promise<Json> {
  return ok(
    await c.call("continue_workflow", {
      stateToken: r.stateToken,
      ackToken: r.ackToken,
      output: { notesMarkdown: `did ${r.pending.stepId}`, ...(extra.output ?? {}) },
      ...(extra.context ? { context: extra.context } : {}),
    }),
  );
}

Deno.test({
  name: "over MCP: a corpus forEach loop runs once per item with its variables in the prompt",
  ignore: CORPUS_DIR === null,
  fn: () =>
    withCorpusExamples(async (c) => {
      let r = ok(
        await c.call("start_workflow", {
          workflowId: "simple-batch-example",
          context: { items: ["alpha", "beta", "gamma"], processed: 3, errors: 0 },
        }),
      );
      assert.ok(r.warnings.some((w: Json) => w.code === "LEGACY_WORKFLOW_ID"));
      const seen: string[] = [];
      while (r.pending) {
        seen.push(`${r.pending.stepId}:${r.pending.loop?.iteration ?? "-"}`);
        if (r.pending.stepId === "process-single-item") {
          assert.match(
            r.pending.prompt,
            /^Process (alpha \(item 1|beta \(item 2|gamma \(item 3) of 3\)/,
          );
        }
        r = await advance(c, r);
      }
      assert.deepEqual(seen, [
        "load-data:-",
        "process-single-item:1",
        "process-single-item:2",
        "process-single-item:3",
        "summarize:-",
      ]);
      assert.equal(r.isComplete, true);
    }),
});

Deno.test({
  name: "over MCP: an artifact-driven corpus loop follows wr.loop_control decisions",
  ignore: CORPUS_DIR === null,
  fn: () =>
    withCorpusExamples(async (c) => {
      const decision = (d: string) => ({
        output: { artifacts: [{ kind: "wr.loop_control", decision: d }] },
      });
      let r = ok(await c.call("start_workflow", { workflowId: "test-artifact-loop-control" }));
      assert.equal(r.pending.stepId, "init-loop");
      assert.equal(r.pending.outputContract.contractRef, "wr.contracts.loop_control");
      const blocked = await advance(c, r);
      assert.equal(blocked.kind, "blocked");
      assert.equal(blocked.blockers[0].code, "MISSING_REQUIRED_OUTPUT");
      r = await advance(c, blocked, decision("continue"));
      const trail: string[] = [];
      const decisions = ["continue", "continue", "stop"];
      const ready = {
        output: {
          artifacts: [{ kind: "wr.assessment", dimensions: { confidence: "high" } }],
        },
      };
      while (r.pending) {
        trail.push(r.pending.stepId);
        r = r.pending.stepId === "decide-continue"
          ? await advance(c, r, decision(decisions.shift()!))
          : await advance(c, r, r.pending.stepId === "complete" ? ready : {});
        assert.equal(r.kind, "ok", JSON.stringify(r.blockers));
      }
      assert.deepEqual(trail, [
        "do-work",
        "decide-continue",
        "do-work",
        "decide-continue",
        "do-work",
        "decide-continue",
        "complete",
      ]);
    }),
});
