/**
 * An authenticated `serve --http` for tests: the test identity provider (`test_idp.ts`), a
 * server process that trusts it and accepts personal access tokens, and ways to reach it: a
 * real MCP client (v2 or v1) sending a bearer token, and raw requests for the refusals.
 * @module
 */
import { Client, StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/client@2.4.0";
import { tempHome, type TestClient, v1Client } from "./server.ts";
import { runCli } from "./maintenance.ts";
import { type HttpServer, startHttpServer } from "./http_server.ts";
import { startTestIdp, type TestIdp } from "./test_idp.ts";

/** The resource URI the test service is configured with (the audience its tokens name). */
export const RESOURCE = "https://waymark.test/mcp";
/** The scope it requires. */
export const SCOPE = "waymark";

/** A running authenticated service and what reaches it. */
export interface AuthService {
  /** Its home (and libSQL file). */
  home: Awaited<ReturnType<typeof tempHome>>;
  /** The identity provider it trusts. */
  idp: TestIdp;
  /** The server process. */
  server: HttpServer;
  /** `http://127.0.0.1:PORT/mcp`. */
  url: URL;
  /** A valid JWT for `sub` (audience, scope and issuer right), with `claims` over them. */
  jwt(claims?: Record<string, unknown>): Promise<string>;
  /** Creates a personal access token with the CLI (`tokens create`) and returns it. */
  pat(name: string, extra?: string[]): Promise<string>;
  /** Stops the server (checking it wrote nothing on stdout), the IdP, and removes the home. */
  stop(): Promise<{ stderr: string }>;
}

/** Creates a personal access token with the CLI (`tokens create`, `extra` flags added). */
export async function personalToken(
  home: string,
  token: { name: string; scope: string; extra?: readonly string[] },
): Promise<string> {
  const made = await runCli(
    ["tokens", "create", "--name", token.name, "--auth-scope", token.scope, ...token.extra ?? []],
    { home },
  );
  if (made.code !== 0) throw new Error(`tokens create failed: ${made.err}`);
  return made.out.trim();
}

/** Starts the IdP and `serve --http 0` trusting it, with `args` added. */
export async function startAuthService(args: readonly string[] = []): Promise<AuthService> {
  const home = await tempHome();
  const idp = await startTestIdp();
  const server = await startHttpServer(home.home, {
    args: [
      "--auth-resource",
      RESOURCE,
      "--auth-issuer",
      idp.issuer,
      "--auth-scope",
      SCOPE,
      "--personal-tokens",
      ...args,
    ],
  });
  return {
    home,
    idp,
    server,
    url: new URL(`http://127.0.0.1:${server.port}/mcp`),
    jwt: (claims = {}) => idp.sign({ aud: RESOURCE, scope: SCOPE, name: "Alice", ...claims }),
    pat: (name, extra = []) => personalToken(home.home, { name, scope: SCOPE, extra }),
    async stop() {
      const stderr = server.stderr();
      const { stdout } = await server.stop();
      await idp.close();
      await home.cleanup();
      if (stdout !== "") throw new Error(`the server wrote on stdout: ${stdout.slice(0, 200)}`);
      return { stderr };
    },
  };
}

/** A real MCP client over Streamable HTTP sending `Authorization: Bearer <token>`. */
export async function connectWithToken(
  url: URL,
  token: string,
  version: "v1" | "v2" = "v2",
): Promise<TestClient> {
  const requestInit = { headers: { authorization: `Bearer ${token}` } };
  const info = { name: "waymark-auth-test", version: "1.0.0" };
  const client = version === "v2" ? new Client(info) : new (await v1Client()).Client(info);
  const transport = version === "v2"
    ? new StreamableHTTPClientTransport(url, { requestInit })
    : new (await import("npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp.js"))
      .StreamableHTTPClientTransport(url, { requestInit });
  // deno-lint-ignore no-explicit-any
  await (client as any).connect(transport);
  return {
    version,
    // deno-lint-ignore no-explicit-any
    call: (name, args) => (client as any).callTool({ name, arguments: args }),
    listTools: () => client.listTools(),
    close: () => client.close(),
  };
}

/** The `initialize` request of a 2025-11-25 client. */
export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1.0.0" },
  },
};

/**
 * A JSON-RPC POST to `url` as a client would send it (by default a `start_workflow` call, which
 * writes if it gets through): the status, headers and body.
 */
export async function postRpc(
  url: URL,
  headers: Record<string, string> = {},
  message: unknown = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "start_workflow", arguments: { workflowId: "waymark.code_review" } },
  },
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(message),
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text);
  } catch { /* not JSON: left empty */ }
  return { status: response.status, headers: response.headers, body };
}
