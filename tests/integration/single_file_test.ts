/**
 * The single-file build (`deno task bundle`): the file alone, copied into an empty folder with no
 * deno.json, serves MCP over stdio to a real client, runs from a loopback URL, serves the viewer
 * with its assets, and carries the bundled workflows and the published JSON Schema.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { childEnv, ROOT, tempHome } from "../helpers/server.ts";
import { BUNDLED_IDS } from "../helpers/library.ts";
import { builtBundle } from "../helpers/builds.ts";
import { ONCE, serveOnLoopback } from "../helpers/loopback_origin.ts";

const decoder = new TextDecoder();

async function deno(
  args: string[],
  cwd: string,
): Promise<{ code: number; out: string; err: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return { code: out.code, out: decoder.decode(out.stdout), err: decoder.decode(out.stderr) };
}

/** The task's bundle (built once for the run), the file alone copied into an empty folder. */
async function lonelyBundle(): Promise<{ dir: string; file: string; cleanup(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "waymark-bundle-run-" });
  const file = join(dir, "waymark.js");
  await Deno.copyFile(await builtBundle(), file);
  return { dir, file, cleanup: () => Deno.remove(dir, { recursive: true }) };
}

async function driveOverStdio(command: string[], cwd: string, home: string): Promise<void> {
  const client = new Client({ name: "bundle-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: [...command, "serve", "--home", home],
      cwd,
      stderr: "pipe",
      env: childEnv(),
    }),
  );
  try {
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === "continue_workflow"));
    const listed = await client.callTool({ name: "list_workflows", arguments: {} });
    const ids = (listed.structuredContent as { workflows: { id: string }[] }).workflows.map((w) =>
      w.id
    );
    assert.deepEqual(ids, BUNDLED_IDS);
    const started = await client.callTool({
      name: "start_workflow",
      arguments: { workflowId: "waymark.code_review" },
    });
    assert.equal(started.isError, undefined, JSON.stringify(started.content));
    const first = started.structuredContent as {
      stateToken: string;
      ackToken: string;
      pending: { stepId: string };
    };
    const next = await client.callTool({
      name: "continue_workflow",
      arguments: {
        stateToken: first.stateToken,
        ackToken: first.ackToken,
        output: { notesMarkdown: "Read the change." },
      },
    });
    assert.equal(next.isError, undefined, JSON.stringify(next.content));
    const pending = (next.structuredContent as { pending: { stepId: string } }).pending;
    assert.notEqual(pending.stepId, first.pending.stepId);
  } finally {
    await client.close();
  }
}

/** Serves one file at `/waymark.js` on loopback. */
function serveFile(file: string): { url: string; close(): Promise<void> } {
  const served = serveOnLoopback(async (req) =>
    new URL(req.url).pathname === "/waymark.js"
      ? new Response(await Deno.readFile(file), {
        headers: { "content-type": "application/javascript" },
      })
      : new Response("not found", { status: 404 })
  );
  return { url: `${served.origin}/waymark.js`, close: served.close };
}

Deno.test("the bundle, alone in an empty folder, says what it is and carries the schema", async () => {
  const bundle = await lonelyBundle();
  try {
    assert.deepEqual([...Deno.readDirSync(bundle.dir)].map((e) => e.name), ["waymark.js"]);
    const version = await deno(
      ["run", "-A", "--quiet", ...ONCE, "waymark.js", "--version"],
      bundle.dir,
    );
    assert.equal(version.code, 0, version.err);
    assert.match(version.out, /^waymark \d+\.\d+\.\d+ \(bundle\)\n$/);
    const schema = await deno(
      ["run", "-A", "--quiet", ...ONCE, "waymark.js", "workflows", "schema"],
      bundle.dir,
    );
    assert.equal(schema.code, 0, schema.err);
    assert.equal(
      schema.out,
      await Deno.readTextFile(join(ROOT, "workflows", "workflow.schema.json")),
    );
  } finally {
    await bundle.cleanup();
  }
});

Deno.test("the bundle serves MCP over stdio, from its folder and from a loopback URL", async () => {
  const bundle = await lonelyBundle();
  const { home, cleanup } = await tempHome();
  const served = serveFile(bundle.file);
  const elsewhere = await Deno.makeTempDir({ prefix: "waymark-bundle-url-" });
  try {
    await driveOverStdio(["run", "-A", "--quiet", ...ONCE, "waymark.js"], bundle.dir, home);
    await driveOverStdio(["run", "-A", "--quiet", ...ONCE, served.url], elsewhere, home);
  } finally {
    await served.close();
    await cleanup();
    await bundle.cleanup();
    await Deno.remove(elsewhere, { recursive: true });
  }
});

Deno.test("the bundle's `view` serves pages and the embedded assets", async () => {
  const bundle = await lonelyBundle();
  const { home, cleanup } = await tempHome();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", ...ONCE, "waymark.js", "view", "--port", "0", "--home", home],
    cwd: bundle.dir,
    stdout: "piped",
    stderr: "null",
    env: { NO_COLOR: "1" },
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let printed = "";
    while (!/http:\/\/\S+/.test(printed)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`view exited before printing its URL: ${printed}`);
      printed += value;
    }
    reader.releaseLock();
    const base = /http:\/\/\S+/.exec(printed)![0].replace(/\/$/, "");
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Sessions · waymark<\/title>/);
    for (
      const [path, type] of [["/assets/style.css", "text/css"], ["/assets/app.js", "javascript"]]
    ) {
      const asset = await fetch(`${base}${path}`);
      assert.equal(asset.status, 200, path);
      assert.match(asset.headers.get("content-type") ?? "", new RegExp(type));
      assert.ok((await asset.text()).length > 500, `${path} has its content`);
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel().catch(() => {});
    await cleanup();
    await bundle.cleanup();
  }
});

Deno.test("the bundle's `serve --http` answers MCP over Streamable HTTP", async () => {
  const bundle = await lonelyBundle();
  const { home, cleanup } = await tempHome();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", ...ONCE, "waymark.js", "serve", "--http", "0", "--home", home],
    cwd: bundle.dir,
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  try {
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let logged = "";
    while (!/http:\/\/127\.0\.0\.1:\d+\/mcp/.test(logged)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve --http exited before logging its URL: ${logged}`);
      logged += value;
    }
    reader.releaseLock();
    const url = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(logged)![0];
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "bundle-test", version: "1.0.0" },
        },
      }),
    });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /"serverInfo":\{"name":"waymark"/);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stderr.cancel().catch(() => {});
    await cleanup();
    await bundle.cleanup();
  }
});

Deno.test("the bundle is reproducible: built again into another folder, it is the same bytes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-bundle-again-" });
  try {
    const again = join(dir, "waymark.js");
    const built = await deno(["task", "--quiet", "bundle", again], ROOT);
    assert.equal(built.code, 0, built.err);
    const first = await Deno.readFile(await builtBundle());
    const second = await Deno.readFile(again);
    assert.equal(second.length, first.length, "a second build differs in size");
    assert.ok(second.every((b, i) => b === first[i]), "a second build differs in its bytes");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
