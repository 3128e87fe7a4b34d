/**
 * The one-line install: `deno install -g -A -n waymark <single-file build>` puts a `waymark`
 * command in a temporary DENO_INSTALL_ROOT, from a loopback URL (as from a release) and from the
 * file (as from a clone). The installed command says its build kind, serves MCP over stdio to a
 * real client from another folder, and its `setup` points a client at the same script.
 */
import assert from "node:assert/strict";
import { delimiter, dirname, join } from "node:path";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { childEnv, tempHome } from "../helpers/server.ts";
import { builtBundle } from "../helpers/builds.ts";

const decoder = new TextDecoder();

/** The environment an installed command runs in: its bin folder and this test's Deno on PATH. */
function installedEnv(root: string): Record<string, string> {
  const path = [join(root, "bin"), dirname(Deno.execPath()), Deno.env.get("PATH") ?? ""];
  return childEnv({ PATH: path.join(delimiter) });
}

async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number; out: string; err: string }> {
  const out = await new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...options.env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, out: decoder.decode(out.stdout), err: decoder.decode(out.stderr) };
}

/** Installs `script` as `waymark` into a fresh DENO_INSTALL_ROOT; the command's path. */
async function install(script: string, cwd: string): Promise<{ root: string; bin: string }> {
  const root = await Deno.makeTempDir({ prefix: "waymark-install-root-" });
  const result = await run(
    Deno.execPath(),
    ["install", "-g", "-A", "-f", "-n", "waymark", script],
    {
      cwd,
      env: { DENO_INSTALL_ROOT: root },
    },
  );
  assert.equal(result.code, 0, result.err);
  const bin = join(root, "bin", Deno.build.os === "windows" ? "waymark.cmd" : "waymark");
  assert.ok((await Deno.stat(bin)).isFile, `no ${bin}`);
  return { root, bin };
}

/** Serves one file at `/waymark.js` on loopback. */
function serveFile(file: string): { url: string; close(): Promise<void> } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) =>
      new URL(req.url).pathname === "/waymark.js"
        ? new Response(await Deno.readFile(file), {
          headers: { "content-type": "application/javascript" },
        })
        : new Response("not found", { status: 404 }),
  );
  return { url: `http://127.0.0.1:${server.addr.port}/waymark.js`, close: () => server.shutdown() };
}

async function listWorkflows(
  bin: string,
  options: { cwd: string; env: Record<string, string>; home: string },
) {
  const client = new Client({ name: "install-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: bin,
      args: ["serve", "--home", options.home],
      cwd: options.cwd,
      env: options.env,
      stderr: "pipe",
    }),
  );
  try {
    const listed = await client.callTool({ name: "list_workflows", arguments: {} });
    assert.equal(listed.isError, undefined, JSON.stringify(listed.content));
    return (listed.structuredContent as { workflows: { id: string }[] }).workflows.map((w) => w.id);
  } finally {
    await client.close();
  }
}

Deno.test("deno install puts `waymark` on PATH from a URL and from the file", async () => {
  const scratch = await Deno.makeTempDir({ prefix: "waymark-install-" });
  const { home, cleanup } = await tempHome();
  const file = join(scratch, "waymark.js");
  await Deno.copyFile(await builtBundle(), file); // `deno task bundle`'s, built once for the run
  const served = serveFile(file);
  const roots: string[] = [];
  try {
    for (const script of [served.url, file]) {
      const { root, bin } = await install(script, scratch);
      roots.push(root);
      const env = installedEnv(root);
      // by name, as a user types it, from a folder that is not the install's
      const version = await run("waymark", ["--version"], { cwd: home, env });
      assert.equal(version.code, 0, version.err);
      assert.match(version.out, /^waymark \d+\.\d+\.\d+ \(bundle\)\n$/);

      const ids = await listWorkflows(bin, { cwd: home, env, home });
      assert.ok(ids.includes("waymark.code_review"), ids.join(", "));

      const printed = await run("waymark", ["setup", "--client", "cursor", "--print"], {
        cwd: home,
        env,
      });
      assert.equal(printed.code, 0, printed.err);
      const entry = JSON.parse(printed.out).mcpServers.waymark;
      assert.equal(entry.command, Deno.execPath());
      assert.deepEqual(entry.args, ["run", "-A", "--no-config", script, "serve"]);
    }
  } finally {
    await served.close();
    for (const root of roots) await Deno.remove(root, { recursive: true });
    await Deno.remove(scratch, { recursive: true });
    await cleanup();
  }
});
