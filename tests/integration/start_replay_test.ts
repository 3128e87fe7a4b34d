/**
 * A retried `start_workflow` opens one run (`tools/calls/replay_key.ts`): over HTTP with MCP
 * sessions, a start whose answer stream is cut and which the client sends again (the same
 * JSON-RPC request on the same session) answers the run the first one opened, byte for byte;
 * on a stateless server, a start sent again with the same `_meta["waymark/idempotencyKey"]`
 * does too, and another key (or none) opens its own run.
 * @module
 */
import assert from "node:assert/strict";
import { INITIALIZE } from "../helpers/auth_service.ts";
import { startHttpServer } from "../helpers/http_server.ts";
import { tempHome } from "../helpers/server.ts";
import { withTestDb } from "../helpers/db.ts";

const START = (id: number, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: {
    name: "start_workflow",
    arguments: { workflowId: "waymark.code_review", goal: "review the retry path" },
    ...(meta ? { _meta: meta } : {}),
  },
});

function post(
  url: URL,
  message: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
) {
  return fetch(url, {
    method: "POST",
    signal,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

/** The structured content of a tool call's answer (JSON or one SSE event), as its text. */
async function answerOf(response: Response): Promise<string> {
  const text = await response.text();
  const data = response.headers.get("content-type")?.startsWith("text/event-stream")
    ? text.split("\n").find((l) => l.startsWith("data: {"))!.slice(6)
    : text;
  const result = JSON.parse(data).result;
  assert.ok(!result.isError, data.slice(0, 300));
  return JSON.stringify(result.structuredContent);
}

const runsIn = (dbUrl: string) =>
  withTestDb(dbUrl, (db) => db.number("SELECT count(*) AS n FROM runs"));

Deno.test("a start whose stream was cut, sent again on its MCP session, opens one run", async () => {
  const home = await tempHome();
  const server = await startHttpServer(home.home);
  const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  try {
    const init = await post(url, INITIALIZE);
    const session = { "mcp-session-id": init.headers.get("mcp-session-id")! };
    await init.body?.cancel();
    await (await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, session))
      .body?.cancel();
    // the first try: its answer's stream is cut as soon as its headers arrive
    const cut = new AbortController();
    const first = await post(url, START(7), session, cut.signal);
    cut.abort();
    await first.body?.cancel().catch(() => {});
    await new Promise((r) => setTimeout(r, 500));
    const again = await answerOf(await post(url, START(7), session));
    const third = await answerOf(await post(url, START(7), session));
    assert.equal(third, again, "a retry answers byte for byte what the start answered");
    assert.equal(await runsIn(home.dbUrl), 1, "one run, however often the start was sent");
    // a new request (another id) is a new start
    await answerOf(await post(url, START(8), session));
    assert.equal(await runsIn(home.dbUrl), 2);
  } finally {
    await server.stop();
    await home.cleanup();
  }
});

Deno.test("on a stateless server, a client's idempotency key makes a retried start one run", async () => {
  const home = await tempHome();
  const server = await startHttpServer(home.home, { args: ["--stateless"] });
  const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  try {
    const key = { "waymark/idempotencyKey": "start-1f6a" };
    const first = await answerOf(await post(url, START(1, key)));
    const retry = await answerOf(await post(url, START(1, key)));
    assert.equal(retry, first);
    assert.equal(JSON.parse(retry).kind, "ok");
    assert.equal(await runsIn(home.dbUrl), 1);
    // another key, or none, is another start
    await answerOf(await post(url, START(1, { "waymark/idempotencyKey": "start-2b7c" })));
    await answerOf(await post(url, START(1)));
    await answerOf(await post(url, START(1)));
    assert.equal(await runsIn(home.dbUrl), 4, "without a key, each stateless start is its own");
  } finally {
    await server.stop();
    await home.cleanup();
  }
});
