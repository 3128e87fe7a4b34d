/**
 * The commands behind `main.ts`, loaded on demand (`../lazy.ts`): everything but answering the
 * start of `waymark serve` over stdio, which `main.ts` does before this module has loaded and
 * then composes the rest onto with {@linkcode composeServe}.
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import {
  fileOfOpenFailure,
  openWaymark,
  resolvePaths,
  serveMcpStdio,
  VERSION,
  type WaymarkOptions,
  type WaymarkServerOptions,
} from "../mod.ts";
import {
  backtrackingPatterns,
  formatLoadError,
  isRoutineId,
  loadWorkflowFile,
  parseSourceFile,
  parseWorkflowText,
  renderInspect,
  renderList,
  stepCount,
  unfillablePlaceholders,
  type WorkflowFile,
  workflowJsonSchema,
} from "../engine/mod.ts";
import { BUNDLED_WORKFLOWS } from "../workflows/mod.ts";
import { createWorkflowSource, loadConfig, openStore, rotateKeyring } from "../store/mod.ts";
import type { CliHost } from "../store/maintenance/cli.ts";
import { type Flags, redactDbUrl } from "../store/settings.ts";
import type { WaymarkServer } from "../tools/waymark_server.ts";
import type { GateFailure } from "../tools/message_gate.ts";
import { earlyServer } from "../tools/early_server.ts";
import { startupFailure } from "./startup_failure.ts";
import { processHost, setup } from "./setup/mod.ts";
import { load } from "../lazy.ts";
import type { Deadlines } from "../web/deadlines.ts";
import { printErr, printOut } from "./terminal.ts";

/** A command line as `main.ts` parsed it. */
export interface CommandInput {
  /** Where data lives and what to open. */
  options: WaymarkOptions;
  /** The flags. */
  values: Flags;
  /** The command and its arguments. */
  positionals: string[];
  /** The server's options, for `serve`. */
  server: WaymarkServerOptions;
  /** The build kind `--version` and `doctor` report. */
  buildKind: string;
}

function log(line: string): void {
  printErr(`[waymark] ${line}\n`);
}

/** How long an HTTP client may take to send a request, from the flags (defaults when absent). */
function deadlinesOf(values: Flags): { headerTimeoutMs?: number; bodyTimeoutMs?: number } {
  return { headerTimeoutMs: values["header-timeout"], bodyTimeoutMs: values["body-timeout"] };
}

/** Runs a command; `undefined` when there is no such command. */
export async function runCommand(input: CommandInput): Promise<number | undefined> {
  const { options, positionals } = input;
  const [command = "serve", sub, arg] = positionals;
  if (command === "serve") return await serveCommand(input);
  if (command === "view") {
    return await view(options, { port: input.values.port, deadlines: deadlinesOf(input.values) });
  }
  if (command === "workflows") return await workflows(options, sub, arg);
  if (command === "keys" && sub === "rotate") return await rotateKeys(options);
  if (command === "setup") {
    return await setup(processHost(input.buildKind, input.values), input.values);
  }
  const { STORE_COMMANDS } = await load<typeof import("../store/maintenance/commands.ts")>(
    "storeCommands",
  );
  const storeCommand = STORE_COMMANDS[command];
  if (!storeCommand) return undefined;
  return await storeCommand(storeHost(options, input.buildKind), {
    positionals: positionals.slice(1),
    flags: input.values,
  });
}

/** Waymark opened for serving, or why it could not be. */
export type OpenedServe =
  | { ok: true; compose(onto: WaymarkServer): void; close(): Promise<void> }
  | { ok: false; failure: GateFailure };

/**
 * Opens waymark for `main.ts`'s early stdio server: `compose` puts the MCP server's handlers onto
 * an early server already serving (`tools/early_server.ts`); `close` closes the database. A
 * failure to open is the answer the early server gives instead (`startup_failure.ts`).
 */
export async function openServe(
  input: Pick<CommandInput, "options" | "server">,
): Promise<OpenedServe> {
  let waymark;
  try {
    waymark = await openWaymark(input.options);
  } catch (error) {
    return { ok: false, failure: startupFailure(error, fileOfOpenFailure(error)) };
  }
  log(`database ${redactDbUrl(waymark.paths.dbUrl)}`);
  return {
    ok: true,
    compose: (onto) => void waymark.mcpServer({ ...input.server, onto }),
    close: () => waymark.close(),
  };
}

/**
 * Serves stdio for a server that could not open waymark: the handshake, then every request is
 * answered with `failure`; exits 1 once the first is answered (or the client closes).
 */
export async function serveFailure(failure: GateFailure): Promise<number> {
  log(`fatal: ${failure.data.message}`);
  return await new Promise<number>((exit) => {
    serveMcpStdio(() => {
      const early = earlyServer({
        version: VERSION,
        onNeeded: () => {},
        published: { instructions: "", tools: [] },
      });
      void early.fail(failure).then(() => exit(1));
      return early.server;
    }, { log, onClose: () => exit(1) });
  });
}

/** `waymark serve` when it starts with everything loaded: over HTTP, or with the viewer. */
async function serveCommand(input: CommandInput): Promise<number> {
  const { options, values, server } = input;
  if (values.http !== undefined) {
    return await serveHttp(options, {
      port: values.http,
      server,
      maxBodyBytes: values["max-body-bytes"],
      maxSessions: values["max-sessions"],
      deadlines: deadlinesOf(values),
    });
  }
  return await serve(options, {
    server,
    viewer: values.viewer === true,
    viewerPort: values["viewer-port"],
    deadlines: deadlinesOf(values),
  });
}

/** `waymark keys rotate`: a new signing key, which running servers pick up; the previous one still verifies. */
async function rotateKeys(options: WaymarkOptions): Promise<number> {
  const { keysFile } = resolvePaths(options);
  const keyring = await rotateKeyring(keysFile);
  printOut(
    `rotated ${keysFile}: current key ${keyring.current.id}, previous ${keyring.previous?.id} (running servers sign with the new key within a second; tokens of the key before the previous are refused)\n`,
  );
  return 0;
}

/** What the store's commands get: paths, openers and the output streams. */
function storeHost(options: WaymarkOptions, buildKind: string): CliHost {
  return {
    paths: resolvePaths(options),
    version: VERSION,
    buildKind,
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
    stdout: printOut,
    stderr: printErr,
    now: () => new Date(),
  };
}

async function serve(
  options: WaymarkOptions,
  flags: {
    server: WaymarkServerOptions;
    viewer: boolean;
    viewerPort?: number;
    deadlines: Partial<Deadlines>;
  },
): Promise<number> {
  let waymark;
  try {
    waymark = await openWaymark(options);
  } catch (error) {
    return await serveFailure(startupFailure(error, fileOfOpenFailure(error)));
  }
  log(
    `serving MCP over stdio (${flags.server.profile} profile); database ${
      redactDbUrl(waymark.paths.dbUrl)
    }`,
  );
  // the viewer, when asked for, logs its URL to stderr: stdout carries JSON-RPC only
  const viewer = flags.viewer
    ? await startViewer(waymark, { port: flags.viewerPort, deadlines: flags.deadlines })
    : null;
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
  at: { port: number | undefined; deadlines: Partial<Deadlines> },
): Promise<{ url: string; close(): Promise<void> } | null> {
  const { port, deadlines } = at;
  const { serveViewer } = await load<typeof import("../web/mod.ts")>("viewer");
  try {
    return serveViewer({ db: waymark.store.db, port, log, deadlines });
  } catch (error) {
    log(
      (error as Error)?.name === "AddrInUse"
        ? `viewer not started: port ${port} is in use on 127.0.0.1; choose another with --port`
        : `viewer not started: ${(error as Error)?.message ?? String(error)}`,
    );
    return null;
  }
}

async function view(
  options: WaymarkOptions,
  at: { port: number | undefined; deadlines: Partial<Deadlines> },
): Promise<number> {
  const waymark = await openWaymark(options);
  const viewer = await startViewer(waymark, at);
  if (!viewer) {
    await waymark.close();
    return 1;
  }
  printOut(`waymark viewer: ${viewer.url}\n`);
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
    deadlines: Partial<Deadlines>;
  },
): Promise<number> {
  const waymark = await openWaymark(options);
  log(`database ${redactDbUrl(waymark.paths.dbUrl)}`);
  // Loaded on demand: it serves with Deno.serve, and plain stdio serving never needs it.
  const { serveMcpHttp } = await load<typeof import("../web/mcp_http.ts")>("mcpHttp");
  const handle = await serveMcpHttp(
    (taskOwner) => waymark.mcpServer({ ...flags.server, taskOwner }),
    {
      port: flags.port,
      log,
      maxBodyBytes: flags.maxBodyBytes,
      maxSessions: flags.maxSessions,
      deadlines: flags.deadlines,
    },
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

/**
 * `workflows validate FILE`: load, compile and hash the file with the routines it may call, and
 * report its warnings. A file with the text of one waymark ships is that bundled file (so it may
 * use the reserved `wr.` namespace), validated all the same.
 */
async function validateFile(file: string): Promise<number> {
  const text = await readFile(file, "utf8");
  const shipped = BUNDLED_WORKFLOWS.some((b) => b.text === text);
  const checked = shipped ? parseWorkflowText(text, file) : null;
  const loaded = checked && !checked.ok ? checked : await loadWorkflowFile(
    { source: shipped ? "bundled" : "extra", file, text },
    { routines: await nearbyRoutines(file) },
  );
  if (!loaded.ok) {
    printErr(`${formatLoadError(loaded.error)}\n`);
    return 1;
  }
  const { workflow } = loaded;
  printOut(
    `${file}: ok (${workflow.id}, ${stepCount(workflow.compiled)} steps, ${workflow.hash})\n`,
  );
  const checks = [
    ...unfillablePlaceholders(workflow.compiled),
    ...backtrackingPatterns(workflow.compiled),
  ];
  for (const w of [...workflow.warnings, ...checks]) {
    printOut(`warning [${w.code}]: ${w.message}\n`);
  }
  return 0;
}

async function workflows(
  options: WaymarkOptions,
  sub: string | undefined,
  arg: string | undefined,
): Promise<number> {
  if (sub === "schema") {
    printOut(`${JSON.stringify(workflowJsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (sub === "validate") {
    if (!arg) {
      printErr("usage: waymark workflows validate FILE\n");
      return 2;
    }
    return await validateFile(arg);
  }
  const waymark = await openWaymark(options);
  try {
    if (sub === "list" || sub === undefined) {
      const result = await waymark.list();
      if (!result.ok) throw new Error(result.error.message);
      printOut(`${renderList(result.value)}\n`);
      return 0;
    }
    if (sub === "inspect" && arg) {
      const result = await waymark.inspect(arg);
      if (!result.ok) {
        printErr(`${result.error.message}\n`);
        return 1;
      }
      printOut(`${renderInspect(result.value)}\n`);
      return 0;
    }
    printErr(`usage: waymark workflows list|inspect ID|validate FILE|schema\n`);
    return 2;
  } finally {
    await waymark.close();
  }
}
