/**
 * A 2025-11-25 `tools/call` POST with a bearer token, as a client sends it over Streamable HTTP:
 * raw JSON-RPC, so a test sees every answer (and refusal) as it came.
 * @module
 */

/** The `fetch` options of a `tools/call` request with id `id`, authorized by `token`. */
export function toolCallInit(
  at: { token: string; id: number },
  name: string,
  args: Record<string, unknown>,
): RequestInit & { headers: Record<string, string> } {
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      authorization: `Bearer ${at.token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: at.id,
      method: "tools/call",
      params: { name, arguments: args },
    }),
  };
}

/** The same request to an app's `/mcp` at `host`, for handing to an in-process app's `fetch`. */
export function toolCallRequest(
  at: { host: string; token: string; id: number },
  name: string,
  args: Record<string, unknown>,
): Request {
  const init = toolCallInit(at, name, args);
  return new Request(`http://${at.host}/mcp`, {
    ...init,
    headers: { host: at.host, ...init.headers },
  });
}
