/**
 * MCP over Streamable HTTP at `/mcp`, through Hono, on 127.0.0.1 only. Every request must name
 * a loopback `Host` (with the served port) and, when it has an `Origin`, a loopback origin on
 * the same port: DNS-rebinding and cross-site requests get `403` before MCP sees them. Each
 * MCP session (from `initialize`) gets its own server instance, so roots, subscriptions and
 * server-to-client requests work per client, as over stdio; a session idle for 30 minutes is
 * closed (the client initializes again). Every POST body is read once, capped (4 MiB by default,
 * the same cap as a stdio line), and parsed once before anything routes it; the SDK gets the
 * parsed body and never reads the request again (`request_body.ts`). The number of live sessions
 * is capped too: a new one past the cap closes the one idle longest. The guards and headers are
 * the viewer's (`guard.ts`); slow clients are cut off by the listener (`deadlines.ts`). With
 * `stateless`, no MCP session is kept at all: every request, of either era, is served by a fresh
 * server instance (the SDK's stateless Streamable HTTP), so replicas behind a balancer need no
 * sticky sessions. An authenticated requestor's tasks are its principal's, read from the store.
 * @module
 */
import { type Context, Hono } from "npm:hono@4.13.19";
import { MAX_MESSAGE_BYTES } from "../tools/stdio/line_splitter.ts";
import { allowedHostsFor, hardening, loopbackOnly } from "./request_guard.ts";
import { readJsonBody } from "./request_body.ts";
import { serveStatelessLegacy } from "./stateless_mcp.ts";
import type { Ops } from "./ops.ts";
export { createOps, storeProbe } from "./ops.ts";
import { createTaskOwner, principalTaskOwner, type TaskOwner } from "../tools/tasks/owner.ts";
import { principalOf } from "../tools/context/principal.ts";
import { type Deadlines, serveWithDeadlines } from "./deadlines.ts";
import { type AuthGate, requestAuth } from "./auth/mod.ts";
import {
  type AuthInfo,
  createMcpHandler,
  isJsonContentType,
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
  /**
   * Authentication (`auth/`): every request but the resource metadata needs a bearer token,
   * and the handlers get its `AuthInfo`; the resource URI's host is answered besides loopback.
   */
  auth?: AuthGate;
  /** What answers every path but `/mcp` (the viewer), behind the same guards; default 404. */
  fallback?: (request: Request) => Response | Promise<Response>;
  /**
   * Serve every request on a fresh server instance and keep nothing between requests (the
   * SDK's stateless Streamable HTTP, for 2025 traffic too): no `Mcp-Session-Id`, no GET stream,
   * so replicas behind a round-robin balancer need no sticky sessions (docs/team_service.md).
   */
  stateless?: boolean;
  /** `/healthz`, `/readyz` and `/metrics` (`ops.ts`). */
  ops?: Ops;
}

/** Live MCP sessions at most, by default. */
export const DEFAULT_MAX_SESSIONS = 100;

function rpcError(
  c: Context,
  error: { status: 400 | 404 | 413 | 415; message: string; code?: number },
): Response {
  const { status, message, code = -32000 } = error;
  return c.json({ jsonrpc: "2.0", error: { code, message }, id: null }, status);
}

/** A POST's body, read once, capped, and parsed; or the answer when it cannot be. */
async function readPost(c: Context, maxBytes: number): Promise<{ body: unknown } | Response> {
  if (!isJsonContentType(c.req.header("content-type") ?? null)) {
    return rpcError(c, {
      status: 415,
      message: "Unsupported Media Type: Content-Type must be application/json",
    });
  }
  const read = await readJsonBody(c.req.raw, maxBytes);
  if (read.kind === "json") return { body: read.body };
  if (read.kind === "too_large") {
    return rpcError(c, {
      status: 413,
      message: `Request body too large: the limit is ${maxBytes} bytes.`,
    });
  }
  const why = read.kind === "not_json"
    ? `the body is not JSON (${read.message})`
    : read.kind === "empty"
    ? "the body is empty"
    : "the body could not be read";
  return rpcError(c, { status: 400, code: -32700, message: `Parse error: ${why}.` });
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

/**
 * Makes the server of one requestor: a principal, an MCP session, or every session-less
 * request together; `owner` scopes its `tasks/*` to the runs it started
 * (`tools/tasks/owner.ts`); none: every run.
 */
export type McpServerFactory = (owner: TaskOwner | undefined) => Server;

/**
 * Whose tasks a request's server answers: an authenticated request's principal's (the same on
 * every replica), else `unauthenticated`.
 */
function ownerOf(authInfo: AuthInfo | undefined, unauthenticated: TaskOwner | undefined) {
  // the handlers' reading of the principal, from the `AuthInfo` their context will carry
  const principal = principalOf({ http: { authInfo } } as Parameters<typeof principalOf>[0]);
  return principal ? principalTaskOwner(principal) : unauthenticated;
}

/**
 * A POST without a session: only an `initialize` may start one, on a fresh server instance
 * owning the tasks it starts.
 */
async function initialize(
  c: Context,
  at: { sessions: McpSessions; factory: McpServerFactory; body: unknown },
): Promise<Response> {
  const { sessions, factory, body } = at;
  const messages = Array.isArray(body) ? body : [body];
  const initializing = messages.some((m) => (m as { method?: unknown })?.method === "initialize");
  if (!initializing) {
    return rpcError(c, {
      status: 400,
      message: "No MCP session: send initialize first, then pass Mcp-Session-Id.",
    });
  }
  const transport = sessions.open();
  const authInfo = requestAuth(c.req.raw);
  await factory(ownerOf(authInfo, createTaskOwner())).connect(transport);
  return await transport.handleRequest(c.req.raw, { parsedBody: body, authInfo });
}

/**
 * What every request passes first: counted, hardened, the probes (any Host, no token: they say
 * nothing), the Host check, authentication, then `/metrics` behind it.
 */
function guard(
  app: Hono,
  options: Pick<McpHttpOptions, "ops" | "auth"> & { hosts: () => readonly string[] },
): void {
  const { ops } = options;
  if (ops) app.use("*", ops.count);
  app.use("*", ...hardening());
  if (ops) app.use("*", ops.probes);
  app.use("*", loopbackOnly(options.hosts));
  if (options.auth) app.use("*", options.auth.middleware);
  if (ops) app.get("/metrics", (c) => ops.metrics(c));
}

/** The Hono app serving MCP at `/mcp`, and a `close` that ends every MCP session. */
export function createMcpHttpApp(
  factory: McpServerFactory,
  options: McpHttpOptions,
): { app: Hono; close(): Promise<void> } {
  const sessions = new McpSessions({
    idleMs: options.idleTimeoutMs ?? 30 * 60_000,
    max: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
  }, options.log);
  const maxBytes = options.maxBodyBytes ?? MAX_MESSAGE_BYTES;
  const app = new Hono();
  const hosts =
    () => [...allowedHostsFor(options.port()), ...(options.auth ? [options.auth.publicHost] : [])];
  guard(app, { ...options, hosts });
  // 2026-07-28 requests (a per-request `_meta` envelope, no session) are served statelessly,
  // one server instance per request, by the SDK's entry; 2025 traffic keeps its sessions.
  // session-less requests have no identity to tell apart (and waymark no authentication): they
  // are one requestor, seeing the tasks they started and none of any session's
  // A stateless server keeps no requestor in memory: unauthenticated, tasks are every run's.
  const sessionless = options.stateless ? undefined : createTaskOwner();
  const modern = createMcpHandler(({ authInfo }) => factory(ownerOf(authInfo, sessionless)), {
    legacy: "reject",
    maxRequestBodySize: maxBytes,
    onerror: (error) => options.log?.(`MCP: ${error.message}`),
  });
  app.all("/mcp", async (c) => {
    // a POST's body is read and parsed here, once; nothing reads the request again
    const read = c.req.method === "POST" ? await readPost(c, maxBytes) : { body: undefined };
    if (read instanceof Response) return read;
    const parsedBody = read.body;
    if (options.stateless) {
      const authInfo = requestAuth(c.req.raw);
      if (await isLegacyRequest(c.req.raw, parsedBody, { maxRequestBodySize: maxBytes })) {
        const owner = ownerOf(authInfo, undefined);
        return await serveStatelessLegacy(c.req.raw, {
          factory: () => factory(owner),
          parsedBody,
          authInfo,
        });
      }
      return await modern.fetch(c.req.raw, { parsedBody, authInfo });
    }
    if (
      c.req.method === "POST" && !c.req.header("mcp-session-id") &&
      !(await isLegacyRequest(c.req.raw, parsedBody, { maxRequestBodySize: maxBytes }))
    ) {
      return await modern.fetch(c.req.raw, { parsedBody, authInfo: requestAuth(c.req.raw) });
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
      return await transport.handleRequest(c.req.raw, {
        parsedBody,
        authInfo: requestAuth(c.req.raw),
      });
    }
    if (c.req.method !== "POST") {
      return rpcError(c, {
        status: 400,
        message: "No MCP session: send initialize first (POST /mcp).",
      });
    }
    return await initialize(c, { sessions, factory, body: parsedBody });
  });
  const fallback = options.fallback;
  if (fallback) app.all("*", (c) => fallback(c.req.raw));
  app.notFound((c) => c.text("Not found: MCP is served at /mcp.", 404));
  return { app, close: () => Promise.all([sessions.close(), modern.close()]).then(() => {}) };
}

/** A running HTTP endpoint. */
export interface McpHttpHandle {
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** Resolves when the listener has stopped. */
  readonly finished: Promise<void>;
  /**
   * Stops listening, lets calls in flight finish for up to `graceMs` (default 0), cuts what is
   * left, and ends every MCP session.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves MCP over Streamable HTTP on 127.0.0.1:`port` (or `hostname`: callers allow another
 * address only with `auth`) (Deno), slow clients cut off.
 */
export function serveMcpHttp(
  factory: McpServerFactory,
  options:
    & {
      port: number;
      hostname?: string;
      /** A certificate chain and key (PEM): serve HTTPS (`docs/team_service.md`). */
      tls?: { cert: string; key: string };
      deadlines?: Partial<Deadlines>;
    }
    & Omit<McpHttpOptions, "port">,
): Promise<McpHttpHandle> {
  let port = options.port;
  const { app, close } = createMcpHttpApp(factory, { ...options, port: () => port });
  const server = serveWithDeadlines(app.fetch, {
    port: options.port,
    hostname: options.hostname,
    tls: options.tls,
    deadlines: options.deadlines,
    log: options.log,
  });
  port = server.port;
  const host = options.hostname?.includes(":") ? `[${options.hostname}]` : options.hostname;
  options.log?.(
    `serving MCP over HTTP at ${options.tls ? "https" : "http"}://${
      host ?? "127.0.0.1"
    }:${port}/mcp` +
      (options.auth
        ? ` (authentication required; resource metadata at ${options.auth.resourceMetadataUrl})`
        : ""),
  );
  return Promise.resolve({
    port,
    finished: server.finished,
    async close(graceMs?: number) {
      // in-flight calls finish first (their answers may be SSE streams of a session)
      await server.shutdown(graceMs);
      await close();
    },
  });
}
