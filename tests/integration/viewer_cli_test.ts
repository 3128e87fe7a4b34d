/**
 * The viewer as people start it: `waymark view` (URL on stdout, loopback only, foreign Host and
 * writes refused on the wire) and `waymark serve --viewer` (URL on stderr; stdout stays
 * JSON-RPC, so an MCP client works over the same process).
 */
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { openWaymark } from "../../mod.ts";
import { childEnv, MAIN, ROOT, serveCheckout, tempHome } from "../helpers/server.ts";
import { inProcess, rawRequest, seedForkedReview, spawnView } from "../helpers/viewer_fixture.ts";
import { ONCE } from "../helpers/loopback_origin.ts";

Deno.test("waymark view: prints its URL, serves on 127.0.0.1 only, refuses foreign Host and POST", async () => {
  const { home, cleanup } = await tempHome();
  const waymark = await openWaymark({ home });
  const review = await seedForkedReview(inProcess(waymark));
  await waymark.close();
  const view = await spawnView(home);
  try {
    assert.match(view.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(`${view.url}sessions/ses_${review.sessionId}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Review PR #42/);

    const port = view.port;
    const get = (host: string) =>
      rawRequest(port, `GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    assert.match(await get("evil.example"), /^HTTP\/1\.1 403/);
    assert.match(await get(`evil.example:${port}`), /^HTTP\/1\.1 403/);
    assert.match(await get(`127.0.0.1:${port + 1}`), /^HTTP\/1\.1 403/);
    assert.match(await get(`127.0.0.1:${port}`), /^HTTP\/1\.1 200/);
    assert.match(await get(`localhost:${port}`), /^HTTP\/1\.1 200/);
    const post = await rawRequest(
      port,
      `POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    );
    assert.match(post, /^HTTP\/1\.1 405/);
    const viaFetch = await fetch(view.url, { method: "POST", body: "x" });
    assert.equal(viaFetch.status, 405);
    await viaFetch.body?.cancel();

    // loopback only: nothing listens on the machine's other addresses
    const others = Deno.networkInterfaces().filter((i) =>
      i.family === "IPv4" && !i.address.startsWith("127.")
    );
    for (const iface of others.slice(0, 2)) {
      await assert.rejects(Deno.connect({ hostname: iface.address, port }));
    }
  } finally {
    const { code, stderr } = await view.stop();
    assert.equal(code, 0, stderr);
    await cleanup();
  }
});

Deno.test("waymark serve --viewer: MCP over stdio and the viewer side by side; URL on stderr only", async () => {
  const { home, cleanup } = await tempHome();
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      "run",
      "-A",
      "--quiet",
      MAIN,
      "serve",
      "--home",
      home,
      "--viewer",
      "--viewer-port",
      "0",
    ],
    cwd: ROOT,
    stderr: "pipe",
    env: childEnv(),
  });
  let stderr = "";
  const found = Promise.withResolvers<string>();
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderr += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    const m = /viewer: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stderr);
    if (m) found.resolve(m[1]!);
  });
  const client = new Client({ name: "viewer-cli-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    const url = await Promise.race([
      found.promise,
      new Promise<string>((_, reject) =>
        setTimeout(() => reject(new Error(`no viewer URL on stderr: ${stderr}`)), 30_000)
      ),
    ]);
    const started = await client.callTool({
      name: "start_workflow",
      arguments: { workflowId: "waymark.code_review", goal: "Seen in the side-by-side viewer" },
    });
    assert.equal(started.isError, undefined);
    const sessionId = (started.structuredContent as { session: { sessionId: string } }).session
      .sessionId;
    const page = await fetch(`${url}sessions/${sessionId}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Seen in the side-by-side viewer/);
  } finally {
    await client.close();
    await cleanup();
  }
});

Deno.test("waymark view runs from a URL with no config: JSX pragma and embedded assets load remotely", async () => {
  const checkout = serveCheckout();
  const { home, cleanup } = await tempHome();
  const outside = await Deno.makeTempDir({ prefix: "waymark-url-view-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-lock",
      "--quiet",
      ...ONCE,
      `${checkout.url}/main.ts`,
      "view",
      "--home",
      home,
      "--port",
      "0",
    ],
    cwd: outside,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!/waymark viewer: (\S+)\n/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`view exited: ${out}\n${await stderr}`);
      out += value;
    }
    reader.releaseLock();
    const url = /waymark viewer: (\S+)\n/.exec(out)![1]!;
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<h1>Sessions<\/h1>/);
    const css = await fetch(`${url}assets/style.css`);
    assert.match(await css.text(), /prefers-color-scheme: dark/);
    const js = await fetch(`${url}assets/app.js`);
    assert.match(await js.text(), /EventSource/);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel().catch(() => {});
    await stderr;
    await checkout.close();
    await Deno.remove(outside, { recursive: true }).catch(() => {});
    await cleanup();
  }
});
