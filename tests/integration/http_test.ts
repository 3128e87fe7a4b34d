/**
 * `waymark serve --http PORT`: MCP over Streamable HTTP at `/mcp` on 127.0.0.1, driven by the
 * real v2 client (sessions, roots over the SSE stream), and the Host/Origin refusals.
 * @module
 */
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/client@2.4.0";
import { Client as ClientV1 } from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
import { StreamableHTTPClientTransport as HttpTransportV1 } from "npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp.js";
import { ok, tempHome } from "../helpers/server.ts";
import { startHttpServer } from "../helpers/http_server.ts";
import { placeOf } from "../helpers/answers.ts";

/** Starts `serve --http 0`; stopping it checks it wrote nothing on stdout and exited cleanly. */
async function startHttp(
  home: string,
  extraArgs: string[] = [],
): Promise<{ port: number; stop(): Promise<void> }> {
  const server = await startHttpServer(home, { args: extraArgs });
  return {
    port: server.port,
    async stop() {
      const { success, stdout } = await server.stop();
      assert.equal(stdout, "", "nothing is written to stdout");
      assert.equal(success, true, "SIGTERM stops the server cleanly");
    },
  };
}

/** A raw HTTP/1.1 request with a chosen Host header (fetch will not send a foreign one). */
async function rawPost(port: number, host: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
  await conn.write(
    new TextEncoder().encode(
      `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ),
  );
  let text = "";
  const decoder = new TextDecoder();
  const buf = new Uint8Array(4096);
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += decoder.decode(buf.subarray(0, n), { stream: true });
  }
  conn.close();
  return text;
}

Deno.test("serve --http serves MCP at /mcp on 127.0.0.1, with roots, and refuses foreign Host and Origin", async () => {
  const home = await tempHome();
  const server = await startHttp(home.home);
  const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-http-ws-" }));
  const client = new Client(
    { name: "waymark-http-test", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler("roots/list", () => ({
    roots: [{ uri: new URL(`file://${repo}/`).href }],
  }));
  try {
    await client.connect(new StreamableHTTPClientTransport(url));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes("resume_session"));
    const started = ok(
      await client.callTool({
        name: "start_workflow",
        arguments: { workflowId: "waymark.code_review", goal: "Over HTTP" },
      }) as never,
    );
    const next = ok(
      await client.callTool({
        name: "continue_workflow",
        arguments: {
          stateToken: started.stateToken,
          ackToken: started.ackToken,
          output: { notesMarkdown: "the narwhal endpoint works" },
        },
      }) as never,
    );
    assert.ok(next.pending);
    const found = ok(
      await client.callTool({ name: "resume_session", arguments: { query: "narwhal" } }) as never,
    );
    assert.equal(found.candidates[0].runId, placeOf(started).runId);
    assert.equal(found.workspace.workspace, repo, "roots/list reached the client over SSE");

    // foreign Host (DNS rebinding) and foreign Origin are refused before MCP sees them
    assert.match(await rawPost(server.port, `evil.example:${server.port}`), /^HTTP\/1\.1 403/);
    assert.match(await rawPost(server.port, `127.0.0.1:${server.port}`), /^HTTP\/1\.1 [24]\d\d/);
    const cross = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        origin: "https://evil.example",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.equal(cross.status, 403);
    await cross.body?.cancel();
    const local = await fetch(new URL("/elsewhere", url));
    assert.equal(local.status, 404);
    await local.body?.cancel();
  } finally {
    await client.close().catch(() => {});
    await server.stop();
    await home.cleanup();
    await Deno.remove(repo, { recursive: true });
  }
});

/** Reads a connection until the server closes it; what it said, and how long that took. */
async function untilClosed(
  conn: Deno.Conn,
  limitMs: number,
): Promise<{ text: string; ms: number }> {
  const started = Date.now();
  const buf = new Uint8Array(4096);
  let text = "";
  const timer = setTimeout(() => conn.close(), limitMs);
  try {
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } finally {
    clearTimeout(timer);
  }
  try {
    conn.close();
  } catch { /* closed by the timer */ }
  return { text, ms: Date.now() - started };
}

Deno.test("serve --http: slow clients are cut off (--header-timeout, --body-timeout); others are served", async () => {
  const home = await tempHome();
  const server = await startHttp(home.home, ["--header-timeout", "600", "--body-timeout", "900"]);
  const encoder = new TextEncoder();
  const connect = () => Deno.connect({ hostname: "127.0.0.1", port: server.port });
  const head = (length: number) =>
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`;
  const dripping: Promise<void>[] = [];
  /** Writes `text` a byte every 100 ms until the server closes the connection. */
  const drip = (conn: Deno.Conn, text: string) =>
    dripping.push((async () => {
      for (const byte of encoder.encode(text)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        if (await conn.write(new Uint8Array([byte])).catch(() => null) === null) return;
      }
    })());
  try {
    const silent = await Promise.all(Array.from({ length: 20 }, connect));
    const slowHeaders = await Promise.all(Array.from({ length: 20 }, connect));
    for (const conn of slowHeaders) drip(conn, head(2).repeat(5));
    const slowBodies = await Promise.all(Array.from({ length: 20 }, connect));
    for (const conn of slowBodies) {
      await conn.write(encoder.encode(head(200)));
      drip(conn, "x".repeat(200));
    }
    const ended = await Promise.all(
      [...silent, ...slowHeaders, ...slowBodies].map((conn) => untilClosed(conn, 10_000)),
    );
    for (const [i, { text, ms }] of ended.entries()) {
      const what = i < 20 ? "silent" : i < 40 ? "slow headers" : "slow body";
      assert.ok(ms < 5_000, `${what} connection ${i} open for ${ms} ms`);
      assert.match(text, /^HTTP\/1\.1 408 /, `${what}: ${text}`);
    }
    // a prompt client is served as before
    const ping = await fetch(`http://127.0.0.1:${server.port}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.equal(ping.status, 400, "served (no session yet), not cut off");
    await ping.body?.cancel();
  } finally {
    await Promise.all(dripping);
    await server.stop();
    await home.cleanup();
  }
});

Deno.test("serve --http: tasks/list, tasks/get and tasks/cancel see only the tasks this MCP session started", async () => {
  const home = await tempHome();
  const server = await startHttp(home.home);
  const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  const clients = [0, 1].map((i) =>
    new ClientV1({ name: `waymark-http-tasks-${i}`, version: "1.0.0" }, { capabilities: {} })
  );
  const [alice, mallory] = clients as [ClientV1, ClientV1];
  try {
    for (const client of clients) await client.connect(new HttpTransportV1(url));
    const started = ok(
      await alice.callTool({
        name: "start_workflow",
        arguments: { workflowId: "waymark.code_review", goal: "Alice's review" },
      }) as never,
    );
    const taskId = placeOf(started).runId;
    const mine = await alice.experimental.tasks.listTasks();
    assert.deepEqual(mine.tasks.map((t: { taskId: string }) => t.taskId), [taskId]);
    assert.equal((await alice.experimental.tasks.getTask(taskId)).status, "working");

    const theirs = await mallory.experimental.tasks.listTasks();
    assert.deepEqual(theirs.tasks, [], "another session lists none of Alice's tasks");
    await assert.rejects(mallory.experimental.tasks.getTask(taskId), /-32602|no task/i);
    await assert.rejects(mallory.experimental.tasks.cancelTask(taskId), /-32602|no task/i);
    assert.equal(
      (await alice.experimental.tasks.getTask(taskId)).status,
      "working",
      "the cancel from another session changed nothing",
    );
    // runs stay global by design: the other session's own start is its own task
    const own = ok(
      await mallory.callTool({
        name: "start_workflow",
        arguments: { workflowId: "waymark.code_review", goal: "Mallory's own" },
      }) as never,
    );
    const after = await mallory.experimental.tasks.listTasks();
    assert.deepEqual(after.tasks.map((t: { taskId: string }) => t.taskId), [placeOf(own).runId]);
  } finally {
    for (const client of clients) await client.close().catch(() => {});
    await server.stop();
    await home.cleanup();
  }
});
