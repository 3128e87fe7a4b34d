/**
 * An HTTP listener that cuts off slow clients. `Deno.serve` has no header or body timeout: a
 * connection that sends a byte a second stays open forever, and a few hundred of them hold a
 * few hundred sockets and requests. So the public port is a small relay: each connection is
 * piped to a `Deno.serve` listening on another loopback port (which answers only the relay's
 * own connections), and the client's bytes are followed (`request_framer.ts`) so that a header
 * block must arrive within `headerTimeoutMs` of its first byte (of the connection, for the first
 * request) and a body within `bodyTimeoutMs` of its headers. A client past either is sent
 * `408 Request Timeout` (when nothing has been answered on that connection yet) and the
 * connection is closed; so is one whose header block passes {@linkcode MAX_HEADER_BYTES} (431)
 * or is not HTTP/1.x framing (400). Responses pass through untouched, so a long answer (an SSE
 * stream) is never cut.
 * @module
 */
import { type FramingError, RequestFramer } from "./request_framer.ts";

/** How long a client may take to send a request. */
export interface Deadlines {
  /** From the first byte of a request (or the connection) to the end of its header block. */
  headerTimeoutMs: number;
  /** From the end of the header block to the end of the body. */
  bodyTimeoutMs: number;
}

/** The defaults: 10 s for headers, 30 s for a body (a 4 MiB body over loopback takes ms). */
export const DEFAULT_DEADLINES: Deadlines = { headerTimeoutMs: 10_000, bodyTimeoutMs: 30_000 };

/** The largest header block taken. */
export const MAX_HEADER_BYTES = 64 * 1024;

/** A listening server. */
export interface DeadlineServer {
  /** The public port. */
  readonly port: number;
  /** Resolves once the server has shut down. */
  readonly finished: Promise<void>;
  /** Stops listening, closes every connection, and waits for the handlers. */
  shutdown(): Promise<void>;
}

const REFUSALS: Record<FramingError | "timeout", string> = {
  timeout: "408 Request Timeout",
  header_too_large: "431 Request Header Fields Too Large",
  bad_request: "400 Bad Request",
};

/**
 * Serves `handler` on 127.0.0.1:`port` (or `hostname`, which callers allow only with
 * authentication), over TLS when given a certificate, behind the deadlines. Throws (like `Deno.serve`, e.g. `AddrInUse`) when the
 * port cannot be bound.
 */
export function serveWithDeadlines(
  handler: (request: Request) => Response | Promise<Response>,
  options: {
    port: number;
    hostname?: string;
    /** A certificate chain and its key (PEM): the listener speaks TLS, the relay plain text. */
    tls?: { cert: string; key: string };
    deadlines?: Partial<Deadlines>;
    log?: (line: string) => void;
  },
): DeadlineServer {
  const deadlines: Deadlines = {
    headerTimeoutMs: options.deadlines?.headerTimeoutMs ?? DEFAULT_DEADLINES.headerTimeoutMs,
    bodyTimeoutMs: options.deadlines?.bodyTimeoutMs ?? DEFAULT_DEADLINES.bodyTimeoutMs,
  };
  const address = { hostname: options.hostname ?? "127.0.0.1", port: options.port };
  const listener: Deno.Listener = options.tls
    ? Deno.listenTls({ ...address, ...options.tls })
    : Deno.listen(address);
  const relayed = new Set<number>();
  const inner = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request, info) =>
      relayed.has(info.remoteAddr.port) ? handler(request) : new Response(null, { status: 403 }),
  );
  const open = new Set<() => void>();
  const accepting = (async () => {
    for await (const client of listener) {
      void relay(client, {
        inner: inner.addr.port,
        deadlines,
        relayed,
        open,
        log: options.log,
      });
    }
  })().catch(() => {});
  let stopping: Promise<void> | null = null;
  return {
    port: (listener.addr as Deno.NetAddr).port,
    finished: inner.finished,
    shutdown: () =>
      stopping ??= (async () => {
        listener.close();
        await accepting;
        for (const close of open) close();
        await inner.shutdown();
      })(),
  };
}

/** Answers a client the server will not hear out, before closing its connection. */
async function answerRefusal(client: Deno.Conn, status: string, detail: string): Promise<void> {
  const text = `${status}: ${detail}.\n`;
  await writeAll(
    client,
    `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain\r\n` +
      `Content-Length: ${text.length}\r\n\r\n${text}`,
  ).catch(() => {});
}

/** Pipes one client connection to the inner server, timing the client's requests. */
async function relay(
  client: Deno.Conn,
  at: {
    inner: number;
    deadlines: Deadlines;
    relayed: Set<number>;
    open: Set<() => void>;
    log?: (line: string) => void;
  },
): Promise<void> {
  let upstream: Deno.TcpConn;
  try {
    upstream = await Deno.connect({ hostname: "127.0.0.1", port: at.inner });
  } catch {
    return closeQuietly(client);
  }
  const port = (upstream.localAddr as Deno.NetAddr).port;
  at.relayed.add(port);
  let answered = false;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    at.open.delete(close);
    at.relayed.delete(port);
    closeQuietly(client);
    closeQuietly(upstream);
  };
  at.open.add(close);
  const refuse = async (why: FramingError | "timeout", detail: string) => {
    at.log?.(`HTTP client ${detail}; connection closed`);
    if (!answered) await answerRefusal(client, REFUSALS[why], detail);
    close();
  };
  const framer = new RequestFramer(MAX_HEADER_BYTES);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timing = "";
  const time = () => {
    const phase = framer.phase === "idle" && framer.started === 0 ? "head" : framer.phase;
    // the first request's header time runs from the connection, not from its first byte
    const key = `${phase}:${Math.max(1, framer.started)}`;
    if (key === timing) return;
    timing = key;
    clearTimeout(timer);
    if (phase === "idle") return;
    const ms = phase === "head" ? at.deadlines.headerTimeoutMs : at.deadlines.bodyTimeoutMs;
    const what = phase === "head" ? "headers" : "body";
    timer = setTimeout(
      () => void refuse("timeout", `sent no complete ${what} within ${ms} ms`),
      ms,
    );
  };
  time();
  const fromClient = pump(client, upstream, (chunk) => {
    const error = framer.push(chunk);
    if (error) {
      void refuse(
        error,
        error === "bad_request" ? "sent no HTTP/1.1 framing" : "sent headers over 64 KiB",
      );
      return false;
    }
    time();
    return true;
  }).then(() => upstream.closeWrite().catch(() => {}));
  const toClient = pump(upstream, client, () => {
    answered = true;
    return true;
  });
  await Promise.race([toClient, fromClient.then(() => toClient)]).catch(() => {});
  close();
}

/** Copies `from` to `to` until `from` ends or `look` (shown each chunk first) says stop. */
async function pump(
  from: Deno.Conn,
  to: Deno.Conn,
  look: (chunk: Uint8Array) => boolean,
): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  for (;;) {
    let n: number | null;
    try {
      n = await from.read(buffer);
    } catch {
      return;
    }
    if (n === null) return;
    const chunk = buffer.subarray(0, n);
    if (!look(chunk)) return;
    try {
      await writeAll(to, chunk);
    } catch {
      return;
    }
  }
}

async function writeAll(conn: Deno.Conn, data: Uint8Array | string): Promise<void> {
  let bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  while (bytes.length > 0) bytes = bytes.subarray(await conn.write(bytes));
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}
