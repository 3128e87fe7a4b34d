/**
 * The seam between authentication and the MCP handlers: a request the gate accepts reaches
 * the server's handlers with `ctx.http.authInfo`, whose principal `principalOf` reads, over
 * both eras of the HTTP endpoint (2025 sessions of the v1 and v2 clients, and session-less
 * 2026-07-28 requests), for a
 * JWT person, a JWT bot (client credentials) and a personal access token kept in a real libSQL
 * file. The handlers never see the token. The endpoint is waymark's own (`serveMcpHttp` with
 * `createAuthGate`); only the MCP server behind it is a one-tool server that reports what it got.
 * @module
 */
import assert from "node:assert/strict";
import { Server } from "@modelcontextprotocol/server";
import { serveMcpHttp } from "../../web/mcp_http.ts";
import { createAuthGate } from "../../web/auth/mod.ts";
import { principalOf } from "../../tools/context/principal.ts";
import { resolveAuthSettings } from "../../config/auth_settings.ts";
import { cryptoRandom, openStore, sqlPersonalTokens, systemClock } from "../../store/mod.ts";
import { startTestIdp } from "../helpers/test_idp.ts";
import { connectWithToken, postRpc, RESOURCE, SCOPE } from "../helpers/auth_service.ts";

/** A 2026-07-28 `tools/call whoami` (no session: the per-request envelope), raw over HTTP. */
async function modernWhoami(url: URL, token: string): Promise<Record<string, unknown>> {
  const answer = await postRpc(url, {
    authorization: `Bearer ${token}`,
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "whoami",
  }, {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: {
      name: "whoami",
      arguments: {},
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "raw-2026", version: "1.0.0" },
      },
    },
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const result = answer.body.result as { content: { text: string }[] };
  return JSON.parse(result.content[0]!.text);
}

/** A server with one tool, `whoami`, answering what its request context carries. */
function whoamiServer(): Server {
  const server = new Server({ name: "whoami", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler("tools/list", () => ({
    tools: [{ name: "whoami", inputSchema: { type: "object" } }],
  }));
  server.setRequestHandler("tools/call", (_request, ctx) => ({
    content: [{
      type: "text",
      text: JSON.stringify({
        principal: principalOf(ctx) ?? null,
        token: ctx.http?.authInfo?.token ?? null,
      }),
    }],
  }));
  return server;
}

Deno.test("an authenticated request reaches the handlers with its principal, and never its token", async () => {
  const idp = await startTestIdp();
  const dir = await Deno.makeTempDir({ prefix: "waymark-principal-" });
  const store = await openStore(`file:${dir}/waymark.db`);
  const tokens = sqlPersonalTokens(store.db, { clock: systemClock, random: cryptoRandom });
  const resolved = resolveAuthSettings(undefined, {
    resource: RESOURCE,
    issuer: idp.issuer,
    jwksUrl: idp.jwksUrl,
    scopes: [SCOPE],
    personalTokens: true,
  });
  assert.ok(resolved.ok && resolved.settings);
  const gate = createAuthGate({ settings: resolved.settings, personalTokens: tokens });
  const handle = await serveMcpHttp(() => whoamiServer(), { port: 0, auth: gate });
  const url = new URL(`http://127.0.0.1:${handle.port}/mcp`);
  try {
    const person = await idp.sign({ aud: RESOURCE, scope: SCOPE, sub: "alice", name: "Alice" });
    const bot = await idp.sign({ aud: RESOURCE, scope: SCOPE, sub: "ci", client_id: "ci" });
    const { token: pat } = await tokens.create({
      name: "build bot",
      kind: "bot",
      scopes: [SCOPE],
      expiresAt: null,
    });
    const expected = [
      [person, { subject: `${idp.issuer}#alice`, displayName: "Alice", kind: "person" }],
      [bot, { subject: `${idp.issuer}#ci`, displayName: "ci", kind: "bot" }],
      [pat, { subject: "pat:build bot", displayName: "build bot", kind: "bot" }],
    ] as const;
    for (const [token, principal] of expected) {
      const got = await modernWhoami(url, token);
      assert.deepEqual(got.principal, principal, `2026-07-28 ${principal.subject}`);
      assert.equal(got.token, "[redacted]");
    }
    for (const version of ["v1", "v2"] as const) {
      for (const [token, principal] of expected) {
        const client = await connectWithToken(url, token, version);
        try {
          const answer = await client.call("whoami", {});
          const got = JSON.parse(answer.content[0]!.text);
          assert.deepEqual(got.principal, principal, `${version} ${principal.subject}`);
          assert.equal(got.token, "[redacted]", "the handlers never see the token");
        } finally {
          await client.close();
        }
      }
    }
  } finally {
    await handle.close();
    await store.close();
    await idp.close();
    await Deno.remove(dir, { recursive: true });
  }
});
