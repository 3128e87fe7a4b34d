/**
 * MCP over Streamable HTTP at `/mcp`, through Hono, on 127.0.0.1 only. Every request must name
 * a loopback `Host` (with the served port) and, when it has an `Origin`, a loopback origin on
 * the same port: DNS-rebinding and cross-site requests get `403` before MCP sees them. Each
 * MCP session (from `initialize`) gets its own server instance, so roots, subscriptions and
 * server-to-client requests work per client, as over stdio; a session idle for 30 minutes is
 * closed (the client initializes again). Every request body is capped (4 MiB by default, the
 * same cap as a stdio line) before it is read whole, and so is the number of live sessions: a
 * new one past the cap closes the one idle longest.
 * @module
 */
import { type Context, Hono } from "npm:hono@4.13.19";
import { bodyLimit } from "npm:hono@4.13.19/body-limit";
import { MAX_MESSAGE_BYTES } from "../tools/line_splitter.ts";
import {
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "npm:@modelcontextprotocol/server@2.4.0";

/** Options of {@linkcode createMcpHttpApp}. */
export interface McpHttpOptions {
  /** Where log lines go (never stdout). */
  log?: (line: string) => void;
  /** The served port, for the Host and Origin checks (read on every request). */
  port: () => number;
  /** Close an MCP session after this long without a request (default 30 minutes). */
  idleTimeoutMs?: number;
  /** The largest request body, in bytes (default 4 MiB). */
  maxBodyBytes?: number;
  /** The most live MCP sessions; a new one past it closes the one idle longest (default 100). */
  maxSessions?: number;
}

/** Live MCP sessions at most, by default. */
export const DEFAULT_MAX_SESSIONS = 100;

const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"];

/** Whether a `Host` header names this loopback server. */
export function allowedHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  return LOOPBACK_HOSTS.some((h) => host === `${h}:${port}` || (port === 80 && host === h));
}

/** Whether an `Origin` header (when present) is this loopback server. */
export function allowedOrigin(origin: string | undefined, port: number): boolean {
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    const originPort = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    return (url.protocol === "http:" || url.protocol === "https:") &&
      LOOPBACK_HOSTS.includes(url.hostname) && originPort === port;
  } catch {
    return false;
  }
}

function rpcError(
  c: Context,
  error: { status: 400 | 403 | 404 | 413; message: string },
): Response {
  const { status, message } = error;
  return c.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, status);
}

/** The Hono app serving MCP at `/mcp`, and a `close` that ends every MCP session. */
export function createMcpHttpApp(
  factory: () => Server,
  options: McpHttpOptions,
): { app: Hono; close(): Promise<void> } {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const lastSeen = new Map<string, number>();
  const idleMs = options.idleTimeoutMs ?? 30 * 60_000;
  const maxBytes = options.maxBodyBytes ?? MAX_MESSAGE_BYTES;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const closeSession = (id: string, why: string) => {
    const transport = sessions.get(id);
    sessions.delete(id);
    lastSeen.delete(id);
    options.log?.(`MCP session ${id} ${why}; closed`);
    void transport?.close().catch(() => {});
  };
  // clients that vanish without DELETE would otherwise keep their server instance forever
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, at] of lastSeen) {
      if (now - at >= idleMs) closeSession(id, `idle for ${Math.round((now - at) / 1000)} s`);
    }
  }, Math.max(50, Math.min(60_000, idleMs / 2)));
  Deno.unrefTimer(sweeper);
  const app = new Hono();
  app.use("*", async (c, next) => {
    const port = options.port();
    if (!allowedHost(c.req.header("host"), port)) {
      return c.text("Forbidden: waymark only answers requests addressed to 127.0.0.1.", 403);
    }
    if (!allowedOrigin(c.req.header("origin"), port)) {
      return c.text("Forbidden: cross-origin requests are refused.", 403);
    }
    await next();
  });
  app.use(
    "/mcp",
    bodyLimit({
      maxSize: maxBytes,
      onError: (c) =>
        rpcError(c, {
          status: 413,
          message: `Request body too large: the limit is ${maxBytes} bytes.`,
        }),
    }),
  );
  app.all("/mcp", async (c) => {
    const id = c.req.header("mcp-session-id");
    if (id) {
      const transport = sessions.get(id);
      if (!transport) {
        return rpcError(c, {
          status: 404,
          message: "Unknown or expired MCP session; initialize again.",
        });
      }
      lastSeen.delete(id);
      lastSeen.set(id, Date.now());
      return await transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== "POST") {
      return rpcError(c, {
        status: 400,
        message: "No MCP session: send initialize first (POST /mcp).",
      });
    }
    let body: unknown;
    try {
      body = await c.req.raw.json();
    } catch {
      return c.json(
        { jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null },
        400,
      );
    }
    const messages = Array.isArray(body) ? body : [body];
    const initializing = messages.some((m) => (m as { method?: unknown })?.method === "initialize");
    if (!initializing) {
      return rpcError(c, {
        status: 400,
        message: "No MCP session: send initialize first, then pass Mcp-Session-Id.",
      });
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sessionId) => {
        // the Map keeps insertion order and a request re-inserts its session: the first key
        // is the one idle longest
        while (sessions.size >= maxSessions) {
          closeSession(lastSeen.keys().next().value!, `was idle longest with ${maxSessions} live`);
        }
        sessions.set(sessionId, transport);
        lastSeen.set(sessionId, Date.now());
      },
      onsessionclosed: (sessionId) => {
        sessions.delete(sessionId);
        lastSeen.delete(sessionId);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) {
        sessions.delete(transport.sessionId);
        lastSeen.delete(transport.sessionId);
      }
    };
    const server = factory();
    await server.connect(transport);
    return await transport.handleRequest(c.req.raw, { parsedBody: body });
  });
  app.notFound((c) => c.text("Not found: MCP is served at /mcp.", 404));
  return {
    app,
    async close() {
      clearInterval(sweeper);
      const open = [...sessions.values()];
      sessions.clear();
      lastSeen.clear();
      await Promise.allSettled(open.map((t) => t.close()));
    },
  };
}

/** A running HTTP endpoint. */
export interface McpHttpHandle {
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** Resolves when the listener has stopped. */
  readonly finished: Promise<void>;
  /** Stops listening and ends every MCP session. */
  close(): Promise<void>;
}

/** Serves MCP over Streamable HTTP on 127.0.0.1:`port` (Deno). */
export function serveMcpHttp(
  factory: () => Server,
  options: { port: number } & Omit<McpHttpOptions, "port">,
): Promise<McpHttpHandle> {
  let port = options.port;
  const { app, close } = createMcpHttpApp(factory, { ...options, port: () => port });
  let listening: (port: number) => void = () => {};
  const ready = new Promise<number>((r) => listening = r);
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: options.port,
    onListen: (addr) => listening((addr as Deno.NetAddr).port),
  }, app.fetch);
  return ready.then((actual) => {
    port = actual;
    options.log?.(`serving MCP over HTTP at http://127.0.0.1:${port}/mcp`);
    return {
      port,
      finished: server.finished,
      async close() {
        await close();
        await server.shutdown();
      },
    };
  });
}
