/**
 * The `waymark` command: parses arguments and dispatches. `serve` over stdio (any profile, no
 * viewer) answers its client's handshake and `tools/list` at once from the profile's published
 * face (`tools/profiles/registry.ts`) and loads the engine and the store meanwhile
 * (`tools/early_server.ts`); every other command loads the commands (`cli/`) first. While serving stdio, stdout carries JSON-RPC only; everything else
 * goes to stderr.
 * @module
 */
import { parseArgs } from "node:util";
import process from "node:process";
import type { WaymarkOptions, WaymarkServerOptions } from "./mod.ts";
import { VERSION } from "./version.ts";
import { type Environment, type Flags, parseArgsOptions, parseSettings } from "./store/settings.ts";
import { earlyServer } from "./tools/early_server.ts";
import { PROFILES } from "./tools/profiles/registry.ts";
import { serveMcpStdio } from "./tools/stdio.ts";
import { load } from "./lazy.ts";
import type { OpenedServe } from "./cli/mod.ts";

/** The commands (`cli/`), loaded on first use. */
const loadCli = () => load<typeof import("./cli/mod.ts")>("cli");
import type { GateFailure as OpenedFailure } from "./tools/message_gate.ts";
import { printErr, printOut } from "./cli/terminal.ts";
import { BUILD_KIND } from "./build.ts";
import { DEFAULT_BUSY_TIMEOUT_MS } from "./store/open_options.ts";

const HELP = `waymark ${VERSION}: a rewind-safe workflow runtime for AI coding agents, over MCP.

Usage:
  waymark serve                    serve MCP over stdio (the default command)
  waymark serve --http PORT        serve MCP over Streamable HTTP at http://127.0.0.1:PORT/mcp
  waymark serve --viewer           ... and the read-only viewer beside it (URL logged to stderr)
  waymark view                     serve the read-only session viewer on 127.0.0.1
  waymark workflows list           list workflows from every source
  waymark workflows inspect ID     show one workflow's steps
  waymark workflows validate FILE  check a workflow file and print its workflowHash
  waymark workflows schema         print the workflow files' JSON Schema (for "$schema")
  waymark keys rotate              new signing key; tokens signed by the previous one stay valid
  waymark setup --client NAME      add this waymark to an MCP client's configuration: claude-code,
                                   claude-desktop, cursor, vscode or codex (--print, --scope,
                                   --profile deepwork)
  waymark sessions list            sessions, newest first (--workspace W, --status S, --json)
  waymark sessions show ID         one session's runs, tips and latest notes (--json)
  waymark sessions export ID       a session as one verified JSON bundle (-o FILE; default stdout)
  waymark sessions export --all -o DIR   one bundle per session (--workspace, --status, --older-than)
  waymark import FILE...           import bundles (verified first; never merges; twice is a no-op)
  waymark gc --older-than 30d      remove idle sessions (--dry-run, --keep-running, --vacuum)
  waymark doctor [FILE]            check the database, keyring and workflows (--repair, --json)
  waymark backup FILE              a consistent copy of the database while servers run
  waymark --version | --help

Options:
  --home DIR            data folder (default $WAYMARK_HOME or ~/.waymark)
  --db URL              database URL (default $WAYMARK_DB_URL or file:<home>/waymark.db;
                        :memory: for a throwaway store; postgres://… for a team store
                        on a PostgreSQL server)
  --workspace DIR       project folder whose .waymark/workflows is searched (default: cwd)
  --workflows-dir DIR   an extra workflow folder (repeatable; lowest precedence)
  --busy-timeout MS     how long to wait for another process's database lock (default ${DEFAULT_BUSY_TIMEOUT_MS})
  --durability MODE     normal (default: survives a crash of waymark; a power loss may lose the
                        last few commits) or full (every commit synced to disk first)
  --http PORT           (serve) Streamable HTTP on 127.0.0.1:PORT instead of stdio
  --max-body-bytes N    (serve --http) largest request body (default 4194304, as a stdio line)
  --max-sessions N      (serve --http) live MCP sessions at most; past it the one idle longest
                        is closed (default 100)
  --header-timeout MS   (HTTP: serve --http, the viewer) a request's headers must arrive within
                        MS of its first byte, or the connection is closed (default 10000)
  --body-timeout MS     (HTTP) a request's body must arrive within MS of its headers (default 30000)
  --enable-start-session
                        (serve) list the start_session tool (or WAYMARK_ENABLE_START_SESSION=1)
  --profile NAME        (serve, setup) default, or deepwork: DeepWork's tools over .deepwork/jobs
                        (or WAYMARK_PROFILE)
  --jobs-dir DIR        a folder of DeepWork job folders (repeatable; after the workspace's
                        .deepwork/jobs; DEEPWORK_ADDITIONAL_JOBS_FOLDERS adds more, colon-separated)
  --review-command CMD  (deepwork) external quality reviewer: prompt on stdin, JSON verdict
                        {passed, feedback, criteria_results?} on stdout; self-review without it
  --external-runner claude  (deepwork) reviews through the Claude Code CLI on PATH
                        (claude -p --output-format json); --review-command replaces it
  --no-quality-gate     (deepwork) skip quality reviews
  --quality-gate-timeout S       (deepwork) seconds one review may take (default 120)
  --quality-gate-max-attempts N  (deepwork) external reviews per step (default 3)
  --client NAME         (setup) the MCP client whose configuration gets the entry
  --scope SCOPE         (setup) user (the client's own file) or project (the workspace's
                        file); each client has its usual one as the default
  --print               (setup) print the entry instead of writing it
  --port N              viewer port for \`view\` (default 4321; 0 picks a free one)
  --viewer-port N       viewer port for \`serve --viewer\` (default 4321; 0 picks a free one)

  -o, --output FILE     (sessions export) where the bundle goes (- for stdout; a folder with --all)
  --older-than AGE      (gc, export --all) idle longer than AGE: 45m, 12h, 30d, 2w

<home>/config.json (optional, JSONC):
  {"workflowDirs": [...], "preferences": {...}, "retention": {"olderThan": "90d"}, "jobDirs": [...]}
`;

/** How this waymark was built (a compiled binary is the bundle, run standalone). */
const buildKind = (): string => Deno.build.standalone ? "binary" : BUILD_KIND;

function log(line: string): void {
  printErr(`[waymark] ${line}\n`);
}

function fatal(error: unknown): never {
  log(`fatal: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

/** Parsed and validated command line, or the exit code when it was refused or answered. */
function commandLine(
  argv: string[],
): { values: Flags; env: Environment; positionals: string[] } | number {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: parseArgsOptions() });
  } catch (error) {
    printErr(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const settings = parseSettings(parsed.values, process.env);
  if (!settings.ok) {
    printErr(`${settings.message}\n(see waymark --help)\n`);
    return 2;
  }
  if (settings.flags.help) {
    printOut(HELP);
    return 0;
  }
  if (settings.flags.version) {
    // a compiled binary runs the bundle, and only the runtime knows it is standalone
    printOut(`waymark ${VERSION} (${buildKind()})\n`);
    return 0;
  }
  return { values: settings.flags, env: settings.env, positionals: parsed.positionals };
}

/** The MCP server's options from the flags and the environment. */
function serverOptions(values: Flags, env: Environment): WaymarkServerOptions {
  return {
    log,
    enableStartSession: values["enable-start-session"] === true ||
      env.WAYMARK_ENABLE_START_SESSION === true,
    profile: values.profile ?? env.WAYMARK_PROFILE ?? "default",
    qualityGate: {
      enabled: values["no-quality-gate"] !== true,
      reviewCommand: values["review-command"],
      externalRunner: values["external-runner"],
      timeoutSeconds: values["quality-gate-timeout"],
      maxAttempts: values["quality-gate-max-attempts"],
    },
  };
}

async function main(argv: string[]): Promise<number> {
  const line = commandLine(argv);
  if (typeof line === "number") return line;
  const { values, env, positionals } = line;
  const options: WaymarkOptions = {
    home: values.home,
    dbUrl: values.db,
    workspace: values.workspace,
    extraWorkflowDirs: values["workflows-dir"],
    busyTimeoutMs: values["busy-timeout"],
    durability: values.durability,
    jobDirs: values["jobs-dir"],
  };
  const server = serverOptions(values, env);
  const [command = "serve"] = positionals;
  const plainStdio = values.http === undefined && values.viewer !== true;
  if (command === "serve" && plainStdio) return await serveEarly(options, server);
  const { runCommand } = await loadCli();
  const code = await runCommand({ options, values, positionals, server, buildKind: buildKind() });
  if (code !== undefined) return code;
  printErr(`unknown command \`${command}\`\n\n${HELP}`);
  return 2;
}

/**
 * `waymark serve` over stdio: each connection's early server (the SDK
 * may make more than one while it settles the protocol revision) answers the handshake and
 * `tools/list` at once; the commands load and open waymark once, when a server first needs it
 * (after `tools/list`, or at the first other request), and compose the rest onto it. When waymark
 * cannot be opened, the early servers answer the requests they hold (or the next one) with why,
 * and the process exits 1 once the first such answer is written.
 */
async function serveEarly(options: WaymarkOptions, server: WaymarkServerOptions): Promise<number> {
  const profile = server.profile ?? "default";
  let opened: Promise<OpenedServe> | undefined;
  const open = () =>
    opened ??= loadCli().then((cli) => cli.openServe({ options, server })).catch((error) => ({
      ok: false as const,
      failure: unexpectedFailure(error),
    }));
  let failed: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => failed = resolve);
  let reported = false;
  const connection = () => {
    let composing: Promise<void> | undefined;
    const early = earlyServer({
      version: VERSION,
      published: PROFILES[profile],
      enableStartSession: server.enableStartSession,
      onNeeded: () => {
        composing ??= open().then((served) => {
          if (served.ok) {
            served.compose(early.server);
            return early.open();
          }
          if (!reported) log(`fatal: ${served.failure.data.message}`);
          reported = true;
          void early.fail(served.failure).then(() => failed(1));
        });
      },
    });
    return early.server;
  };
  log(`serving MCP over stdio (${profile} profile)`);
  const closed = new Promise<number>((resolve) => {
    serveMcpStdio(connection, { log, onClose: () => resolve(0) });
  });
  const code = await Promise.race([closed, exited]);
  const served = await opened;
  if (served?.ok) await served.close();
  return served && !served.ok ? 1 : code;
}

/** The answer when the commands themselves could not load (a broken install). */
function unexpectedFailure(error: unknown): OpenedFailure {
  const message = `waymark could not start: ${
    error instanceof Error ? error.message : String(error)
  }. Reinstall waymark, then start the server again.`;
  return {
    code: -32000,
    message,
    data: { code: "STARTUP_FAILED", message, retry: { kind: "not_retryable" } },
  };
}

if (import.meta.main) {
  main(process.argv.slice(2)).then((code) => process.exit(code), fatal);
}
