/**
 * `deno run -A <url>/main.ts` works with no local config file: the checkout is served over
 * loopback HTTP and run from a folder that has no deno.json, both as a CLI and as an MCP server.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ROOT, tempHome } from "../helpers/server.ts";

function serveCheckout(): { url: string; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    if (path.includes("..")) return new Response("no", { status: 400 });
    try {
      const body = await Deno.readFile(`${ROOT}${path.slice(1)}`);
      const type = path.endsWith(".ts") ? "application/typescript" : "text/plain";
      return new Response(body, { headers: { "content-type": type } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test("main.ts runs from a URL with no local config: CLI and MCP over stdio", async () => {
  const checkout = serveCheckout();
  const { home, cleanup } = await tempHome();
  const outside = await Deno.makeTempDir({ prefix: "waymark-url-" });
  try {
    const listed = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--no-lock",
        "--quiet",
        `${checkout.url}/main.ts`,
        "workflows",
        "list",
        "--home",
        home,
      ],
      cwd: outside,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(listed.stdout);
    assert.equal(listed.code, 0, new TextDecoder().decode(listed.stderr));
    assert.match(stdout, /wr\.bug_investigation/);

    const client = new Client({ name: "url-run-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "-A",
          "--no-lock",
          "--quiet",
          `${checkout.url}/main.ts`,
          "serve",
          "--home",
          home,
        ],
        cwd: outside,
        stderr: "pipe",
      }),
    );
    try {
      const started = await client.callTool({
        name: "start_workflow",
        arguments: { workflowId: "wr.code_review" },
      });
      assert.equal(started.isError, undefined);
      assert.equal(
        (started.structuredContent as { pending: { stepId: string } }).pending.stepId.length > 0,
        true,
      );
    } finally {
      await client.close();
    }
  } finally {
    await checkout.close();
    await cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});
