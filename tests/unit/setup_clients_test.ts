/**
 * Where `waymark setup` looks for each client's file on each operating system (the integration
 * test runs on this machine's OS only), and that the client table is one closed set.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLIENT_NAMES, CLIENTS, type Place, type Scope } from "../../cli/setup/clients.ts";

const HOME = "/home/u";

function place(os: string, env: Record<string, string> = {}): Place {
  return { home: HOME, workspace: "/work/p", os, env: (name) => env[name] };
}

function fileOf(client: keyof typeof CLIENTS, scope: Scope, at: Place): string | undefined {
  return (CLIENTS[client].files as Partial<Record<Scope, (at: Place) => string>>)[scope]?.(at);
}

Deno.test("Claude Desktop's file is where each OS keeps application settings", () => {
  const name = "claude_desktop_config.json";
  assert.equal(
    fileOf("claude-desktop", "user", place("darwin")),
    join(HOME, "Library", "Application Support", "Claude", name),
  );
  assert.equal(
    fileOf("claude-desktop", "user", place("windows", { APPDATA: "C:/Users/u/AppData/Roaming" })),
    join("C:/Users/u/AppData/Roaming", "Claude", name),
  );
  assert.equal(
    fileOf("claude-desktop", "user", place("linux")),
    join(HOME, ".config", "Claude", name),
  );
  assert.equal(
    fileOf("claude-desktop", "user", place("linux", { XDG_CONFIG_HOME: "/x" })),
    join("/x", "Claude", name),
  );
  assert.equal(fileOf("claude-desktop", "project", place("linux")), undefined);
});

Deno.test("VS Code's user file is in its User folder; its project file in .vscode", () => {
  assert.equal(
    fileOf("vscode", "user", place("darwin")),
    join(HOME, "Library", "Application Support", "Code", "User", "mcp.json"),
  );
  assert.equal(
    fileOf("vscode", "user", place("windows", { APPDATA: "C:/R" })),
    join("C:/R", "Code", "User", "mcp.json"),
  );
  assert.equal(fileOf("vscode", "project", place("linux")), join("/work/p", ".vscode", "mcp.json"));
});

Deno.test("Codex follows CODEX_HOME; Cursor and Claude Code keep dot-files in home or project", () => {
  assert.equal(
    fileOf("codex", "user", place("linux", { CODEX_HOME: "/c" })),
    join("/c", "config.toml"),
  );
  assert.equal(fileOf("codex", "user", place("darwin")), join(HOME, ".codex", "config.toml"));
  assert.equal(fileOf("cursor", "user", place("windows")), join(HOME, ".cursor", "mcp.json"));
  assert.equal(fileOf("cursor", "project", place("linux")), join("/work/p", ".cursor", "mcp.json"));
  assert.equal(fileOf("claude-code", "project", place("linux")), join("/work/p", ".mcp.json"));
  assert.equal(fileOf("claude-code", "user", place("linux")), join(HOME, ".claude.json"));
});

Deno.test("Gemini CLI keeps .gemini/settings.json in home or project; OpenCode follows XDG on every OS", () => {
  assert.equal(fileOf("gemini", "user", place("windows")), join(HOME, ".gemini", "settings.json"));
  assert.equal(
    fileOf("gemini", "project", place("linux")),
    join("/work/p", ".gemini", "settings.json"),
  );
  const opencode = join(".config", "opencode", "opencode.json");
  assert.equal(fileOf("opencode", "user", place("darwin")), join(HOME, opencode));
  assert.equal(fileOf("opencode", "user", place("windows")), join(HOME, opencode));
  assert.equal(
    fileOf("opencode", "user", place("linux", { XDG_CONFIG_HOME: "/x" })),
    join("/x", "opencode", "opencode.json"),
  );
  assert.equal(fileOf("opencode", "project", place("linux")), join("/work/p", "opencode.json"));
});

Deno.test("every client offers its default scope, and the names are the table's keys", () => {
  assert.deepEqual(CLIENT_NAMES, [
    "claude-code",
    "claude-desktop",
    "cursor",
    "vscode",
    "codex",
    "gemini",
    "opencode",
  ]);
  for (const name of CLIENT_NAMES) {
    assert.ok(fileOf(name, CLIENTS[name].defaultScope, place("linux")), name);
  }
});
