/**
 * Raw JSON-RPC over the server's stdio, without an SDK client: malformed and invalid messages
 * get the answers that are due (or, where the SDK drops them, none), stdout carries only
 * JSON-RPC 2.0, and the server stays up and keeps serving.
 * @module
 */
import assert from "node:assert/strict";
import { type Message, RawServer, tryParse } from "../helpers/raw_server.ts";
import { tempHome } from "../helpers/server.ts";
import { BUNDLED_IDS } from "../helpers/library.ts";

function toolError(answer: Message): Message {
  assert.equal(
    answer.error,
    undefined,
    `expected a tool result, got a JSON-RPC error: ${JSON.stringify(answer)}`,
  );
  assert.equal(answer.result.isError, true);
  const error = answer.result.structuredContent?.error;
  assert.ok(error, `no structuredContent.error in ${JSON.stringify(answer.result)}`);
  assert.equal(typeof error.message, "string");
  assert.deepEqual(error.retry, { kind: "not_retryable" });
  assert.equal(answer.result.content[0].type, "text");
  return error;
}

Deno.test("raw JSON-RPC: malformed and invalid messages are answered where due and the server stays up", async () => {
  const home = await tempHome();
  const server = new RawServer(home.home);
  let closed = false;
  try {
    const init = await server.request(1, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw-test", version: "1.0.0" },
    });
    assert.equal(init.result.protocolVersion, "2025-06-18");
    assert.equal(init.result.serverInfo.name, "waymark");
    assert.ok(init.result.capabilities.tools);
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });

    // Malformed JSON gets a -32700 parse error with id null; the server carries on.
    await server.send("{not json");
    await server.send('{"jsonrpc":"2.0","id":99,"method":"ping"');
    assert.deepEqual((await server.request(2, "ping")).result, {});

    // A request whose `method` is not a string is an invalid request: -32600 with its id.
    await server.send({ jsonrpc: "2.0", id: 3, method: 42 });
    assert.deepEqual((await server.request(4, "ping")).result, {});

    const unknown = await server.request(5, "no_such/method", {});
    assert.equal(unknown.result, undefined);
    assert.equal(unknown.error.code, -32601);

    for (const [id, name] of [[6, "inspect_workflow"], [7, "start_workflow"]] as const) {
      const answer = await server.request(id, "tools/call", {
        name,
        arguments: { workflowId: 42 },
      });
      const error = toolError(answer);
      assert.equal(error.code, "INVALID_ARGUMENTS");
      assert.equal(error.details.tool, name);
      assert.deepEqual(error.details.issues.map((i: Message) => i.path), ["workflowId"]);
      assert.ok(answer.result.content[0].text.includes("workflowId"));
    }

    const noTool = toolError(
      await server.request(8, "tools/call", { name: "no_such_tool", arguments: {} }),
    );
    assert.equal(noTool.code, "INVALID_ARGUMENTS");
    assert.equal(noTool.details.tool, "no_such_tool");
    assert.match(noTool.message, /list_workflows/, "the error names the tools that exist");

    const extra = toolError(
      await server.request(9, "tools/call", { name: "list_workflows", arguments: { x: 1 } }),
    );
    assert.equal(extra.code, "INVALID_ARGUMENTS");

    // A tools/call without a tool name is a JSON-RPC invalid-params error from the SDK.
    const noName = await server.request(10, "tools/call", {});
    assert.equal(noName.error?.code, -32602);

    // Still serving: a normal call succeeds after all of the above.
    const list = await server.request(11, "tools/call", { name: "list_workflows", arguments: {} });
    assert.equal(list.error, undefined);
    assert.notEqual(list.result.isError, true);
    assert.deepEqual(
      list.result.structuredContent.workflows.map((w: Message) => w.id),
      BUNDLED_IDS,
    );

    const { code } = await server.close();
    closed = true;
    assert.equal(code, 0, "the server exits cleanly when stdin closes");

    // Every line on stdout is a JSON-RPC 2.0 response (the client sent no request that needs a
    // server-to-client message here), and exactly the due requests were answered, once each.
    const messages = server.lines.map((line, i) => {
      const message = tryParse(line);
      assert.ok(message !== undefined, `stdout line ${i} is not JSON: ${line}`);
      assert.equal(message.jsonrpc, "2.0", `stdout line ${i} is not JSON-RPC 2.0: ${line}`);
      const isResponse = "id" in message && (("result" in message) !== ("error" in message));
      const isServerMessage = typeof message.method === "string";
      assert.ok(
        isResponse || isServerMessage,
        `stdout line ${i} is neither a response nor a request: ${line}`,
      );
      if ("error" in message) {
        assert.equal(typeof message.error.code, "number");
        assert.equal(typeof message.error.message, "string");
      }
      return message;
    });
    const answered = messages.filter((m) => !("method" in m)).map((m) => m.id);
    assert.deepEqual(answered, [1, null, null, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const rejected = messages.filter((m) => m.id === null || m.id === 3).map((m) => m.error?.code);
    assert.deepEqual(rejected, [-32700, -32700, -32600]);
  } finally {
    if (!closed) {
      server.kill();
      await server.close().catch(() => {});
    }
    await home.cleanup();
  }
});

Deno.test("raw JSON-RPC: a message over the size cap gets an error with its id and the server keeps serving", async () => {
  const home = await tempHome();
  const server = new RawServer(home.home);
  try {
    await server.handshake("raw-test");

    // 10.5 MB in one valid line, the id last (as the SDKs serialise it).
    const query = "x".repeat(10.5 * 1024 * 1024);
    await server.send(
      `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"resume_session","arguments":{"query":"${query}"}},"id":20}`,
    );
    const big = await server.answer(20);
    assert.equal(big.error.code, -32600);
    assert.match(big.error.message, /too large .*limit is 4194304 bytes/);
    assert.deepEqual((await server.request(21, "ping")).result, {});

    // 20 MB with no newline, in pieces: dropped as it streams, one error when the line ends.
    const piece = "y".repeat(1024 * 1024);
    for (let i = 0; i < 20; i++) await server.write(piece);
    await server.write("\n");
    assert.deepEqual((await server.request(22, "ping")).result, {});
    const errors = server.lines.map(tryParse).filter((m) => m?.error?.code === -32600);
    assert.equal(errors.length, 2, "one error per oversize line");
    assert.equal(errors[1]!.id, null);
  } finally {
    server.kill();
    await server.close().catch(() => {});
    await home.cleanup();
  }
});
