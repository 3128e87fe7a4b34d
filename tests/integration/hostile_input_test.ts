/**
 * Hostile input over a real stdio server, in raw JSON-RPC lines (so keys such as `__proto__`
 * reach it as sent): NUL characters are refused in every text field, `__proto__` is refused
 * where keys are names and kept where keys are data, and the caps on context, notes and
 * artifacts refuse before anything is written, each naming its cap.
 * @module
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { LIMITS } from "../../engine/model/limits.ts";
import { openStore } from "../../store/mod.ts";
import { openWaymark } from "../../mod.ts";
import { type Message, RawServer } from "../helpers/raw_server.ts";
import { tempHome } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

let nextId = 100;

/** Calls a tool with its arguments written as raw JSON text. */
async function call(server: RawServer, name: string, argsJson: string): Promise<Message> {
  const id = nextId++;
  await server.send(
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${argsJson}}}`,
  );
  const answer = await server.answer(id);
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  return answer.result;
}

function refused(result: Message, reason: string): Message {
  assert.equal(result.isError, true, `expected a refusal, got ${JSON.stringify(result)}`);
  const error = result.structuredContent.error;
  assert.equal(error.code, "INVALID_ARGUMENTS", error.message);
  assert.equal(error.details.reason, reason, error.message);
  assert.deepEqual(error.retry, { kind: "not_retryable" });
  return error;
}

function succeeded(result: Message): Message {
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent?.error));
  return result.structuredContent;
}

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

Deno.test("hostile input over MCP: NUL, __proto__ and the caps refuse up front; context keys come back exactly", async () => {
  const { home, dbFile, cleanup } = await tempHome();
  const server = new RawServer(home);
  const db = createClient({ url: `file:${dbFile}` });
  const events = async () =>
    Number((await db.execute("SELECT count(*) AS n FROM events")).rows[0]!.n);
  try {
    await server.handshake("hostile-test");

    const nulGoal = refused(
      await call(
        server,
        "start_workflow",
        '{"workflowId":"waymark.code_review","goal":"a\\u0000b"}',
      ),
      "nul_character",
    );
    assert.deepEqual(nulGoal.details.path, ["goal"]);
    refused(
      await call(server, "start_workflow", '{"workflowId":"waymark.code_review","__proto__":{}}'),
      "unknown_key",
    );
    const deep = refused(
      await call(
        server,
        "start_workflow",
        `{"workflowId":"waymark.code_review","context":${nested(6000)}}`,
      ),
      "context_budget_exceeded",
    );
    assert.equal(deep.details.maxDepth, LIMITS.depth);
    const big = refused(
      await call(
        server,
        "start_workflow",
        `{"workflowId":"waymark.code_review","context":{"blob":"${"x".repeat(300_000)}"}}`,
      ),
      "context_budget_exceeded",
    );
    assert.equal(big.details.maxBytes, LIMITS.contextBytes);
    assert.ok(big.details.bytes > LIMITS.contextBytes);
    assert.match(big.message, new RegExp(`limit is ${LIMITS.contextBytes}`));
    const prompt = await server.request(2, "prompts/get", {
      name: "waymark.code_review",
      arguments: { goal: "a\u0000b" },
    });
    assert.equal(prompt.error?.code, -32602, JSON.stringify(prompt));
    assert.match(prompt.error.message, /NUL/);
    assert.equal(await events(), 0, "a refused start wrote events");

    // `__proto__` inside context is data: kept, and no prototype is touched.
    const started = succeeded(
      await call(
        server,
        "start_workflow",
        '{"workflowId":"waymark.code_review","context":{"__proto__":{"polluted":true},"a":1}}',
      ),
    );
    const before = await events();
    const ack = (extra: string) =>
      `{"stateToken":"${started.stateToken}","ackToken":"${started.ackToken}",${extra}}`;
    const nulNotes = refused(
      await call(
        server,
        "continue_workflow",
        ack('"output":{"notesMarkdown":"before\\u0000after"}'),
      ),
      "nul_character",
    );
    assert.deepEqual(nulNotes.details.path, ["output", "notesMarkdown"]);
    // Over the byte cap in two-byte characters (fewer characters than bytes).
    const notes = refused(
      await call(
        server,
        "continue_workflow",
        ack(`"output":{"notesMarkdown":"${"é".repeat(LIMITS.notesBytes / 2 + 1)}"}`),
      ),
      "too_large",
    );
    assert.equal(notes.details.field, "output.notesMarkdown");
    assert.equal(notes.details.maxBytes, LIMITS.notesBytes);
    const artifact = refused(
      await call(
        server,
        "continue_workflow",
        ack(`"output":{"artifacts":[{"kind":"x","body":"${"b".repeat(LIMITS.artifactBytes)}"}]}`),
      ),
      "too_large",
    );
    assert.equal(artifact.details.field, "output.artifacts[0]");
    const checkpoint = refused(
      await call(
        server,
        "checkpoint_workflow",
        `{"stateToken":"${started.stateToken}","checkpointToken":"${started.checkpointToken}","output":{"notesMarkdown":"${
          "é".repeat(LIMITS.notesBytes / 2 + 1)
        }"}}`,
      ),
      "too_large",
    );
    assert.equal(checkpoint.details.field, "output.notesMarkdown");
    assert.equal(await events(), before, "a refused call wrote events");

    const advanced = succeeded(
      await call(
        server,
        "continue_workflow",
        ack('"context":{"b":2},"output":{"notesMarkdown":"ok"}'),
      ),
    );
    await server.close();

    // The stored context, read back through the store, has every key as sent.
    const store = await openStore(`file:${dbFile}`);
    try {
      const runId = String(placeOf(advanced).runId).replace(/^run_/, "");
      const node = await store.getNode(runId, placeOf(advanced).nodeId);
      assert.ok(node);
      assert.deepEqual(Object.keys(node.context), ["__proto__", "a", "b"]);
      assert.deepEqual(Object.getOwnPropertyDescriptor(node.context, "__proto__")?.value, {
        polluted: true,
      });
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    } finally {
      await store.close();
    }
  } finally {
    db.close();
    server.kill();
    await server.close().catch(() => {});
    await cleanup();
  }
});

Deno.test("library callers get the same caps: a context 6,000 levels deep is refused up front, not a stack overflow", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-deep-" });
  const wm = await openWaymark({ home, dbUrl: ":memory:" });
  try {
    let context: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 6000; i++) context = { a: context };
    const started = await wm.start({ workflowId: "waymark.code_review", context });
    assert.equal(started.ok, false);
    if (started.ok) return;
    assert.equal(started.error.code, "INVALID_ARGUMENTS");
    assert.equal(started.error.details?.reason, "context_budget_exceeded");
    assert.equal(started.error.details?.maxDepth, LIMITS.depth);
    const ok = await wm.start({ workflowId: "waymark.code_review" });
    assert.ok(ok.ok);
    const acked = await wm.continue({
      stateToken: ok.value.stateToken,
      ackToken: ok.value.ackToken,
      context,
    });
    assert.equal(acked.ok ? "ok" : acked.error.details?.reason, "context_budget_exceeded");
  } finally {
    await wm.close();
    await Deno.remove(home, { recursive: true });
  }
});
