/**
 * The Claude Code plugin in this repository (`.claude-plugin/marketplace.json`,
 * `plugins/waymark/`): its files checked by the real Claude Code from npm (`claude plugin
 * validate --strict`), installed the way a user installs it (`claude plugin marketplace add`
 * then `claude plugin install waymark@waymark`, in a throwaway HOME), its inventory as `claude
 * plugin details` reports it, its server shown connected by `claude mcp list`; and its launcher
 * on its own: the installed waymark found on PATH (the hook's text, the server's answers), and
 * without one, a clear line on stderr and nothing on stdout (a hook still exits 0).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { VERSION } from "../../version.ts";
import { claudeBin, hostTestOptions } from "../helpers/hosts.ts";
import { MAIN, ROOT } from "../helpers/server.ts";
import { runWithInput as run } from "../helpers/process.ts";
import { openWaymark } from "../../mod.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";

const PLUGIN = join(ROOT, "plugins", "waymark");
const LAUNCHER = join(PLUGIN, "scripts", "waymark-launch");

/** An environment for Claude Code in a throwaway HOME, talking to nothing but this machine. */
function claudeEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    NO_COLOR: "1",
    ...extra,
  };
}

/** Deno's cache of this process: a throwaway HOME would otherwise fetch every package again. */
async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

/** A folder holding a `waymark` command that runs this checkout (as `deno install` would). */
async function waymarkOnPath(dir: string): Promise<string> {
  const bin = join(dir, "bin");
  await Deno.mkdir(bin, { recursive: true });
  const script = join(bin, "waymark");
  await Deno.writeTextFile(
    script,
    `#!/bin/sh\nDENO_DIR="${await denoDir()}" exec "${Deno.execPath()}" run -A --quiet "${MAIN}" "$@"\n`,
  );
  await Deno.chmod(script, 0o755);
  return bin;
}

Deno.test("the marketplace names the plugin folder, whose manifest has waymark's name and version", async () => {
  const market = JSON.parse(
    await Deno.readTextFile(join(ROOT, ".claude-plugin", "marketplace.json")),
  );
  const manifest = JSON.parse(
    await Deno.readTextFile(join(PLUGIN, ".claude-plugin", "plugin.json")),
  );
  const [entry] = market.plugins;
  assert.equal(market.plugins.length, 1);
  assert.equal(join(ROOT, entry.source), PLUGIN);
  assert.equal(entry.name, manifest.name);
  assert.equal(manifest.name, "waymark");
  assert.equal(manifest.version, VERSION, "plugin.json's version follows version.ts");
  const hooks = JSON.parse(await Deno.readTextFile(join(PLUGIN, "hooks", "hooks.json")));
  const [sessionStart] = hooks.hooks.SessionStart;
  assert.deepEqual(sessionStart.matcher.split("|").sort(), [
    "clear",
    "compact",
    "resume",
    "startup",
  ]);
  assert.match(sessionStart.hooks[0].command, /waymark-launch" hook session-start$/);
});

Deno.test("the launcher without a waymark: one line on stderr, nothing on stdout; a hook exits 0", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-nobin-" });
  try {
    const env = { HOME: home, PATH: "/usr/bin:/bin" };
    const hook = await run("sh", [LAUNCHER, "hook", "session-start"], { env, stdin: "{}" });
    assert.equal(hook.code, 0);
    assert.equal(hook.stdout, "");
    assert.match(
      hook.stderr,
      /^waymark plugin: the waymark command is not installed .* deno install -g -A -f -n waymark /,
    );
    assert.equal(hook.stderr.trimEnd().split("\n").length, 1);
    const serve = await run("sh", [LAUNCHER, "serve"], { env });
    assert.equal(serve.code, 1);
    assert.equal(serve.stdout, "");
    assert.equal(serve.stderr, hook.stderr);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("the launcher finds waymark on PATH: the hook lists the open run, the server answers", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-launch-" }));
  try {
    const bin = await waymarkOnPath(dir);
    const workspace = join(dir, "project");
    await Deno.mkdir(workspace);
    const waymarkHome = join(dir, "waymark-home");
    const waymark = await openWaymark({ home: waymarkHome, workspace });
    try {
      const started = await startWorkflow(waymark.deps, {
        workflowId: "waymark.bug_investigation",
        goal: "login fails",
      }, {
        workspace: { workspace, gitBranch: null, gitHeadSha: null },
      });
      assert.ok(started.ok);
    } finally {
      await waymark.close();
    }
    const env = { HOME: dir, PATH: `${bin}:/usr/bin:/bin`, WAYMARK_HOME: waymarkHome };
    const hook = await run("sh", [LAUNCHER, "hook", "session-start"], {
      env,
      stdin: JSON.stringify({ cwd: workspace, source: "startup", hook_event_name: "SessionStart" }),
    });
    assert.equal(hook.stderr, "");
    assert.equal(hook.code, 0);
    assert.match(hook.stdout, /^1\. run_[0-9a-f]{16} waymark\.bug_investigation "login fails"$/m);
    assert.match(hook.stdout, /^ {3}continue_workflow \{"stateToken": "st1_/m);

    const init = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    });
    const serve = await run("sh", [LAUNCHER, "serve"], { env, stdin: `${init}\n` });
    const [first] = serve.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.equal(first.id, 1);
    assert.equal(first.result.serverInfo.name, "waymark");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "Claude Code validates the marketplace and the plugin, installs it from the repository, and connects its server",
  ...hostTestOptions("claude"),
  fn: async () => {
    const claude = claudeBin();
    const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-claude-" }));
    try {
      for (const path of [ROOT, PLUGIN]) {
        const checked = await run(claude, ["plugin", "validate", "--strict", path], {
          env: claudeEnv(home),
        });
        assert.equal(checked.code, 0, `${path}: ${checked.stdout}${checked.stderr}`);
        assert.match(checked.stdout, /Validation passed/);
      }
      const added = await run(claude, ["plugin", "marketplace", "add", ROOT], {
        env: claudeEnv(home),
      });
      assert.equal(added.code, 0, added.stdout + added.stderr);
      const installed = await run(claude, ["plugin", "install", "waymark@waymark"], {
        env: claudeEnv(home),
      });
      assert.equal(installed.code, 0, installed.stdout + installed.stderr);
      assert.match(installed.stdout, /Successfully installed plugin: waymark@waymark/);

      const details = await run(claude, ["plugin", "details", "waymark@waymark"], {
        env: claudeEnv(home),
      });
      assert.equal(details.code, 0, details.stderr);
      assert.match(details.stdout, /Skills \(3\)\s+resume, start, status/);
      assert.match(details.stdout, /Agents \(1\)\s+waymark-child/);
      assert.match(details.stdout, /Hooks \(1\)\s+SessionStart/);
      assert.match(details.stdout, /MCP servers \(1\)\s+waymark/);
      const alwaysOn = Number(/Always-on:\s+~(\d+) tok/.exec(details.stdout)?.[1]);
      assert.ok(
        alwaysOn > 0 && alwaysOn <= 200,
        `always-on cost ${alwaysOn} tokens (docs/hosts.md says ~123)`,
      );

      const bin = await waymarkOnPath(home);
      const listed = await run(claude, ["mcp", "list"], {
        cwd: home,
        env: claudeEnv(home, {
          PATH: `${bin}:${Deno.env.get("PATH")}`,
          WAYMARK_HOME: join(home, "w"),
        }),
      });
      assert.match(
        listed.stdout,
        /plugin:waymark:waymark: sh .*waymark-launch serve - ✔ Connected/,
        listed.stdout + listed.stderr,
      );
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});
