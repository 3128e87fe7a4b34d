/**
 * `waymark setup --client NAME`, run as a user runs it (the real command, a temporary HOME and
 * project folder), against fixture configuration files of each client: the entry lands in the
 * client's own file and format, other servers and settings are kept (every line of the file
 * still there, in order), a second run changes nothing, a malformed file is refused with its path
 * and left as it was, `--print` writes nothing, and the written entry starts waymark from another
 * folder for a real MCP client.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "npm:smol-toml@1.9.1";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { childEnv, MAIN, ROOT } from "../helpers/server.ts";
import { claudeBin, geminiBin, hostTestOptions } from "../helpers/hosts.ts";

const FIXTURES = join(ROOT, "tests", "fixtures", "setup");
const decoder = new TextDecoder();

interface Folders {
  home: string;
  workspace: string;
}

/** Where each client keeps its servers, written out here independently of `cli/setup/`. */
const CASES = [
  {
    client: "claude-code",
    args: [],
    fixture: "claude_code.mcp.json",
    file: (f: Folders) => join(f.workspace, ".mcp.json"),
    key: "mcpServers",
    malformed: "malformed_trailing_comma.json",
  },
  {
    client: "claude-code",
    args: ["--scope", "user"],
    fixture: "claude_code_user.claude.json",
    file: (f: Folders) => join(f.home, ".claude.json"),
    key: "mcpServers",
    malformed: "malformed_servers_array.json",
  },
  {
    client: "claude-desktop",
    args: [],
    fixture: "claude_desktop_config.json",
    file: (f: Folders) => join(f.home, ".config", "Claude", "claude_desktop_config.json"),
    key: "mcpServers",
    malformed: "malformed_trailing_comma.json",
  },
  {
    client: "cursor",
    args: [],
    fixture: "cursor.mcp.json",
    file: (f: Folders) => join(f.home, ".cursor", "mcp.json"),
    key: "mcpServers",
    malformed: "malformed_servers_array.json",
  },
  {
    client: "vscode",
    args: [],
    fixture: "vscode.mcp.json",
    file: (f: Folders) => join(f.workspace, ".vscode", "mcp.json"),
    key: "servers",
    malformed: "malformed_unclosed.json",
  },
  {
    client: "codex",
    args: [],
    fixture: "codex.config.toml",
    file: (f: Folders) => join(f.home, ".codex", "config.toml"),
    key: "mcp_servers",
    malformed: "malformed.config.toml",
  },
  {
    client: "gemini",
    args: [],
    fixture: "gemini.settings.json",
    file: (f: Folders) => join(f.home, ".gemini", "settings.json"),
    key: "mcpServers",
    malformed: "malformed_servers_array.json",
  },
  {
    client: "gemini",
    args: ["--scope", "project"],
    fixture: "gemini.settings.json",
    file: (f: Folders) => join(f.workspace, ".gemini", "settings.json"),
    key: "mcpServers",
    malformed: "malformed_unclosed.json",
  },
  {
    client: "opencode",
    args: [],
    fixture: "opencode.json",
    file: (f: Folders) => join(f.home, ".config", "opencode", "opencode.json"),
    key: "mcp",
    malformed: "malformed_unclosed.json",
  },
  {
    client: "opencode",
    args: ["--scope", "project"],
    fixture: "opencode.json",
    file: (f: Folders) => join(f.workspace, "opencode.json"),
    key: "mcp",
    malformed: "malformed_mcp_array.json",
  },
];

/** The program and arguments of an entry (OpenCode writes them as one `command` array). */
function launchOf(entry: Record<string, unknown>): { command: unknown; args: unknown } {
  if (Array.isArray(entry.command)) {
    const [command, ...args] = entry.command;
    return { command, args };
  }
  return { command: entry.command, args: entry.args };
}

type Doc = Record<string, Record<string, Record<string, unknown>>>;

function read(file: string, text: string): Doc {
  // as plain JSON data: the TOML parser's tables have no prototype
  return JSON.parse(JSON.stringify(file.endsWith(".toml") ? parseToml(text) : parseJsonc(text)));
}

/** The Deno cache this test runs on, so the command run under another HOME finds its packages. */
const DENO_DIR = Deno.env.get("DENO_DIR") ?? JSON.parse(
  decoder.decode(
    (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
      .output()).stdout,
  ),
).denoDir as string;

/** The environment of a user whose home is `home` (no variable moving the clients' files). */
function userEnv(home: string): Record<string, string> {
  const env = childEnv({ HOME: home, DENO_DIR });
  for (const name of ["XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA", "WAYMARK_HOME"]) delete env[name];
  return env;
}

async function folders(): Promise<Folders & { cleanup(): Promise<void> }> {
  const root = await Deno.makeTempDir({ prefix: "waymark-setup-" });
  const home = join(root, "home");
  const workspace = join(root, "project");
  await Deno.mkdir(home);
  await Deno.mkdir(workspace);
  return { home, workspace, cleanup: () => Deno.remove(root, { recursive: true }) };
}

async function setup(
  at: Folders,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "setup", ...args],
    cwd: at.workspace,
    clearEnv: true,
    env: userEnv(at.home),
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, out: decoder.decode(out.stdout), err: decoder.decode(out.stderr) };
}

async function place(fixture: string, file: string): Promise<string> {
  await Deno.mkdir(dirname(file), { recursive: true });
  const text = await Deno.readTextFile(join(FIXTURES, fixture));
  await Deno.writeTextFile(file, text);
  return text;
}

/** Whether every line of `before` is in `after`, in the same order. */
function linesKept(before: string, after: string): boolean {
  const rest = after.split("\n");
  let at = 0;
  for (const line of before.split("\n")) {
    while (at < rest.length && rest[at] !== line) at++;
    if (at === rest.length) return false;
    at++;
  }
  return true;
}

for (const c of CASES) {
  const label = [c.client, ...c.args].join(" ");
  Deno.test(`setup ${label}: merged into ${c.fixture}, kept the rest, idempotent`, async () => {
    const at = await folders();
    try {
      const file = c.file(at);
      const before = await place(c.fixture, file);
      const first = await setup(at, ["--client", c.client, ...c.args]);
      assert.equal(first.code, 0, first.err);
      assert.match(first.out, /^added "waymark" in /);
      assert.ok(first.out.includes(file), first.out);
      const after = await Deno.readTextFile(file);
      assert.ok(linesKept(before, after), `lines of ${c.fixture} lost:\n${after}`);
      const old = read(file, before);
      const now = read(file, after);
      const entry = launchOf(now[c.key]!.waymark!);
      assert.equal(entry.command, Deno.execPath());
      assert.deepEqual(entry.args, ["run", "-A", "--no-config", MAIN, "serve"]);
      const { waymark: _, ...others } = now[c.key]!;
      assert.deepEqual(others, old[c.key]);
      assert.deepEqual({ ...now, [c.key]: null }, { ...old, [c.key]: null });

      const again = await setup(at, ["--client", c.client, ...c.args]);
      assert.equal(again.code, 0, again.err);
      assert.match(again.out, /already this entry; nothing changed/);
      assert.equal(await Deno.readTextFile(file), after);
    } finally {
      await at.cleanup();
    }
  });

  Deno.test(`setup ${label}: a malformed file is refused with its path, untouched`, async () => {
    const at = await folders();
    try {
      const file = c.file(at);
      const before = await place(c.malformed, file);
      const result = await setup(at, ["--client", c.client, ...c.args]);
      assert.equal(result.code, 1, result.err);
      assert.ok(result.err.includes(file), result.err);
      assert.match(result.err, /fix or move the file and run again \(nothing was written\)/);
      assert.equal(result.out, "");
      assert.equal(await Deno.readTextFile(file), before);
    } finally {
      await at.cleanup();
    }
  });
}

Deno.test("setup refuses to edit an entry written in a form it cannot replace in place", async () => {
  const at = await folders();
  try {
    const file = join(at.home, ".codex", "config.toml");
    await Deno.mkdir(dirname(file));
    const before = '[mcp_servers]\nwaymark = { command = "old" }\n';
    await Deno.writeTextFile(file, before);
    const result = await setup(at, ["--client", "codex"]);
    assert.equal(result.code, 1, result.err);
    assert.match(result.err, /written in a form setup does not edit; remove that entry/);
    assert.equal(await Deno.readTextFile(file), before);
  } finally {
    await at.cleanup();
  }
});

Deno.test("setup writes through a symbolic link, which stays a link", async () => {
  const at = await folders();
  try {
    const real = join(at.home, "dotfiles", "mcp.json");
    await Deno.mkdir(dirname(real));
    await Deno.writeTextFile(real, '{"mcpServers": {}}\n');
    await Deno.mkdir(join(at.home, ".cursor"));
    const link = join(at.home, ".cursor", "mcp.json");
    await Deno.symlink(real, link);
    const result = await setup(at, ["--client", "cursor"]);
    assert.equal(result.code, 0, result.err);
    assert.ok((await Deno.lstat(link)).isSymlink);
    assert.ok(JSON.parse(await Deno.readTextFile(real)).mcpServers.waymark);
  } finally {
    await at.cleanup();
  }
});

Deno.test("setup creates the file (and its folders) when the client has none yet", async () => {
  const at = await folders();
  try {
    const result = await setup(at, ["--client", "claude-desktop"]);
    assert.equal(result.code, 0, result.err);
    const file = join(at.home, ".config", "Claude", "claude_desktop_config.json");
    assert.deepEqual(Object.keys(JSON.parse(await Deno.readTextFile(file)).mcpServers), [
      "waymark",
    ]);
  } finally {
    await at.cleanup();
  }
});

Deno.test("setup --print prints the entry in the client's format and writes nothing", async () => {
  const at = await folders();
  try {
    const toml = await setup(at, ["--client", "codex", "--print"]);
    assert.equal(toml.code, 0, toml.err);
    const entry = (parseToml(toml.out) as Doc).mcp_servers!.waymark!;
    assert.equal(entry.command, Deno.execPath());
    const json = await setup(at, ["--client", "vscode", "--print"]);
    assert.equal((JSON.parse(json.out) as Doc).servers!.waymark!.type, "stdio");
    assert.deepEqual([...Deno.readDirSync(at.home)], []);
    assert.deepEqual([...Deno.readDirSync(at.workspace)], []);
  } finally {
    await at.cleanup();
  }
});

Deno.test("setup --profile deepwork adds a `deepwork` entry beside waymark's", async () => {
  const at = await folders();
  try {
    assert.equal((await setup(at, ["--client", "cursor"])).code, 0);
    const result = await setup(at, ["--client", "cursor", "--profile", "deepwork"]);
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /added "deepwork" .*1 other server kept/s);
    const servers = JSON.parse(await Deno.readTextFile(join(at.home, ".cursor", "mcp.json")))
      .mcpServers;
    assert.deepEqual(Object.keys(servers).sort(), ["deepwork", "waymark"]);
    assert.deepEqual(servers.deepwork.args.slice(-3), ["serve", "--profile", "deepwork"]);
  } finally {
    await at.cleanup();
  }
});

Deno.test("setup replaces an older waymark entry and says what it was", async () => {
  const at = await folders();
  try {
    const file = join(at.workspace, ".mcp.json");
    const old = { command: "npx", args: ["--yes", "deno@2.9.6", "run", "-A", "/old/main.ts"] };
    await Deno.writeTextFile(file, JSON.stringify({ mcpServers: { waymark: old } }));
    const result = await setup(at, ["--client", "claude-code"]);
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, /^replaced "waymark" .*it was .*\/old\/main\.ts/s);
    assert.equal(
      JSON.parse(await Deno.readTextFile(file)).mcpServers.waymark.command,
      Deno.execPath(),
    );
  } finally {
    await at.cleanup();
  }
});

Deno.test("setup refuses an unknown client and a scope the client lacks, naming the choices", async () => {
  const at = await folders();
  try {
    const unknown = await setup(at, ["--client", "emacs"]);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.err,
      /--client must be one of claude-code, claude-desktop, cursor, vscode, codex, gemini, opencode/,
    );
    const scope = await setup(at, ["--client", "claude-desktop", "--scope", "project"]);
    assert.equal(scope.code, 2);
    assert.match(scope.err, /Claude Desktop has no project configuration; use --scope user/);
    assert.deepEqual([...Deno.readDirSync(at.home)], []);
  } finally {
    await at.cleanup();
  }
});

/** The written entries started by a real MCP client: a host's own format, read back as data. */
const STARTED = [
  {
    client: "vscode",
    file: (f: Folders) => join(f.workspace, ".vscode", "mcp.json"),
    key: "servers",
  },
  {
    client: "opencode",
    file: (f: Folders) => join(f.home, ".config", "opencode", "opencode.json"),
    key: "mcp",
  },
  {
    client: "codex",
    file: (f: Folders) => join(f.home, ".codex", "config.toml"),
    key: "mcp_servers",
  },
];

for (const c of STARTED) {
  Deno.test(`the ${c.client} entry setup wrote starts waymark from another folder for a real MCP client`, async () => {
    const at = await folders();
    try {
      const home = join(at.home, "waymark-data");
      const result = await setup(at, ["--client", c.client, "--home", home]);
      assert.equal(result.code, 0, result.err);
      const file = c.file(at);
      const entry = launchOf(read(file, await Deno.readTextFile(file))[c.key]!.waymark!);
      const client = new Client({ name: "setup-test", version: "1.0.0" });
      await client.connect(
        new StdioClientTransport({
          command: entry.command as string,
          args: entry.args as string[],
          cwd: at.home,
          env: userEnv(at.home),
          stderr: "pipe",
        }),
      );
      try {
        const listed = await client.callTool({ name: "list_workflows", arguments: {} });
        assert.equal(listed.isError, undefined, JSON.stringify(listed.content));
        assert.ok((listed.structuredContent as { workflows: unknown[] }).workflows.length > 0);
      } finally {
        await client.close();
      }
      assert.ok((await Deno.stat(join(home, "waymark.db"))).isFile);
    } finally {
      await at.cleanup();
    }
  });
}

/** Runs a host's own command in the user's setting; its output, whatever the exit code. */
async function host(
  at: Folders,
  command: string,
  args: string[],
): Promise<string> {
  const out = await new Deno.Command(command, {
    args,
    cwd: at.workspace,
    clearEnv: true,
    env: {
      ...userEnv(at.home),
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return decoder.decode(out.stdout) + decoder.decode(out.stderr);
}

/** Records in ~/.claude.json what Claude Code's dialogs record: the folder trusted, its .mcp.json servers approved. */
async function approveProject(at: Folders): Promise<void> {
  const file = join(at.home, ".claude.json");
  const config = JSON.parse(await Deno.readTextFile(file).catch(() => "{}"));
  config.projects = {
    [at.workspace]: { hasTrustDialogAccepted: true, enabledMcpjsonServers: ["waymark"] },
  };
  await Deno.writeTextFile(file, JSON.stringify(config));
}

for (const scope of ["project", "user"]) {
  Deno.test({
    name: `claude mcp list shows the claude-code entry (${scope}) connected`,
    ...hostTestOptions("claude"),
    fn: async () => {
      const at = await folders();
      try {
        const result = await setup(at, ["--client", "claude-code", "--scope", scope]);
        assert.equal(result.code, 0, result.err);
        if (scope === "project") await approveProject(at);
        const listed = await host(at, claudeBin(), ["mcp", "list"]);
        assert.match(listed, /^waymark: .*main\.ts serve - ✔ Connected$/m, listed);
      } finally {
        await at.cleanup();
      }
    },
  });

  Deno.test({
    name: `gemini mcp list shows the gemini entry (${scope}) connected`,
    ...hostTestOptions("gemini"),
    fn: async () => {
      const at = await folders();
      try {
        const result = await setup(at, ["--client", "gemini", "--scope", scope]);
        assert.equal(result.code, 0, result.err);
        // Gemini CLI starts no server in a folder the user has not trusted
        const trusted = join(at.home, ".gemini", "trustedFolders.json");
        await Deno.mkdir(dirname(trusted), { recursive: true });
        await Deno.writeTextFile(trusted, JSON.stringify({ [at.workspace]: "TRUST_FOLDER" }));
        const listed = await host(at, "node", [geminiBin(), "mcp", "list"]);
        assert.match(listed, /^✓ waymark: .*main\.ts serve \(stdio\) - Connected$/m, listed);
      } finally {
        await at.cleanup();
      }
    },
  });
}
