/**
 * 2025-era requests served statelessly (`--stateless`): a fresh server instance per request,
 * as the SDK's own stateless fallback does, but answering in ONE JSON body unless the request
 * asked for progress. The SDK's fallback always answers with an SSE stream, whose headers leave
 * before the tool has run and whose event and end-of-stream chunk follow as separate writes: on
 * a keep-alive connection the last small write waits for the client's delayed ACK (Nagle), about
 * 40 ms per answer. A JSON body has a known length and leaves in one write. A request carrying
 * `_meta.progressToken` still gets its stream, so its progress notifications arrive.
 * @module
 */
import {
  type AuthInfo,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "npm:@modelcontextprotocol/server@2.4.0";

/** Whether any message of `body` asks for progress notifications. */
export function wantsProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const meta = (m as { params?: { _meta?: { progressToken?: unknown } } })?.params?._meta;
    return meta?.progressToken !== undefined;
  });
}

/**
 * Serves one 2025-era request on a fresh server from `factory`, torn down once answered (or
 * when the client goes away mid-stream).
 */
export async function serveStatelessLegacy(
  request: Request,
  at: { factory: () => Server; parsedBody: unknown; authInfo: AuthInfo | undefined },
): Promise<Response> {
  if (request.method !== "POST") {
    return Response.json(
      { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null },
      { status: 405, headers: { allow: "POST" } },
    );
  }
  const server = at.factory();
  const streamed = wantsProgress(at.parsedBody);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !streamed,
  });
  await server.connect(transport);
  let torn = false;
  const teardown = () => {
    if (torn) return;
    torn = true;
    transport.close().catch(() => {});
    server.close().catch(() => {});
  };
  // only a stream outlives this function: a JSON answer is torn down once made, and touching
  // `request.signal` costs Deno.serve about 20 µs a request
  if (streamed) request.signal?.addEventListener("abort", teardown, { once: true });
  const response = await transport.handleRequest(request, {
    parsedBody: at.parsedBody,
    authInfo: at.authInfo,
  });
  // Reading `response.body` of a JSON answer would turn its text into a stream, which Deno
  // sends chunked (no length, a second write for the end): only a stream's body is touched.
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
    teardown();
    return response;
  }
  if (response.body === null) {
    teardown();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          teardown();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        teardown();
        controller.error(error);
      }
    },
    cancel(reason) {
      teardown();
      return reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}
