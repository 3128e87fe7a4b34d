/**
 * The HTTP endpoint in-process: Host and Origin rules, the session requirement, and idle MCP
 * sessions being closed.
 */
import assert from "node:assert/strict";
import { createMcpHttpApp } from "../../web/mcp_http.ts";
import { allowedHost, allowedHostsFor, allowedOrigin } from "../../web/request_guard.ts";
import { openWaymark } from "../../mod.ts";
import { createViewerApp } from "../../web/app.ts";
import type { Hono } from "npm:hono@4.13.19";

Deno.test("only loopback Host and Origin on the served port are allowed", () => {
  const hosts = allowedHostsFor(8080);
  assert.ok(allowedHost("127.0.0.1:8080", hosts));
  assert.ok(allowedHost("localhost:8080", hosts));
  assert.ok(allowedHost("LOCALHOST:8080", hosts));
  assert.ok(allowedHost("[::1]:8080", hosts));
  assert.ok(!allowedHost("127.0.0.1:8081", hosts));
  assert.ok(!allowedHost("evil.example:8080", hosts));
  assert.ok(!allowedHost("127.0.0.1.evil.example:8080", hosts));
  assert.ok(!allowedHost(undefined, hosts));
  assert.ok(allowedOrigin(undefined, hosts));
  assert.ok(allowedOrigin("http://localhost:8080", hosts));
  assert.ok(!allowedOrigin("http://localhost:3000", hosts));
  assert.ok(!allowedOrigin("https://evil.example", hosts));
  assert.ok(!allowedOrigin("null", hosts));
});

Deno.test("an MCP session idle past its timeout is closed; the client must initialize again", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-http-unit-" });
  const waymark = await openWaymark({ home, dbUrl: ":memory:" });
  const { app, close } = createMcpHttpApp(() => waymark.mcpServer(), {
    port: () => 80,
    idleTimeoutMs: 100,
  });
  const post = (body: unknown, session?: string) =>
    app.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: {
          host: "127.0.0.1",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" } : {}),
        },
        body: JSON.stringify(body),
      }),
    );
  try {
    const noSession = await post({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    assert.equal(noSession.status, 400);
    await noSession.body?.cancel();
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    });
    assert.equal(init.status, 200);
    const session = init.headers.get("mcp-session-id")!;
    assert.ok(session);
    await init.body?.cancel();
    const listed = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, session);
    assert.equal(listed.status, 200);
    await listed.body?.cancel();
    await new Promise((r) => setTimeout(r, 400));
    const expired = await post({ jsonrpc: "2.0", id: 3, method: "tools/list" }, session);
    assert.equal(expired.status, 404);
    await expired.body?.cancel();
  } finally {
    await close();
    await waymark.close();
    await Deno.remove(home, { recursive: true });
  }
});

function initialize(id: number) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  };
}

Deno.test("HTTP: a body over the cap is refused before it is read whole; live sessions are capped", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-http-unit-" });
  const waymark = await openWaymark({ home, dbUrl: ":memory:" });
  const { app, close } = createMcpHttpApp(() => waymark.mcpServer(), {
    port: () => 80,
    maxBodyBytes: 64 * 1024,
    maxSessions: 2,
  });
  const headers = {
    host: "127.0.0.1",
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  try {
    // a streamed body (no Content-Length): the reader stops at the cap
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 16 * 1024;
        if (pulled > 100 * 1024 * 1024) controller.close();
        else controller.enqueue(new Uint8Array(16 * 1024).fill(32));
      },
    });
    const big = await app.fetch(
      new Request(
        "http://127.0.0.1/mcp",
        { method: "POST", headers, body: stream, duplex: "half" } as RequestInit,
      ),
    );
    assert.equal(big.status, 413);
    const answer = await big.json();
    assert.match(answer.error.message, /limit is 65536 bytes/);
    assert.ok(pulled < 1024 * 1024, `read ${pulled} bytes of a 100 MB body`);

    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const init = await app.fetch(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers,
          body: JSON.stringify(initialize(i)),
        }),
      );
      assert.equal(init.status, 200);
      await init.body?.cancel();
      ids.push(init.headers.get("mcp-session-id")!);
    }
    const ping = (session: string) =>
      app.fetch(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers: { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
        }),
      );
    const oldest = await ping(ids[0]!);
    assert.equal(oldest.status, 404, "the session idle longest was closed for the third");
    await oldest.body?.cancel();
    for (const id of ids.slice(1)) {
      const live = await ping(id);
      assert.equal(live.status, 200);
      await live.body?.cancel();
    }
  } finally {
    await close();
    await waymark.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("both HTTP servers share one guard: no Host is refused, and refusals carry the CSP and nosniff", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-http-unit-" });
  const waymark = await openWaymark({ home, dbUrl: ":memory:" });
  const mcp = createMcpHttpApp(() => waymark.mcpServer(), { port: () => 4321 });
  const viewer = createViewerApp({
    db: waymark.store.db,
    allowedHosts: () => allowedHostsFor(4321),
  });
  try {
    const requests: [string, Hono, RequestInit & { headers: Record<string, string> }, number][] = [
      ["viewer, no Host", viewer.app, { headers: {} }, 403],
      ["viewer, foreign Host", viewer.app, { headers: { host: "evil.example:4321" } }, 403],
      ["viewer, POST", viewer.app, { method: "POST", headers: { host: "127.0.0.1:4321" } }, 405],
      ["mcp, no Host", mcp.app, { method: "POST", headers: {} }, 403],
      [
        "mcp, foreign Origin",
        mcp.app,
        { method: "POST", headers: { host: "127.0.0.1:4321", origin: "http://evil.example" } },
        403,
      ],
    ];
    for (const [what, app, init, status] of requests) {
      const path = app === mcp.app ? "/mcp" : "/";
      const response = await app.fetch(new Request(`http://127.0.0.1:4321${path}`, init));
      await response.body?.cancel();
      assert.equal(response.status, status, what);
      assert.match(
        response.headers.get("content-security-policy") ?? "",
        /default-src 'none'/,
        what,
      );
      assert.equal(response.headers.get("x-content-type-options"), "nosniff", what);
    }
  } finally {
    viewer.close();
    await mcp.close();
    await waymark.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("over HTTP too, a top-level __proto__ in tool arguments is refused like any unknown key", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-http-unit-" });
  const waymark = await openWaymark({ home, dbUrl: ":memory:" });
  const { app, close } = createMcpHttpApp(() => waymark.mcpServer(), { port: () => 80 });
  const post = (body: string, session?: string) =>
    app.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: {
          host: "127.0.0.1",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" } : {}),
        },
        body,
      }),
    );
  try {
    const init = await post(JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }));
    const session = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const called = await post(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"start_workflow","arguments":{"workflowId":"waymark.code_review","__proto__":{}}}}',
      session,
    );
    const text = await called.text();
    assert.match(text, /"code":"INVALID_ARGUMENTS"/);
    assert.match(text, /"reason":"unknown_key"/);
  } finally {
    await close();
    await waymark.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("HTTP: a 2026-07-28 request is served without a session, with the tasks extension", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-http-unit-" });
  const waymark = await openWaymark({ home, dbUrl: ":memory:" });
  const { app, close } = createMcpHttpApp(() => waymark.mcpServer(), { port: () => 80 });
  const envelope = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
      extensions: { "io.modelcontextprotocol/tasks": {} },
    },
  };
  const post = (method: string, params: Record<string, unknown>, name?: string) =>
    app.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: {
          host: "127.0.0.1",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": method,
          ...(name ? { "mcp-name": name } : {}),
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method,
          params: { ...params, _meta: envelope },
        }),
      }),
    );
  try {
    const discovered = await (await post("server/discover", {})).json();
    assert.deepEqual(discovered.result.capabilities.extensions, {
      "io.modelcontextprotocol/tasks": {},
    });
    const unknown = await (await post("tasks/get", { taskId: "nope" }, "nope")).json();
    assert.equal(unknown.error.code, -32602);
  } finally {
    await close();
    await waymark.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("HTTP: a body trickled a byte per chunk is read once; the memory it holds stays bounded", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-http-unit-" });
  const waymark = await openWaymark({ home, dbUrl: ":memory:" });
  const { app, close } = createMcpHttpApp(() => waymark.mcpServer(), { port: () => 80 });
  // 100 KB, one byte per chunk, as a body arriving a byte per TCP segment is read
  const body = new TextEncoder().encode(JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "ping",
    params: { pad: "x".repeat(100_000) },
  }));
  let sent = 0;
  const trickle = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= body.length) controller.close();
      else controller.enqueue(body.slice(sent, ++sent));
    },
  });
  try {
    const before = Deno.memoryUsage().heapUsed;
    const answer = await app.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: {
          host: "127.0.0.1",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": String(body.length),
        },
        body: trickle,
        duplex: "half",
      } as RequestInit),
    );
    assert.equal(answer.status, 400, "no session: initialize first");
    assert.match((await answer.json()).error.message, /No MCP session/);
    const grown = Deno.memoryUsage().heapUsed - before;
    // the SDK's clone kept ~700 bytes per chunk (about 70 MB here); one buffer keeps 100 KB
    assert.ok(grown < 24 * 1024 * 1024, `the heap grew ${Math.round(grown / 1e6)} MB`);
    assert.equal(sent, body.length, "read to the end, once");
  } finally {
    await close();
    await waymark.close();
    await Deno.remove(home, { recursive: true });
  }
});
