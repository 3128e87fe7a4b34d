/**
 * Running a real host non-interactively against the scripted model: a throwaway HOME with
 * waymark's entry written by `waymark setup` itself, a WAYMARK_HOME, a workspace folder, and an
 * environment with nothing of the machine's own (no real keys, no telemetry, no update checks;
 * the model's URL on loopback).
 * @module
 */
import { join } from "node:path";
import { warm } from "../../scripts/warm.ts";
import { claudeBin, geminiBin } from "./hosts.ts";
import { MAIN, ROOT } from "./server.ts";

/** Where a host runs: its HOME, waymark's home, and the workspace it works in. */
export interface HostPlace {
  /** The host's HOME (its configuration lives here). */
  home: string;
  /** WAYMARK_HOME for the server the host starts. */
  waymarkHome: string;
  /** The workspace folder (the host's working directory). */
  workspace: string;
  /** Removes the three folders. */
  cleanup(): Promise<void>;
}

/** What one host invocation printed. */
export interface HostOutput {
  /** Exit code. */
  code: number;
  /** Its stdout. */
  stdout: string;
  /** Its stderr. */
  stderr: string;
}

/** The Deno cache of this process, so servers under a throwaway HOME find their packages. */
function denoDir(): string {
  return Deno.env.get("DENO_DIR") ??
    join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");
}

/** The environment every host and its waymark server get: only what they need. */
function baseEnv(place: HostPlace): Record<string, string> {
  return {
    // a `waymark` command of this checkout first (`installPlugin` writes it), as an install would
    PATH: `${join(place.home, "bin")}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    HOME: place.home,
    DENO_DIR: denoDir(),
    DENO_NO_UPDATE_CHECK: "1",
    // the test run's GC setting (scripts/test.ts) reaches the servers a host starts, as others'
    ...(Deno.env.get("DENO_V8_FLAGS") ? { DENO_V8_FLAGS: Deno.env.get("DENO_V8_FLAGS")! } : {}),
    WAYMARK_HOME: place.waymarkHome,
    NO_COLOR: "1",
    TERM: "dumb",
  };
}

/** Runs a command to its end, collecting output (it gets no stdin). */
async function run(
  cmd: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<HostOutput> {
  const child = new Deno.Command(cmd, {
    args,
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, options.timeoutMs ?? 240_000);
  const out = await child.output();
  clearTimeout(timer);
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

let warmed: Promise<number> | undefined;

/**
 * Makes a throwaway place and writes waymark's entry into each host's configuration with
 * `waymark setup --client NAME --scope user` (the command a user runs). The first place warms the
 * cache for what a host's entry runs (`scripts/warm.ts`): a host gives its server a deadline, and a
 * package fetched mid-call on a cold cache would fail the host, not waymark.
 */
export async function hostPlace(...clients: ("claude-code" | "gemini")[]): Promise<HostPlace> {
  if ((await (warmed ??= warm())) !== 0) throw new Error("scripts/warm.ts failed");
  const root = await Deno.makeTempDir({ prefix: "waymark-host-" });
  const place: HostPlace = {
    home: join(root, "home"),
    waymarkHome: join(root, "waymark"),
    workspace: join(root, "work"),
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
  for (const dir of [place.home, place.waymarkHome, place.workspace]) {
    await Deno.mkdir(dir, { recursive: true });
  }
  for (const client of clients) await setupClient(place, client);
  if (clients.includes("gemini")) await geminiSettings(place);
  return place;
}

/**
 * Gemini CLI's user settings after `setup` wrote waymark's entry: what a run without a person
 * needs besides it (the API-key auth, no folder-trust prompt, no telemetry or update checks).
 */
async function geminiSettings(place: HostPlace): Promise<void> {
  const file = join(place.home, ".gemini", "settings.json");
  const settings = JSON.parse(await Deno.readTextFile(file));
  Object.assign(settings, {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  });
  await Deno.writeTextFile(file, JSON.stringify(settings, null, 2));
}

/** Writes waymark's entry for a client into the place's HOME with `waymark setup`. */
export async function setupClient(place: HostPlace, client: string): Promise<void> {
  const out = await run(
    Deno.execPath(),
    ["run", "-A", "--quiet", MAIN, "setup", "--client", client, "--scope", "user"],
    { cwd: place.workspace, env: baseEnv(place) },
  );
  if (out.code !== 0) throw new Error(`waymark setup --client ${client}: ${out.stderr}`);
}

/**
 * Adds a remote waymark to the place's Claude Code with the host's own command (`claude mcp add
 * --transport http`), sending `Authorization: Bearer <token>` on every request.
 */
export async function addHttpServer(place: HostPlace, url: URL, token: string): Promise<void> {
  const out = await run(
    claudeBin(),
    [
      "mcp",
      "add",
      "--transport",
      "http",
      "--scope",
      "user",
      "waymark",
      url.href,
      "--header",
      `Authorization: Bearer ${token}`,
    ],
    { cwd: place.workspace, env: baseEnv(place) },
  );
  if (out.code !== 0) throw new Error(`claude mcp add: ${out.stdout}${out.stderr}`);
}

/** Options of one `claude -p` run. */
export interface ClaudeRun {
  /** The user's prompt. */
  prompt: string;
  /** The stand-in model's URL. */
  modelUrl: string;
  /** Extra arguments (`--resume ID`, `--continue`, `--plugin-dir DIR`). */
  args?: string[];
  /** Extra environment. */
  env?: Record<string, string>;
  /** More tools to allow (another MCP server's, `mcp__NAME`). */
  allow?: string[];
}

/**
 * Tools the scripted model may use without asking: waymark's (from `setup`'s entry or from the
 * plugin), the shell, subagents.
 */
const CLAUDE_ALLOWED = "mcp__waymark,mcp__plugin_waymark_waymark,Bash,Agent,Task";

/**
 * Installs the repository's Claude Code plugin into the place the way a user does (`claude plugin
 * marketplace add <repo>`, `claude plugin install waymark@waymark`), with a `waymark` command of
 * this checkout on the place's PATH for its launcher.
 */
export async function installPlugin(place: HostPlace): Promise<void> {
  const bin = join(place.home, "bin");
  await Deno.mkdir(bin, { recursive: true });
  await Deno.writeTextFile(
    join(bin, "waymark"),
    `#!/bin/sh\nexec "${Deno.execPath()}" run -A --quiet --no-config "${MAIN}" "$@"\n`,
  );
  await Deno.chmod(join(bin, "waymark"), 0o755);
  for (const args of [["marketplace", "add", ROOT], ["install", "waymark@waymark"]]) {
    const out = await run(claudeBin(), ["plugin", ...args], {
      cwd: place.workspace,
      env: { ...baseEnv(place), DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1" },
    });
    if (out.code !== 0) {
      throw new Error(`claude plugin ${args.join(" ")}: ${out.stdout}${out.stderr}`);
    }
  }
}

/**
 * Runs `claude -p` in the place against the scripted model; its JSON result (with
 * `session_id`) is on stdout.
 */
export function runClaude(place: HostPlace, options: ClaudeRun): Promise<HostOutput> {
  return run(
    claudeBin(),
    [
      "-p",
      options.prompt,
      "--output-format",
      "json",
      "--allowedTools",
      [CLAUDE_ALLOWED, ...(options.allow ?? [])].join(","),
      ...(options.args ?? []),
    ],
    {
      cwd: place.workspace,
      env: {
        ...baseEnv(place),
        ANTHROPIC_BASE_URL: options.modelUrl,
        ANTHROPIC_API_KEY: "sk-ant-stand-in",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_ERROR_REPORTING: "1",
        // waymark's tools in the request itself (not behind tool search), and connected first
        ENABLE_TOOL_SEARCH: "false",
        MCP_CONNECTION_NONBLOCKING: "false",
        MCP_TIMEOUT: "60000",
        ...options.env,
      },
    },
  );
}

/** The session id in `claude -p --output-format json` output. */
export function claudeSessionId(out: HostOutput): string {
  const result = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  return result.session_id;
}

/** Options of one non-interactive Gemini CLI run. */
export interface GeminiRun {
  /** The user's prompt. */
  prompt: string;
  /** The stand-in model's URL. */
  modelUrl: string;
  /** Extra arguments. */
  args?: string[];
}

/** Runs `gemini -p` (YOLO: tools allowed) in the place against the scripted Gemini API. */
export function runGemini(place: HostPlace, options: GeminiRun): Promise<HostOutput> {
  return run(
    "node",
    [geminiBin(), "-p", options.prompt, "--yolo", ...(options.args ?? [])],
    {
      cwd: place.workspace,
      env: {
        ...baseEnv(place),
        GEMINI_API_KEY: "stand-in-key",
        GOOGLE_GEMINI_BASE_URL: options.modelUrl,
        GEMINI_CLI_NO_RELAUNCH: "true",
      },
    },
  );
}
