/**
 * The `waymark` command: parses arguments, opens the store, wires the adapters. While serving
 * stdio, stdout carries JSON-RPC only; everything else goes to stderr.
 * @module
 */
import { parseArgs } from "node:util";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import {
  openWaymark,
  resolvePaths,
  serveMcpStdio,
  VERSION,
  type WaymarkOptions,
  type WaymarkServerOptions,
} from "./mod.ts";
import {
  formatLoadError,
  isRoutineId,
  loadWorkflowFile,
  parseSourceFile,
  renderInspect,
  renderList,
  stepCount,
  unfillablePlaceholders,
  type WorkflowFile,
  workflowJsonSchema,
} from "./engine/mod.ts";
import { BUNDLED_WORKFLOWS } from "./workflows/mod.ts";
import { createWorkflowSource, loadConfig, openStore, rotateKeyring } from "./store/mod.ts";
import type { CliHost } from "./store/maintenance/cli.ts";
import {
  type Environment,
  type Flags,
  parseArgsOptions,
  parseSettings,
  redactDbUrl,
} from "./store/settings.ts";
import { loadMcpHttp, loadViewer } from "./web/lazy.ts";
import { BUILD_KIND } from "./build.ts";

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
  --busy-timeout MS     how long to wait for another process's database lock (default 5000)
  --durability MODE     normal (default: survives a crash of waymark; a power loss may lose the
                        last few commits) or full (every commit synced to disk first)
  --http PORT           (serve) Streamable HTTP on 127.0.0.1:PORT instead of stdio
  --max-body-bytes N    (serve --http) largest request body (default 4194304, as a stdio line)
  --max-sessions N      (serve --http) live MCP sessions at most; past it the one idle longest
                        is closed (default 100)
  --enable-start-session
                        (serve) list the start_session tool (or WAYMARK_ENABLE_START_SESSION=1)
  --profile NAME        (serve) default, or deepwork: DeepWork's tools over .deepwork/jobs
                        (or WAYMARK_PROFILE)
  --jobs-dir DIR        a folder of DeepWork job folders (repeatable; after the workspace's
                        .deepwork/jobs; DEEPWORK_ADDITIONAL_JOBS_FOLDERS adds more, colon-separated)
  --review-command CMD  (deepwork) external quality reviewer: prompt on stdin, JSON verdict
                        {passed, feedback, criteria_results?} on stdout; self-review without it
  --no-quality-gate     (deepwork) skip quality reviews
  --quality-gate-timeout S       (deepwork) seconds one review may take (default 120)
  --quality-gate-max-attempts N  (deepwork) external reviews per step (default 3)
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
  process.stderr.write(`[waymark] ${line}\n`);
}

/** Parsed and validated command line, or the exit code when it was refused or answered. */
function commandLine(
  argv: string[],
): { values: Flags; env: Environment; positionals: string[] } | number {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: parseArgsOptions() });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const settings = parseSettings(parsed.values, process.env);
  if (!settings.ok) {
    process.stderr.write(`${settings.message}\n(see waymark --help)\n`);
    return 2;
  }
  if (settings.flags.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (settings.flags.version) {
    // a compiled binary runs the bundle, and only the runtime knows it is standalone
    process.stdout.write(`waymark ${VERSION} (${buildKind()})\n`);
    return 0;
  }
  return { values: settings.flags, env: settings.env, positionals: parsed.positionals };
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
  const [command = "serve", sub, arg] = positionals;
  if (command === "serve") return await serveCommand(options, { values, env });
  if (command === "view") return await view(options, values.port);
  if (command === "workflows") return await workflows(options, sub, arg);
  if (command === "keys" && sub === "rotate") return await rotateKeys(options);
  const { STORE_COMMANDS } = await import("./store/maintenance/commands.ts");
  const storeCommand = STORE_COMMANDS[command];
  if (storeCommand) {
    return await storeCommand(storeHost(options), {
      positionals: positionals.slice(1),
      flags: values,
    });
  }
  process.stderr.write(`unknown command \`${command}\`\n\n${HELP}`);
  return 2;
}

/** `waymark serve`: MCP over stdio (with the viewer beside it on request) or over HTTP. */
async function serveCommand(
  options: WaymarkOptions,
  { values, env }: { values: Flags; env: Environment },
): Promise<number> {
  const server: WaymarkServerOptions = {
    log,
    enableStartSession: values["enable-start-session"] === true ||
      env.WAYMARK_ENABLE_START_SESSION === true,
    profile: values.profile ?? env.WAYMARK_PROFILE ?? "default",
    qualityGate: {
      enabled: values["no-quality-gate"] !== true,
      reviewCommand: values["review-command"],
      timeoutSeconds: values["quality-gate-timeout"],
      maxAttempts: values["quality-gate-max-attempts"],
    },
  };
  if (values.http !== undefined) {
    return await serveHttp(options, {
      port: values.http,
      server,
      maxBodyBytes: values["max-body-bytes"],
      maxSessions: values["max-sessions"],
    });
  }
  return await serve(options, {
    server,
    viewer: values.viewer === true,
    viewerPort: values["viewer-port"],
  });
}

/** `waymark keys rotate`: a new signing key; the previous one still verifies. */
async function rotateKeys(options: WaymarkOptions): Promise<number> {
  const { keysFile } = resolvePaths(options);
  const keyring = await rotateKeyring(keysFile);
  process.stdout.write(
    `rotated ${keysFile}: current key ${keyring.current.id}, previous ${keyring.previous?.id}\n`,
  );
  return 0;
}

/** What the store's commands get: paths, openers and the output streams. */
function storeHost(options: WaymarkOptions): CliHost {
  return {
    paths: resolvePaths(options),
    version: VERSION,
    buildKind: buildKind(),
    open: () => openWaymark(options),
    openDatabase: (url) => openStore(url, { busyTimeoutMs: options.busyTimeoutMs, migrate: false }),
    workflows: () => ({
      // as openWaymark composes them: config.json's folders after the flags'
      load: async () => {
        const { workflowDirs } = await loadConfig(resolvePaths(options).home);
        const extra = [...(options.extraWorkflowDirs ?? []), ...workflowDirs];
        const dirs = resolvePaths({ ...options, extraWorkflowDirs: extra }).workflowDirs;
        return await createWorkflowSource(BUNDLED_WORKFLOWS, dirs).load();
      },
    }),
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    now: () => new Date(),
  };
}

async function serve(
  options: WaymarkOptions,
  flags: { server: WaymarkServerOptions; viewer: boolean; viewerPort?: number },
): Promise<number> {
  const waymark = await openWaymark(options);
  log(
    `serving MCP over stdio (${flags.server.profile} profile); database ${
      redactDbUrl(waymark.paths.dbUrl)
    }`,
  );
  // the viewer, when asked for, logs its URL to stderr: stdout carries JSON-RPC only
  const viewer = flags.viewer ? await startViewer(waymark, flags.viewerPort) : null;
  if (viewer) log(`viewer: ${viewer.url}`);
  await new Promise<void>((resolveClosed) => {
    serveMcpStdio(
      () => waymark.mcpServer(flags.server),
      { log, onClose: resolveClosed },
    );
  });
  await viewer?.close();
  await waymark.close();
  return 0;
}

/** Starts the viewer (loaded on demand, so plain \`serve\` starts as fast as before). */
async function startViewer(
  waymark: Awaited<ReturnType<typeof openWaymark>>,
  port: number | undefined,
): Promise<{ url: string; close(): Promise<void> } | null> {
  const { serveViewer } = await loadViewer();
  try {
    return serveViewer({ db: waymark.store.db, port, log });
  } catch (error) {
    log(
      (error as Error)?.name === "AddrInUse"
        ? `viewer not started: port ${port} is in use on 127.0.0.1; choose another with --port`
        : `viewer not started: ${(error as Error)?.message ?? String(error)}`,
    );
    return null;
  }
}

async function view(options: WaymarkOptions, port: number | undefined): Promise<number> {
  const waymark = await openWaymark(options);
  const viewer = await startViewer(waymark, port);
  if (!viewer) {
    await waymark.close();
    return 1;
  }
  process.stdout.write(`waymark viewer: ${viewer.url}\n`);
  log(`read-only viewer of ${redactDbUrl(waymark.paths.dbUrl)}; Ctrl-C stops it`);
  await new Promise<void>((stop) => {
    process.once("SIGINT", () => stop());
    process.once("SIGTERM", () => stop());
  });
  await viewer.close();
  await waymark.close();
  return 0;
}

async function serveHttp(
  options: WaymarkOptions,
  flags: {
    port: number;
    server: WaymarkServerOptions;
    maxBodyBytes?: number;
    maxSessions?: number;
  },
): Promise<number> {
  const waymark = await openWaymark(options);
  log(`database ${redactDbUrl(waymark.paths.dbUrl)}`);
  // Loaded on demand: it serves with Deno.serve, and plain stdio serving never needs it.
  const { serveMcpHttp } = await loadMcpHttp();
  const handle = await serveMcpHttp(
    () => waymark.mcpServer(flags.server),
    { port: flags.port, log, maxBodyBytes: flags.maxBodyBytes, maxSessions: flags.maxSessions },
  );
  const stop = () => void handle.close();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  await handle.finished;
  await waymark.close();
  return 0;
}

/**
 * Routines a file being validated may call: the bundled ones, and those in its own folder and in
 * a `routines/` folder beside it (files that fail to load are simply not offered).
 */
async function nearbyRoutines(file: string): Promise<Map<string, WorkflowFile>> {
  const routines = new Map<string, WorkflowFile>();
  const candidates = [...BUNDLED_WORKFLOWS];
  for (const dir of [dirname(file), join(dirname(file), "routines")]) {
    let names: string[] = [];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names.filter((n) => /\.jsonc?$/.test(n) && !n.endsWith(".schema.json"))) {
      const path = join(dir, name);
      if (resolve(path) === resolve(file)) continue;
      candidates.push({ source: "extra", file: path, text: await readFile(path, "utf8") });
    }
  }
  for (const candidate of candidates) {
    const parsed = parseSourceFile(candidate);
    if (parsed.ok && isRoutineId(parsed.file.id) && !routines.has(parsed.file.id)) {
      routines.set(parsed.file.id, parsed.file);
    }
  }
  return routines;
}

async function workflows(
  options: WaymarkOptions,
  sub: string | undefined,
  arg: string | undefined,
): Promise<number> {
  if (sub === "schema") {
    process.stdout.write(`${JSON.stringify(workflowJsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (sub === "validate") {
    if (!arg) {
      process.stderr.write("usage: waymark workflows validate FILE\n");
      return 2;
    }
    const loaded = await loadWorkflowFile({
      source: "extra",
      file: arg,
      text: await readFile(arg, "utf8"),
    }, { routines: await nearbyRoutines(arg) });
    if (!loaded.ok) {
      process.stderr.write(`${formatLoadError(loaded.error)}\n`);
      return 1;
    }
    process.stdout.write(
      `${arg}: ok (${loaded.workflow.id}, ${
        stepCount(loaded.workflow.compiled)
      } steps, ${loaded.workflow.hash})\n`,
    );
    const checks = unfillablePlaceholders(loaded.workflow.compiled);
    for (const w of [...loaded.workflow.warnings, ...checks]) {
      process.stdout.write(`warning [${w.code}]: ${w.message}\n`);
    }
    return 0;
  }
  const waymark = await openWaymark(options);
  try {
    if (sub === "list" || sub === undefined) {
      const result = await waymark.list();
      if (!result.ok) throw new Error(result.error.message);
      process.stdout.write(`${renderList(result.value)}\n`);
      return 0;
    }
    if (sub === "inspect" && arg) {
      const result = await waymark.inspect(arg);
      if (!result.ok) {
        process.stderr.write(`${result.error.message}\n`);
        return 1;
      }
      process.stdout.write(`${renderInspect(result.value)}\n`);
      return 0;
    }
    process.stderr.write(`usage: waymark workflows list|inspect ID|validate FILE|schema\n`);
    return 2;
  } finally {
    await waymark.close();
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (error) => {
    log(`fatal: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
