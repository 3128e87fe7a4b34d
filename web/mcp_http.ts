/**
 * MCP over Streamable HTTP at `/mcp`, through Hono, on 127.0.0.1 only. Every request must name
 * a loopback `Host` (with the served port) and, when it has an `Origin`, a loopback origin on
 * the same port: DNS-rebinding and cross-site requests get `403` before MCP sees them. Each
 * MCP session (from `initialize`) gets its own server instance, so roots, subscriptions and
 * server-to-client requests work per client, as over stdio; a session idle for 30 minutes is
 * closed (the client initializes again). Every request body is capped (4 MiB by default, the
 * same cap as a stdio line) as it streams in, and so is the number of live sessions: a new one
 * past the cap closes the one idle longest. The guards and headers are the viewer's
 * (`guard.ts`).
 * @module
 */
import { type Context, Hono } from "npm:hono@4.13.19";
import { bodyLimit } from "npm:hono@4.13.19/body-limit";
import { MAX_MESSAGE_BYTES } from "../tools/line_splitter.ts";
import { allowedHostsFor, hardening, loopbackOnly } from "./guard.ts";
import {
  createMcpHandler,
  isLegacyRequest,
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

function rpcError(
  c: Context,
  error: { status: 400 | 404 | 413; message: string },
): Response {
  const { status, message } = error;
  return c.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, status);
}

/**
 * The open MCP sessions by id. Clients that vanish without DELETE would otherwise keep their
 * server instance forever, so a sweeper closes each session `idleMs` after its last request,
 * and past `max` live sessions a new one closes the one idle longest.
 */
class McpSessions {
  readonly #transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  // insertion order is last-seen order: `get` re-inserts, so the first key is the idlest
  readonly #lastSeen = new Map<string, number>();
  readonly #sweeper: ReturnType<typeof setInterval>;
  readonly #max: number;
  readonly #log?: (line: string) => void;

  constructor(limits: { idleMs: number; max: number }, log?: (line: string) => void) {
    this.#max = limits.max;
    this.#log = log;
    this.#sweeper = setInterval(() => {
      const now = Date.now();
      for (const [id, at] of this.#lastSeen) {
        if (now - at >= limits.idleMs) {
          this.#evict(id, `idle for ${Math.round((now - at) / 1000)} s`);
        }
      }
    }, Math.max(50, Math.min(60_000, limits.idleMs / 2)));
    Deno.unrefTimer(this.#sweeper);
  }

  /** The session's transport (and marks it seen now), or `undefined`. */
  get(id: string): WebStandardStreamableHTTPServerTransport | undefined {
    const transport = this.#transports.get(id);
    if (transport) {
      this.#lastSeen.delete(id);
      this.#lastSeen.set(id, Date.now());
    }
    return transport;
  }

  #evict(id: string, why: string): void {
    const transport = this.#transports.get(id);
    this.delete(id);
    this.#log?.(`MCP session ${id} ${why}; closed`);
    void transport?.close().catch(() => {});
  }

  /** A transport whose session registers itself here once `initialize` gives it an id. */
  open(): WebStandardStreamableHTTPServerTransport {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sessionId) => {
        while (this.#transports.size >= this.#max) {
          this.#evict(this.#lastSeen.keys().next().value!, `was idle longest of ${this.#max}`);
        }
        this.#transports.set(sessionId, transport);
        this.#lastSeen.set(sessionId, Date.now());
      },
      onsessionclosed: (sessionId) => this.delete(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.delete(transport.sessionId);
    };
    return transport;
  }

  delete(id: string): void {
    this.#transports.delete(id);
    this.#lastSeen.delete(id);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const open = [...this.#transports.values()];
    this.#transports.clear();
    this.#lastSeen.clear();
    await Promise.allSettled(open.map((t) => t.close()));
  }
}

/** A POST without a session: only an `initialize` may start one, on a fresh server instance. */
async function initialize(
  c: Context,
  sessions: McpSessions,
  factory: () => Server,
): Promise<Response> {
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
  const transport = sessions.open();
  await factory().connect(transport);
  return await transport.handleRequest(c.req.raw, { parsedBody: body });
}

/** The Hono app serving MCP at `/mcp`, and a `close` that ends every MCP session. */
export function createMcpHttpApp(
  factory: () => Server,
  options: McpHttpOptions,
): { app: Hono; close(): Promise<void> } {
  const sessions = new McpSessions({
    idleMs: options.idleTimeoutMs ?? 30 * 60_000,
    max: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
  }, options.log);
  const maxBytes = options.maxBodyBytes ?? MAX_MESSAGE_BYTES;
  const app = new Hono();
  app.use("*", ...hardening(), loopbackOnly(() => allowedHostsFor(options.port())));
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
  // 2026-07-28 requests (a per-request `_meta` envelope, no session) are served statelessly,
  // one server instance per request, by the SDK's entry; 2025 traffic keeps its sessions.
  const modern = createMcpHandler(() => factory(), {
    legacy: "reject",
    maxRequestBodySize: maxBytes,
    onerror: (error) => options.log?.(`MCP (2026-07-28): ${error.message}`),
  });
  app.all("/mcp", async (c) => {
    if (
      c.req.method === "POST" && !c.req.header("mcp-session-id") &&
      !(await isLegacyRequest(c.req.raw, undefined, { maxRequestBodySize: maxBytes }))
    ) {
      return await modern.fetch(c.req.raw);
    }
    const id = c.req.header("mcp-session-id");
    if (id) {
      const transport = sessions.get(id);
      if (!transport) {
        return rpcError(c, {
          status: 404,
          message: "Unknown or expired MCP session; initialize again.",
        });
      }
      return await transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== "POST") {
      return rpcError(c, {
        status: 400,
        message: "No MCP session: send initialize first (POST /mcp).",
      });
    }
    return await initialize(c, sessions, factory);
  });
  app.notFound((c) => c.text("Not found: MCP is served at /mcp.", 404));
  return { app, close: () => Promise.all([sessions.close(), modern.close()]).then(() => {}) };
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
