/**
 * `deno run -A <url>/main.ts` works with no local config file: the checkout is served over
 * loopback HTTP and run from a folder that has no deno.json, both as a CLI and as an MCP server.
 */
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { childEnv, serveCheckout, tempHome } from "../helpers/server.ts";
import { ONCE } from "../helpers/loopback_origin.ts";

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
        ...ONCE,
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
    assert.match(stdout, /waymark\.bug_investigation/);

    const client = new Client({ name: "url-run-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "-A",
          "--no-lock",
          "--quiet",
          ...ONCE,
          `${checkout.url}/main.ts`,
          "serve",
          "--home",
          home,
        ],
        cwd: outside,
        stderr: "pipe",
        env: childEnv(),
      }),
    );
    try {
      const started = await client.callTool({
        name: "start_workflow",
        arguments: { workflowId: "waymark.code_review" },
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
