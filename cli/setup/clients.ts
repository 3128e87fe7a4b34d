/**
 * The MCP clients `waymark setup` knows, one entry each: where the client keeps its MCP servers
 * (per scope it offers), the file's format, the key the servers live under, and the shape of one
 * server's entry. Every other part of `setup` derives from this table.
 * @module
 */
import { join } from "node:path";
import type { FormatName } from "./formats.ts";

/** Where a configuration lives: the user's own file, or one in the project folder. */
export const SCOPES = ["user", "project"] as const;
/** A scope. */
export type Scope = (typeof SCOPES)[number];

/** What a client's file location depends on. */
export interface Place {
  /** The user's home folder. */
  home: string;
  /** The project folder (`--workspace`, else the working directory). */
  workspace: string;
  /** The operating system, as `Deno.build.os` names it. */
  os: string;
  /** An environment variable, or undefined. */
  env(name: string): string | undefined;
}

/** How the client starts waymark: an absolute command and its arguments. */
export interface Launch {
  /** Absolute path of the program. */
  command: string;
  /** Its arguments. */
  args: string[];
}

/** One MCP client. */
export interface Client {
  /** The client's name in messages. */
  title: string;
  /** Its file for each scope it offers. */
  files: Partial<Record<Scope, (at: Place) => string>>;
  /** The scope used when `--scope` is not given. */
  defaultScope: Scope;
  /** The file's format. */
  format: FormatName;
  /** The top-level key the servers live under. */
  serversKey: string;
  /** One server's entry. */
  entry(launch: Launch): Record<string, unknown>;
}

/** The OS's per-user folder for application settings. */
function appConfigDir(at: Place): string {
  if (at.os === "windows") return at.env("APPDATA") ?? join(at.home, "AppData", "Roaming");
  if (at.os === "darwin") return join(at.home, "Library", "Application Support");
  return xdgConfigDir(at);
}

/** The XDG per-user settings folder: Linux's, and that of tools that use it everywhere (OpenCode). */
function xdgConfigDir(at: Place): string {
  return at.env("XDG_CONFIG_HOME") ?? join(at.home, ".config");
}

const plain = (launch: Launch) => ({ command: launch.command, args: launch.args });
const typed = (launch: Launch) => ({ type: "stdio", command: launch.command, args: launch.args });
/** OpenCode's shape: the program and its arguments as one array. */
const local = (launch: Launch) => ({
  type: "local",
  command: [launch.command, ...launch.args],
  enabled: true,
});

/** The clients, by the name `--client` takes. */
export const CLIENTS = {
  "claude-code": {
    title: "Claude Code",
    files: {
      project: (at) => join(at.workspace, ".mcp.json"),
      user: (at) => join(at.home, ".claude.json"),
    },
    defaultScope: "project",
    format: "json",
    serversKey: "mcpServers",
    entry: typed,
  },
  "claude-desktop": {
    title: "Claude Desktop",
    files: { user: (at) => join(appConfigDir(at), "Claude", "claude_desktop_config.json") },
    defaultScope: "user",
    format: "json",
    serversKey: "mcpServers",
    entry: plain,
  },
  cursor: {
    title: "Cursor",
    files: {
      user: (at) => join(at.home, ".cursor", "mcp.json"),
      project: (at) => join(at.workspace, ".cursor", "mcp.json"),
    },
    defaultScope: "user",
    format: "json",
    serversKey: "mcpServers",
    entry: plain,
  },
  vscode: {
    title: "VS Code",
    files: {
      project: (at) => join(at.workspace, ".vscode", "mcp.json"),
      user: (at) => join(appConfigDir(at), "Code", "User", "mcp.json"),
    },
    defaultScope: "project",
    format: "jsonc",
    serversKey: "servers",
    entry: typed,
  },
  codex: {
    title: "Codex",
    files: { user: (at) => join(at.env("CODEX_HOME") ?? join(at.home, ".codex"), "config.toml") },
    defaultScope: "user",
    format: "toml",
    serversKey: "mcp_servers",
    entry: plain,
  },
  gemini: {
    title: "Gemini CLI",
    files: {
      user: (at) => join(at.home, ".gemini", "settings.json"),
      project: (at) => join(at.workspace, ".gemini", "settings.json"),
    },
    // the entry names this machine's paths, which a project's committed file should not
    defaultScope: "user",
    format: "jsonc",
    serversKey: "mcpServers",
    entry: plain,
  },
  opencode: {
    title: "OpenCode",
    files: {
      user: (at) => join(xdgConfigDir(at), "opencode", "opencode.json"),
      project: (at) => join(at.workspace, "opencode.json"),
    },
    defaultScope: "user",
    format: "jsonc",
    serversKey: "mcp",
    entry: local,
  },
} as const satisfies Record<string, Client>;

/** A client's name, as `--client` takes it. */
export type ClientName = keyof typeof CLIENTS;

/** The clients' names, in the table's order. */
export const CLIENT_NAMES = Object.keys(CLIENTS) as [ClientName, ...ClientName[]];
