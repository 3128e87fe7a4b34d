/**
 * A replay that carries a different payload: four server processes race one ack, each with its
 * own notes. One advance is recorded and all four get the recorded answer byte for byte; the
 * three whose notes were not kept are told so beside it (`_meta["waymark/replay"]` and a second
 * text item saying how to record them). A replay with the same payload says nothing extra.
 * @module
 */
import assert from "node:assert/strict";
import { type CallResult, connect, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { withTestDb } from "../helpers/db.ts";
import { writeProjectWorkflow } from "../helpers/workflows.ts";
import { placeOf } from "../helpers/answers.ts";
import { serveAsProcesses } from "../helpers/in_process.ts";

/** The servers here are processes: that is what these tests are about. */
serveAsProcesses();

const WORKFLOW_ID = "project.replay_payload";

type WithMeta = CallResult & { _meta?: Record<string, { payloadDiffers?: boolean }> };

function differs(result: CallResult): boolean {
  return (result as WithMeta)._meta?.["waymark/replay"]?.payloadDiffers === true;
}

Deno.test("four processes race one ack with different notes: one is kept, three are told theirs were not", async () => {
  const { home, dbUrl, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "waymark-replay-ws-" });
  const clients: TestClient[] = [];
  try {
    await writeProjectWorkflow(workspace, { id: WORKFLOW_ID, steps: 4 });
    for (let i = 0; i < 4; i++) {
      clients.push(await connect(home, { extraArgs: ["--workspace", workspace] }));
    }
    const started = ok(await clients[0]!.call("start_workflow", { workflowId: WORKFLOW_ID }));
    const tokens = { stateToken: started.stateToken, ackToken: started.ackToken };
    const results = await Promise.all(
      clients.map((client, i) =>
        client.call("continue_workflow", {
          ...tokens,
          output: { notesMarkdown: `notes from process ${i}` },
        })
      ),
    );
    for (const result of results) ok(result);
    const winners = results.flatMap((r, i) => differs(r) ? [] : [i]);
    assert.equal(winners.length, 1, `exactly one call recorded its notes: ${winners}`);
    const winner = results[winners[0]!]!;
    for (const [i, result] of results.entries()) {
      assert.equal(
        JSON.stringify(result.structuredContent),
        JSON.stringify(winner.structuredContent),
        `process ${i}: the recorded answer changed`,
      );
      assert.deepEqual(result.content[0], winner.content[0]);
      if (result === winner) {
        assert.equal(result.content.length, 1);
        continue;
      }
      assert.equal(result.content.length, 2, `process ${i}: no notice`);
      assert.match(result.content[1]!.text, /^Not recorded/);
      assert.match(result.content[1]!.text, /checkpoint_workflow/);
      assert.match(result.content[1]!.text, /rehydrate/);
    }
    const nodeId = placeOf(winner.structuredContent as { stateToken: string }).nodeId;
    const notes = await withTestDb(
      dbUrl,
      (db) => db.rows("SELECT notes_markdown FROM outputs WHERE node_id = ?", [nodeId]),
    );
    assert.deepEqual(notes.map((r) => r.notes_markdown), [
      `notes from process ${winners[0]}`,
    ]);

    // The same payload again: the recorded answer and nothing else.
    const same = await clients[3]!.call("continue_workflow", {
      ...tokens,
      output: { notesMarkdown: `notes from process ${winners[0]}` },
    });
    assert.equal(differs(same), false);
    assert.equal(same.content.length, 1);
    assert.deepEqual(same.structuredContent, winner.structuredContent);

    // Checkpoints too.
    const next = winner.structuredContent as { stateToken: string; checkpointToken: string };
    const cp = { stateToken: next.stateToken, checkpointToken: next.checkpointToken };
    ok(await clients[1]!.call("checkpoint_workflow", { ...cp, output: { notesMarkdown: "a" } }));
    const other = await clients[2]!.call("checkpoint_workflow", {
      ...cp,
      output: { notesMarkdown: "b" },
    });
    assert.equal(differs(other), true);
  } finally {
    for (const client of clients) await client.close().catch(() => {});
    await cleanup();
    await Deno.remove(workspace, { recursive: true });
  }
});
