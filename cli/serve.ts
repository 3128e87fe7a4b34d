/**
 * `waymark serve` and `waymark view`: MCP over stdio or HTTP, and the read-only viewer. Plain
 * `serve` over stdio is answered early by `main.ts`, which opens waymark through
 * {@linkcode openServe} and composes the MCP server onto its early server.
 * @module
 */
import process from "node:process";
import {
  fileOfOpenFailure,
  openWaymark,
  resolvePaths,
  serveMcpStdio,
  VERSION,
  type Waymark,
  type WaymarkOptions,
  type WaymarkServerOptions,
} from "../mod.ts";
import { redactDbUrl } from "../store/db_url.ts";
import {
  type AuthSettings,
  loadConfig,
  resolveAuthSettings,
  sqlPersonalTokens,
} from "../store/mod.ts";
import type { WaymarkServer } from "../tools/server/waymark_server.ts";
import type { GateFailure } from "../tools/server/message_gate.ts";
import { earlyServer } from "../tools/server/early_server.ts";
import { load } from "../lazy.ts";
import type { Deadlines } from "../web/deadlines.ts";
import type { Flags } from "./flags.ts";
import type { CommandInput } from "./host.ts";
import { startupFailure } from "./startup_failure.ts";
import { printErr, printOut } from "./terminal.ts";

function log(line: string): void {
  printErr(`[waymark] ${line}\n`);
}

/** How long an HTTP client may take to send a request, from the flags (defaults when absent). */
function deadlinesOf(flags: Flags): { headerTimeoutMs?: number; bodyTimeoutMs?: number } {
  return { headerTimeoutMs: flags["header-timeout"], bodyTimeoutMs: flags["body-timeout"] };
}

/** Waymark opened for serving, or why it could not be. */
export type OpenedServe =
  | {
    ok: true;
    compose(onto: WaymarkServer): void;
    rehearse(onto: WaymarkServer, interrupted: () => boolean): Promise<void>;
    close(): Promise<void>;
  }
  | { ok: false; failure: GateFailure };

/**
 * Opens waymark for `main.ts`'s early stdio server: `compose` puts the MCP server's handlers onto
 * an early server already serving (`tools/server/early_server.ts`); `rehearse` runs, once for the
 * process, the code a first tool call runs for the first time (`tools/server/rehearsal.ts`), at the
 * protocol version the early server negotiated, until `interrupted` says a call is waiting;
 * `close` closes the database. A failure to open is the answer the early server gives instead
 * (`startup_failure.ts`).
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
  let rehearsed: Promise<void> | undefined;
  return {
    ok: true,
    compose: (onto) => void waymark.mcpServer({ ...input.server, onto }),
    rehearse: (onto, interrupted) =>
      rehearsed ??= waymark.rehearse({
        ...input.server,
        protocolVersion: onto.getNegotiatedProtocolVersion(),
        interrupted,
      }),
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
export async function serve(input: CommandInput): Promise<number> {
  const { options, flags, server } = input;
  if (flags.http !== undefined) return await serveHttp(options, input);
  return await serveStdio(options, {
    server,
    viewer: flags.viewer === true,
    viewerPort: flags["viewer-port"],
    deadlines: deadlinesOf(flags),
  });
}

async function serveStdio(
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

/** `waymark view`: the read-only viewer until Ctrl-C. */
export async function view(input: CommandInput): Promise<number> {
  const waymark = await openWaymark(input.options);
  const viewer = await startViewer(waymark, {
    port: input.flags.port,
    deadlines: deadlinesOf(input.flags),
  });
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

/** The authentication `serve --http` enforces: config.json's `auth` section under the flags. */
async function authSettingsOf(
  options: WaymarkOptions,
  flags: Flags,
): Promise<{ ok: true; settings: AuthSettings | null } | { ok: false; message: string }> {
  const { auth } = await loadConfig(resolvePaths(options).home);
  return resolveAuthSettings(auth, {
    resource: flags["auth-resource"],
    issuer: flags["auth-issuer"],
    jwksUrl: flags["auth-jwks-url"],
    scopes: flags["auth-scope"],
    jwksTimeoutMs: flags["auth-jwks-timeout"],
    personalTokens: flags["personal-tokens"],
  });
}

/** How long calls in flight may take to finish after SIGTERM before they are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

async function serveHttp(options: WaymarkOptions, input: CommandInput): Promise<number> {
  const { flags } = input;
  const auth = await authSettingsOf(options, flags);
  if (!auth.ok) {
    log(`fatal: ${auth.message}`);
    return 2;
  }
  const { settings } = auth;
  const { createAuthGate, isLoopback } = await load<typeof import("../web/auth/mod.ts")>("auth");
  const hostname = flags.bind ?? "127.0.0.1";
  if (!isLoopback(hostname) && !settings) {
    log(
      `fatal: refusing to listen on ${hostname} without authentication: anyone who can reach ` +
        "it could read and write every session. Configure it (--auth-resource URL with " +
        "--auth-issuer URL and/or --personal-tokens; docs/team_service.md), or bind 127.0.0.1.",
    );
    return 2;
  }
  const tls = await tlsOf(flags);
  if (typeof tls === "string") {
    log(`fatal: ${tls}`);
    return 2;
  }
  const waymark = await openWaymark(options);
  log(`database ${redactDbUrl(waymark.paths.dbUrl)}`);
  const gate = settings
    ? createAuthGate({
      settings,
      personalTokens: settings.personalTokens
        ? sqlPersonalTokens(waymark.store.db, waymark.deps)
        : undefined,
      log,
    })
    : undefined;
  // Loaded on demand: it serves with Deno.serve, and plain stdio serving never needs it.
  const { serveMcpHttp, createOps, storeProbe } = await load<
    typeof import("../web/mcp_http.ts")
  >("mcpHttp");
  const ops = createOps(storeProbe(waymark.store as Parameters<typeof storeProbe>[0]));
  let hosts: string[] = [];
  const viewer = flags.viewer ? await viewerBeside(waymark, () => hosts) : undefined;
  const handle = await serveMcpHttp(
    httpServers(waymark, input, ops.toolCall),
    {
      port: flags.http!,
      hostname,
      tls,
      log,
      maxBodyBytes: flags["max-body-bytes"],
      maxSessions: flags["max-sessions"],
      deadlines: deadlinesOf(flags),
      stateless: flags.stateless === true,
      auth: gate,
      fallback: viewer?.app.fetch,
      ops,
    },
  );
  const { allowedHostsFor } = await load<typeof import("../web/mod.ts")>("viewer");
  hosts = [...allowedHostsFor(handle.port), ...(gate ? [gate.publicHost] : [])];
  if (viewer) log(`viewer: the same address, at / (behind the same authentication)`);
  // SIGTERM: stop accepting, let calls in flight finish (bounded), then close the database
  const stop = () => {
    log(`stopping: calls in flight have ${SHUTDOWN_GRACE_MS} ms to finish`);
    void handle.close(SHUTDOWN_GRACE_MS);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  await handle.finished;
  viewer?.close();
  await waymark.close();
  return 0;
}

/** The MCP server of an HTTP connection (or, `--stateless`, of one request) for its requestor. */
function httpServers(
  waymark: Waymark,
  input: CommandInput,
  onToolCall: WaymarkServerOptions["onToolCall"],
): (taskOwner: WaymarkServerOptions["taskOwner"]) => ReturnType<Waymark["mcpServer"]> {
  return (taskOwner) =>
    waymark.mcpServer({
      ...input.server,
      taskOwner,
      runAccess: input.flags["run-access"],
      commandsNeedRoots: true,
      stateless: input.flags.stateless === true,
      onToolCall,
    });
}

/** The certificate and key of `--tls-cert`/`--tls-key` (both or neither), or what is wrong. */
async function tlsOf(flags: Flags): Promise<{ cert: string; key: string } | undefined | string> {
  const certFile = flags["tls-cert"];
  const keyFile = flags["tls-key"];
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) {
    return "--tls-cert FILE and --tls-key FILE go together (a certificate chain and its key, PEM)";
  }
  const read = (file: string, flag: string) =>
    Deno.readTextFile(file).catch((error) => {
      throw `${flag} ${file}: ${(error as Error).message}`;
    });
  try {
    return { cert: await read(certFile, "--tls-cert"), key: await read(keyFile, "--tls-key") };
  } catch (why) {
    return String(why);
  }
}

/** The viewer served by the HTTP service's own listener, behind its guards. */
async function viewerBeside(
  waymark: Awaited<ReturnType<typeof openWaymark>>,
  hosts: () => readonly string[],
): Promise<import("../web/mod.ts").Viewer> {
  const { createViewerApp } = await load<typeof import("../web/mod.ts")>("viewer");
  return createViewerApp({ db: waymark.store.db, allowedHosts: hosts, log });
}
