/**
 * The caps on a step's output have one boundary and one error shape: notes just over
 * `LIMITS.notesBytes` characters and `LIMITS.artifactCount + 1` artifacts are refused with
 * `details.reason` `too_large` / `too_many_artifacts` and the measured size, over MCP as for
 * library callers (the input schema used to refuse them first, with no reason).
 * @module
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { LIMITS } from "../../engine/model/limits.ts";
import { type Message, RawServer } from "../helpers/raw_server.ts";
import { tempHome } from "../helpers/server.ts";

let nextId = 10;

async function call(server: RawServer, name: string, args: Message): Promise<Message> {
  const id = nextId++;
  await server.send({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });
  const answer = await server.answer(id, 30_000);
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  return answer.result;
}

function refusal(result: Message): Message {
  assert.equal(result.isError, true, JSON.stringify(result).slice(0, 500));
  const error = result.structuredContent.error;
  assert.equal(error.code, "INVALID_ARGUMENTS", error.message);
  assert.deepEqual(error.retry, { kind: "not_retryable" });
  return error;
}

Deno.test("notes over the cap and one artifact too many are refused by the engine's caps, with their reasons", async () => {
  const { home, dbFile, cleanup } = await tempHome();
  const server = new RawServer(home);
  const db = createClient({ url: `file:${dbFile}` });
  const events = async () =>
    Number((await db.execute("SELECT count(*) AS n FROM events")).rows[0]!.n);
  try {
    await server.handshake("caps-test");
    const started = (await call(server, "start_workflow", { workflowId: "waymark.code_review" }))
      .structuredContent;
    const before = await events();
    const ack = { stateToken: started.stateToken, ackToken: started.ackToken };
    const chk = { stateToken: started.stateToken, checkpointToken: started.checkpointToken };
    const longNotes = { notesMarkdown: "n".repeat(LIMITS.notesBytes + 1) };
    const manyArtifacts = {
      artifacts: Array.from({ length: LIMITS.artifactCount + 1 }, (_, i) => ({ kind: `k${i}` })),
    };
    for (
      const [tool, tokens] of [["continue_workflow", ack], ["checkpoint_workflow", chk]] as const
    ) {
      const notes = refusal(await call(server, tool, { ...tokens, output: longNotes }));
      assert.deepEqual(notes.details, {
        reason: "too_large",
        field: "output.notesMarkdown",
        bytes: LIMITS.notesBytes + 1,
        maxBytes: LIMITS.notesBytes,
      });
      assert.match(notes.message, new RegExp(`the limit is ${LIMITS.notesBytes}`));
      const many = refusal(
        await call(server, tool, { ...tokens, output: manyArtifacts }),
      );
      assert.deepEqual(many.details, {
        reason: "too_many_artifacts",
        count: LIMITS.artifactCount + 1,
        max: LIMITS.artifactCount,
      });
    }
    assert.equal(await events(), before, "a refused call wrote events");
    // At the caps exactly, the same calls pass.
    const atCap = await call(server, "checkpoint_workflow", {
      ...chk,
      output: {
        notesMarkdown: "n".repeat(LIMITS.notesBytes),
        artifacts: manyArtifacts.artifacts.slice(1),
      },
    });
    assert.notEqual(atCap.isError, true, JSON.stringify(atCap.structuredContent?.error));
  } finally {
    db.close();
    server.kill();
    await server.close().catch(() => {});
    await cleanup();
  }
});
