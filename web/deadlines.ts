/**
 * An HTTP listener that cuts off slow clients. `Deno.serve` has no header or body timeout: a
 * connection that sends a byte a second stays open forever, and a few hundred of them hold a
 * few hundred sockets and requests (nor has Deno's `node:http`: it takes `headersTimeout` and
 * ignores it). So the public port is a small relay: each connection is piped to a `Deno.serve`
 * listening on a Unix socket in a private temporary folder (cheaper than a second TCP hop, and
 * out of reach of other users), and the client's bytes are followed (`request_framer.ts`) so that a header
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
  /**
   * Stops listening at once, lets the requests in flight finish for up to `graceMs` (default
   * 0: none), then closes every connection left (a long stream, a slow call) and waits for the
   * handlers. A request cut this way wrote all of its transaction or none of it.
   */
  shutdown(graceMs?: number): Promise<void>;
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
  const folder = Deno.makeTempDirSync({ prefix: "waymark-http-" });
  Deno.chmodSync(folder, 0o700);
  const path = `${folder}/relay.sock`;
  const inner = Deno.serve({ path, onListen: () => {} }, (request) => handler(request));
  const open = new Set<() => void>();
  const accepting = (async () => {
    for await (const client of listener) {
      void relay(client, {
        inner: path,
        deadlines,
        open,
        log: options.log,
      });
    }
  })().catch(() => {});
  let stopping: Promise<void> | null = null;
  return {
    port: (listener.addr as Deno.NetAddr).port,
    finished: inner.finished,
    shutdown: (graceMs = 0) =>
      stopping ??= (async () => {
        listener.close();
        await accepting;
        // the inner server's own shutdown finishes the requests in flight, closing idle
        // connections; what is still open after the grace is cut
        const finishing = inner.shutdown();
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([finishing, new Promise((r) => timer = setTimeout(r, graceMs))]);
        clearTimeout(timer);
        for (const close of open) close();
        await finishing;
        Deno.removeSync(folder, { recursive: true });
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
    inner: string;
    deadlines: Deadlines;
    open: Set<() => void>;
    log?: (line: string) => void;
  },
): Promise<void> {
  let upstream: Deno.UnixConn;
  try {
    upstream = await Deno.connect({ transport: "unix", path: at.inner });
    // every chunk is relayed as it comes: a small one held back by Nagle's algorithm waits for
    // the peer's delayed ACK (40 ms on Linux)
    (client as Partial<Deno.TcpConn>).setNoDelay?.(true);
  } catch {
    return closeQuietly(client);
  }
  let answered = false;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    at.open.delete(close);
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
