/**
 * A plain round-robin load balancer on loopback, for replica tests and the bench: each request
 * goes to the next upstream in turn, whatever it belongs to (no sticky sessions, no health
 * checks), with the upstream's own `Host` (as nginx's default `proxy_set_header Host
 * $proxy_host`). An upstream that refuses the connection is skipped for the next one, as
 * nginx's default `proxy_next_upstream error` does; a request an upstream dropped after taking
 * it answers `502`, and the client retries. Bodies stream both ways.
 * @module
 */

/** A running proxy. */
export interface RoundRobinProxy {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** Requests each upstream (by index) has been sent. */
  readonly sent: number[];
  /** Stops listening. */
  close(): Promise<void>;
}

/** Headers a proxy never forwards (hop-by-hop, and the client's `Host`). */
const HOP_HEADERS = ["connection", "keep-alive", "transfer-encoding", "upgrade", "host"];

function forwardHeaders(headers: Headers): Headers {
  const out = new Headers(headers);
  for (const name of HOP_HEADERS) out.delete(name);
  return out;
}

/** Whether a failed fetch never reached the upstream (so the request may go to another). */
function refused(error: unknown): boolean {
  const text = String((error as { cause?: unknown })?.cause ?? error);
  return /ConnectionRefused|Connection refused|os error 111/i.test(text);
}

/** Starts a proxy in front of `upstreams` (ports on 127.0.0.1). */
export function startRoundRobinProxy(upstreams: readonly number[]): RoundRobinProxy {
  let next = 0;
  const sent = upstreams.map(() => 0);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    // the body is read once, so a refused connection can send it again to the next upstream
    const body = req.body ? new Uint8Array(await req.arrayBuffer()) : undefined;
    for (let tried = 0; tried < upstreams.length; tried++) {
      const index = next++ % upstreams.length;
      try {
        sent[index]! += 1;
        const response = await fetch(
          `http://127.0.0.1:${upstreams[index]}${url.pathname}${url.search}`,
          { method: req.method, headers: forwardHeaders(req.headers), body },
        );
        return new Response(response.body, {
          status: response.status,
          statusText: response.statusText,
          headers: forwardHeaders(response.headers),
        });
      } catch (error) {
        if (!refused(error)) return new Response("Bad Gateway", { status: 502 });
      }
    }
    return new Response("Bad Gateway: no upstream answered", { status: 502 });
  });
  return {
    port: server.addr.port,
    sent,
    close: () => server.shutdown(),
  };
}
