/**
 * `serve --http --stateless`: nothing kept between requests. `initialize` issues no MCP session,
 * `GET /mcp` is refused (no stream to hold), each later request speaks the revision its
 * `MCP-Protocol-Version` header names, and a real v1 client walks a workflow with every request
 * on a fresh server instance.
 * @module
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
import { StreamableHTTPClientTransport as HttpTransportV1 } from "npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp.js";
import { INITIALIZE, postRpc } from "../helpers/auth_service.ts";
import { startHttpServer } from "../helpers/http_server.ts";
import { ok, tempHome } from "../helpers/server.ts";

/** A 2025-era POST naming `version`: its content type and text. */
async function post(url: URL, version: string, message: unknown) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
    },
    body: JSON.stringify(message),
  });
  assert.equal(response.status, 200);
  return {
    type: response.headers.get("content-type") ?? "",
    length: response.headers.get("content-length"),
    text: await response.text(),
  };
}

/**
 * The tools `tools/list` lists when the request names `version`: answered in one JSON body of
 * a known length (no stream, no chunked framing, so the answer leaves in one write).
 */
async function toolsAt(url: URL, version: string): Promise<Record<string, unknown>[]> {
  const { type, length, text } = await post(url, version, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/list",
  });
  assert.match(type, /^application\/json/, text.slice(0, 200));
  assert.equal(length, String(new TextEncoder().encode(text).length), "sent with its length");
  return JSON.parse(text).result.tools;
}

Deno.test("a stateless HTTP server keeps no session and serves each request alone", async () => {
  const home = await tempHome();
  const server = await startHttpServer(home.home, { args: ["--stateless"] });
  const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  const client = new ClientV1({ name: "stateless-test", version: "1.0.0" });
  try {
    const init = await postRpc(url, {}, INITIALIZE);
    assert.equal(init.status, 200);
    assert.equal(init.headers.get("mcp-session-id"), null, "no MCP session is issued");
    const stream = await fetch(url, { headers: { accept: "text/event-stream" } });
    assert.equal(stream.status, 405);
    await stream.body?.cancel();
    // the revision of each request is the one its header names: tasks' `execution` on 2025-11-25
    const modern = await toolsAt(url, "2025-11-25");
    assert.ok(modern.some((t) => t.execution !== undefined));
    const older = await toolsAt(url, "2025-06-18");
    assert.ok(older.every((t) => t.execution === undefined));
    // a request asking for progress keeps its stream, where the notifications would travel
    const streamed = await post(url, "2025-11-25", {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/list",
      params: { _meta: { progressToken: "p1" } },
    });
    assert.match(streamed.type, /^text\/event-stream/);
    assert.ok(streamed.text.split("\n").some((l) => l.startsWith("data: {")));

    await client.connect(new HttpTransportV1(url));
    let at = ok(
      await client.callTool({
        name: "start_workflow",
        arguments: { workflowId: "wr.code_review" },
      }) as never,
    );
    for (let i = 0; i < 3 && !at.isComplete; i++) {
      at = ok(
        await client.callTool({
          name: "continue_workflow",
          arguments: {
            stateToken: at.stateToken,
            ackToken: at.ackToken,
            output: { notesMarkdown: `step ${i} over a stateless server` },
          },
        }) as never,
      );
    }
    assert.equal(at.kind, "ok");
  } finally {
    await client.close();
    const { stdout } = await server.stop();
    assert.equal(stdout, "", "nothing but JSON-RPC on stdout");
    await home.cleanup();
  }
});
