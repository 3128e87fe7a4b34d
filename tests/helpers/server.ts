/**
 * Test helpers: a real waymark server process over stdio, driven by a real MCP client (the v2
 * client package, or the v1 SDK client that older MCP clients still speak).
 * @module
 */
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { fileURLToPath as fromFileUrl } from "node:url";
import { freshPostgresUrl, testingOnPostgres } from "./postgres.ts";
import { libsqlHomeTemplate, postgresHomeTemplate } from "./home_template.ts";
import { serveOnPair, servingInProcess } from "./in_process.ts";
import { serveOnLoopback } from "./loopback_origin.ts";
import { MAIN } from "./process.ts";

/** Absolute path of main.ts (defined in `process.ts`, which `home_template.ts` also uses). */
export { MAIN };
// Tests run inside a git checkout: a waymark they open in this process snapshots its workspace
// only when a test asks (`{ ...deps, snapshots }`, or WAYMARK_SNAPSHOTS=1 for a child server).
Deno.env.set("WAYMARK_SNAPSHOTS", "0");

/** The repository root (where deno.json is). */
export const ROOT = fromFileUrl(new URL("../../", import.meta.url));

/** Databases of homes whose servers run on PostgreSQL (`WAYMARK_TEST_DB=postgres`), by home. */
const DATABASES = new Map<string, string>();

/**
 * A temporary WAYMARK_HOME, removed by `cleanup`, and the URL of its database: the libSQL file
 * in it, or, when `WAYMARK_TEST_DB=postgres`, a fresh database on the test's PostgreSQL server,
 * which every server and command started on this home is then given with `--db`. The database
 * is created, at the current schema and empty (`tests/helpers/home_template.ts`); `blank` leaves
 * that to the first start (no file yet on libSQL, an empty database on PostgreSQL), for tests of it.
 */
export async function tempHome(options: { blank?: boolean } = {}): Promise<
  { home: string; dbFile: string; dbUrl: string; cleanup(): Promise<void> }
> {
  const home = await Deno.makeTempDir({ prefix: "waymark-test-" });
  const dbFile = `${home}/waymark.db`;
  let dbUrl = `file:${dbFile}`;
  if (testingOnPostgres()) {
    const template = options.blank ? undefined : await postgresHomeTemplate();
    dbUrl = await freshPostgresUrl({ template });
    DATABASES.set(home, dbUrl);
  } else if (!options.blank) {
    await Deno.copyFile(await libsqlHomeTemplate(), dbFile);
  }
  return {
    home,
    dbFile,
    dbUrl,
    cleanup: () => Deno.remove(home, { recursive: true }).catch(() => {}),
  };
}

/** The database of a home from {@linkcode tempHome} (its libSQL file, unless on PostgreSQL). */
export function dbUrlOf(home: string): string {
  return DATABASES.get(home) ?? `file:${home}/waymark.db`;
}

/** `--db URL` for a home whose database is not the file in it; otherwise nothing. */
export function dbArgs(home: string): string[] {
  const url = DATABASES.get(home);
  return url ? ["--db", url] : [];
}

/** The command line that serves waymark over stdio for a home. */
export function serverArgs(home: string, extra: string[] = []): string[] {
  return ["run", "-A", "--quiet", MAIN, "serve", "--home", home, ...dbArgs(home), ...extra];
}

/** The result of a tool call, loosely typed for assertions. */
export interface CallResult {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A connected MCP client of either SDK line. */
export interface TestClient {
  /** Which client package. */
  readonly version: "v1" | "v2";
  /** Calls a tool. */
  call(name: string, args: Record<string, unknown>): Promise<CallResult>;
  /** Lists tools. */
  listTools(): Promise<
    {
      tools: { name: string; description?: string; inputSchema: unknown; outputSchema?: unknown }[];
    }
  >;
  /** Closes the client and its server process. */
  close(): Promise<void>;
}

/** A v2 client with roots, notifications and the server's pid, for the protocol-extras tests. */
export interface RichClient extends TestClient {
  /** The underlying v2 client. */
  readonly client: Client;
  /** The server process id. */
  readonly pid: number | null;
  /** Notifications received, in order. */
  readonly notifications: { method: string; params?: Record<string, unknown> }[];
  /** Calls a tool with a progress callback (the request carries a progress token). */
  callWithProgress(
    name: string,
    args: Record<string, unknown>,
    onProgress: (p: { progress: number; total?: number; message?: string }) => void,
  ): Promise<CallResult>;
  /** Replaces the roots and tells the server (`notifications/roots/list_changed`). */
  setRoots(roots: { uri: string; name?: string }[]): Promise<void>;
}

/**
 * Spawns a server and connects a v2 client that answers `roots/list` with `roots` (omit them
 * for a client without the roots capability) and records every notification.
 */
export async function connectRich(
  home: string,
  options: {
    roots?: { uri: string; name?: string }[];
    cwd?: string;
    extraArgs?: string[];
    env?: Record<string, string>;
  } = {},
): Promise<RichClient> {
  let roots = options.roots ?? [];
  const notifications: { method: string; params?: Record<string, unknown> }[] = [];
  const client = new Client(
    { name: "waymark-test-rich", version: "1.0.0" },
    { capabilities: options.roots ? { roots: { listChanged: true } } : {} },
  );
  if (options.roots) {
    client.setRequestHandler("roots/list", () => ({ roots }));
  }
  for (
    const method of [
      "notifications/message",
      "notifications/resources/updated",
    ] as const
  ) {
    client.setNotificationHandler(method, (n) => {
      notifications.push({ method, params: n.params as Record<string, unknown> });
    });
  }
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: serverArgs(home, options.extraArgs),
    cwd: options.cwd ?? ROOT,
    stderr: "pipe",
    env: childEnv(options.env),
  });
  await client.connect(transport);
  // Progress is read off the wire: the v2 client dispatches notifications a microtask late but
  // responses at once, so a notification that arrives in the same chunk as its response reaches
  // a request handler that is already gone. The server sends progress before the response; the
  // tap sees it in that order.
  let tap: ((params: Record<string, unknown>) => void) | null = null;
  const deliver = transport.onmessage;
  transport.onmessage = (message) => {
    const m = message as { method?: string; params?: Record<string, unknown> };
    if (m.method === "notifications/progress" && tap) tap(m.params ?? {});
    deliver?.call(transport, message);
  };
  return {
    version: "v2",
    client,
    get pid() {
      return transport.pid;
    },
    notifications,
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallResult>,
    async callWithProgress(name, args, onProgress) {
      tap = ({ progressToken: _token, ...p }) =>
        onProgress(p as { progress: number; total?: number; message?: string });
      try {
        // a (no-op) onprogress makes the client send a progress token
        return await client.callTool({ name, arguments: args }, {
          onprogress: () => {},
        }) as CallResult;
      } finally {
        tap = null;
      }
    },
    listTools: () => client.listTools() as never,
    async setRoots(next) {
      roots = next;
      await client.sendRootsListChanged();
    },
    close: () => client.close(),
  };
}

/**
 * The environment a spawned waymark gets: this process's whole environment (the SDK's stdio
 * transports pass only HOME, PATH and a few more by default, which drops DENO_DIR and the
 * certificate and proxy settings a child needs to fetch packages into an empty cache), without
 * colours.
 */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  // servers run in this checkout: they snapshot it only when a test asks (docs/snapshots.md);
  // nor do they read the transcript of a Claude Code session the tests may run in (docs/cost.md)
  return {
    ...Deno.env.toObject(),
    NO_COLOR: "1",
    WAYMARK_SNAPSHOTS: "0",
    CLAUDE_CODE_SESSION_ID: "",
    ...extra,
  };
}

/** How a stdio client transport (either SDK line) spawns a server on `home`. */
export function serverParams(
  home: string,
  options: { cwd?: string; extraArgs?: string[]; env?: Record<string, string> } = {},
): { command: string; args: string[]; cwd: string; stderr: "pipe"; env: Record<string, string> } {
  return {
    command: Deno.execPath(),
    args: serverArgs(home, options.extraArgs),
    cwd: options.cwd ?? ROOT,
    stderr: "pipe",
    env: childEnv(options.env),
  };
}

/**
 * The v1 SDK's client, loaded by the few tests that speak it (about 0.1 s of CPU in each test
 * file's worker otherwise).
 */
export function v1Client(): Promise<
  typeof import("npm:@modelcontextprotocol/sdk@1.32.2/client/index.js")
> {
  return import("npm:@modelcontextprotocol/sdk@1.32.2/client/index.js");
}

/**
 * Serves `home` and connects a client of the given SDK line: in-process over a linked pair
 * (`tests/helpers/in_process.ts`), or a spawned `waymark serve` process for a server with an
 * environment of its own, `process: true`, or in a file that called `serveAsProcesses`.
 */
export async function connect(
  home: string,
  options: {
    client?: "v1" | "v2";
    cwd?: string;
    extraArgs?: string[];
    env?: Record<string, string>;
    process?: boolean;
  } = {},
): Promise<TestClient> {
  if (servingInProcess() && !options.env && !options.process) {
    return await connectInProcess(home, options);
  }
  const params = serverParams(home, options);
  if (options.client === "v1") {
    const [{ Client: ClientV1 }, { StdioClientTransport: StdioClientTransportV1 }] = await Promise
      .all([v1Client(), import("npm:@modelcontextprotocol/sdk@1.32.2/client/stdio.js")]);
    const client = new ClientV1({ name: "waymark-test-v1", version: "1.0.0" });
    await client.connect(new StdioClientTransportV1(params));
    return {
      version: "v1",
      call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallResult>,
      listTools: () => client.listTools() as never,
      close: () => client.close(),
    };
  }
  const client = new Client({ name: "waymark-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport(params));
  return {
    version: "v2",
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallResult>,
    listTools: () => client.listTools() as never,
    close: () => client.close(),
  };
}

async function connectInProcess(
  home: string,
  options: { client?: "v1" | "v2"; cwd?: string; extraArgs?: string[] },
): Promise<TestClient> {
  const served = await serveOnPair(
    ["--home", home, ...dbArgs(home), ...(options.extraArgs ?? [])],
    options.cwd ?? ROOT,
  );
  // the v1 line's client speaks through the same linked pair (its transport has the same shape)
  const client = options.client === "v1"
    ? new (await v1Client()).Client({ name: "waymark-test-v1", version: "1.0.0" })
    : new Client({ name: "waymark-test", version: "1.0.0" });
  await client.connect(served.transport as never);
  return {
    version: options.client ?? "v2",
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallResult>,
    listTools: () => client.listTools() as never,
    async close() {
      await client.close();
      await served.close();
    },
  };
}

/** The structured content of a successful call; throws with the error text otherwise. */
// deno-lint-ignore no-explicit-any
export function ok(result: CallResult): Record<string, any> {
  if (result.isError) throw new Error(`tool call failed: ${result.content[0]?.text}`);
  // deno-lint-ignore no-explicit-any
  return result.structuredContent as Record<string, any>;
}

/** The error envelope of a failed call; throws if the call succeeded. */
export function err(
  result: CallResult,
): { code: string; message: string; retry: { kind: string }; details?: Record<string, unknown> } {
  if (!result.isError) {
    throw new Error(`expected an error, got: ${result.content[0]?.text?.slice(0, 200)}`);
  }
  // deno-lint-ignore no-explicit-any
  return (result.structuredContent as { error: any }).error;
}

/**
 * Serves the checkout over loopback HTTP (`.ts` as TypeScript, everything else as text), so a
 * test can run `deno run -A <url>/main.ts` the way a user without a clone would (with `ONCE`:
 * `loopback_origin.ts`); `close` also forgets what Deno cached from it.
 */
export function serveCheckout(): { url: string; close(): Promise<void> } {
  const served = serveOnLoopback(async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    if (path.includes("..")) return new Response("no", { status: 400 });
    try {
      const body = await Deno.readFile(`${ROOT}${path.slice(1)}`);
      const type = path.endsWith(".ts") ? "application/typescript" : "text/plain";
      return new Response(body, { headers: { "content-type": type } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return { url: served.origin, close: served.close };
}
