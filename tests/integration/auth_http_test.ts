/**
 * `serve --http` as an OAuth 2.1 resource server, driven over real HTTP: the protected resource
 * metadata and the 401 challenge; real MCP clients (v2 and v1) walking a workflow with a bearer
 * JWT of the test identity provider and with a personal access token; and every hostile token
 * refused cleanly, with nothing written to the database and no token in the server's log.
 * @module
 */
import assert from "node:assert/strict";
import { ok } from "../helpers/server.ts";
import { walkWorkflow } from "../helpers/mcp_agent.ts";
import { withTestDb } from "../helpers/db.ts";
import { runCli } from "../helpers/maintenance.ts";
import {
  type AuthService,
  connectWithToken,
  INITIALIZE,
  postRpc,
  RESOURCE,
  SCOPE,
  startAuthService,
} from "../helpers/auth_service.ts";
import { startTestIdp } from "../helpers/test_idp.ts";

const METADATA_URL = "https://waymark.test/.well-known/oauth-protected-resource/mcp";

async function withService(fn: (service: AuthService) => Promise<string[]>): Promise<void> {
  const service = await startAuthService();
  let secrets: string[] = [];
  try {
    secrets = await fn(service);
  } finally {
    const { stderr } = await service.stop();
    for (const secret of secrets) {
      assert.ok(!stderr.includes(secret), "no token (nor any part of one) is ever logged");
      assert.ok(!stderr.includes(secret.slice(-20)));
    }
  }
}

/**
 * The cases, in this order on one service (one server process, not four; sharing it is not what
 * they test): the hostile-token case reads the first token listed, so it goes first; the walks
 * count every run, so they go last. Each returns the secrets the server's log must not hold.
 */
const CASES: [string, (service: AuthService) => Promise<string[]>][] = [
  [
    "hostile tokens are refused cleanly: nothing written, nothing secret logged",
    async (service) => {
      const { idp, url } = service;
      const other = await startTestIdp();
      const revoked = await service.pat("leaver");
      const listed = await runCli(["tokens", "list", "--json"], { home: service.home.home });
      const revokedId = JSON.parse(listed.out)[0].id;
      assert.equal(
        (await runCli(["tokens", "revoke", revokedId], { home: service.home.home })).code,
        0,
      );
      const unscoped = await runCli(["tokens", "create", "--name", "reader"], {
        home: service.home.home,
      });
      // a token that expired: made through the store's own port, an hour ago
      const { openStore, sqlPersonalTokens } = await import("../../store/mod.ts");
      const store = await openStore(service.home.dbUrl);
      const expired = await sqlPersonalTokens(store.db, {
        clock: { now: () => new Date(Date.now() - 7_200_000).toISOString() },
        random: { bytes: (n) => crypto.getRandomValues(new Uint8Array(n)) },
      }).create({
        name: "old",
        kind: "person",
        scopes: [SCOPE],
        expiresAt: new Date(Date.now() - 3_600_000).toISOString(),
      });
      await store.close();
      const good = await service.jwt();
      const cases: {
        name: string;
        headers?: Record<string, string>;
        query?: string;
        status: number;
        error: string;
        says?: RegExp;
      }[] = [
        { name: "no token", status: 401, error: "invalid_token" },
        {
          name: "not bearer",
          headers: { authorization: `Basic ${btoa("a:b")}` },
          status: 401,
          error: "invalid_token",
        },
        {
          name: "garbage",
          headers: { authorization: "Bearer not.a.jwt" },
          status: 401,
          error: "invalid_token",
        },
        {
          name: "expired",
          headers: {
            authorization: `Bearer ${await idp.sign({ aud: RESOURCE, scope: SCOPE }, {
              expiresIn: -600,
            })}`,
          },
          status: 401,
          error: "invalid_token",
          says: /expired/,
        },
        {
          name: "not yet valid",
          headers: {
            authorization: `Bearer ${await idp.sign({ aud: RESOURCE, scope: SCOPE }, {
              notBeforeIn: 600,
            })}`,
          },
          status: 401,
          error: "invalid_token",
          says: /nbf/,
        },
        {
          name: "forged signature",
          headers: { authorization: `Bearer ${await idp.forge({ aud: RESOURCE, scope: SCOPE })}` },
          status: 401,
          error: "invalid_token",
          says: /signature/,
        },
        {
          name: "another issuer's key",
          headers: { authorization: `Bearer ${await other.sign({ aud: RESOURCE, scope: SCOPE })}` },
          status: 401,
          error: "invalid_token",
        },
        {
          name: "another issuer",
          headers: { authorization: `Bearer ${await service.jwt({ iss: other.issuer })}` },
          status: 401,
          error: "invalid_token",
          says: /another issuer/,
        },
        {
          name: "wrong audience",
          headers: {
            authorization: `Bearer ${await service.jwt({ aud: "https://elsewhere.test/mcp" })}`,
          },
          status: 401,
          error: "invalid_token",
          says: /audience/,
        },
        {
          name: "missing scope",
          headers: { authorization: `Bearer ${await service.jwt({ scope: "openid profile" })}` },
          status: 403,
          error: "insufficient_scope",
        },
        {
          name: "alg none",
          headers: { authorization: `Bearer ${idp.unsigned({ aud: RESOURCE, scope: SCOPE })}` },
          status: 401,
          error: "invalid_token",
        },
        {
          name: "HS256 keyed by the public key",
          headers: {
            authorization: `Bearer ${await idp.hmacWithPublicKey({ aud: RESOURCE, scope: SCOPE })}`,
          },
          status: 401,
          error: "invalid_token",
          says: /algorithm/,
        },
        {
          name: "revoked personal token",
          headers: { authorization: `Bearer ${revoked}` },
          status: 401,
          error: "invalid_token",
          says: /revoked/,
        },
        {
          name: "expired personal token",
          headers: { authorization: `Bearer ${expired.token}` },
          status: 401,
          error: "invalid_token",
          says: /expired/,
        },
        {
          name: "personal token without the scope",
          headers: { authorization: `Bearer ${unscoped.out.trim()}` },
          status: 403,
          error: "insufficient_scope",
        },
        {
          name: "made-up personal token",
          headers: { authorization: `Bearer wmp_000000000000_${"A".repeat(43)}` },
          status: 401,
          error: "invalid_token",
        },
        {
          name: "token in the query string",
          query: `access_token=${good}`,
          status: 400,
          error: "invalid_request",
          says: /query string/,
        },
      ];
      const secrets = [good, revoked, expired.token, unscoped.out.trim()];
      await withTestDb(service.home.dbUrl, async (db) => {
        const before = await db.snapshot();
        for (const c of cases) {
          const target = new URL(url);
          if (c.query) target.search = c.query;
          const answer = await postRpc(target, c.headers);
          assert.equal(answer.status, c.status, c.name);
          assert.equal(answer.body.error, c.error, c.name);
          if (c.says) assert.match(String(answer.body.error_description), c.says, c.name);
          if (c.status !== 400) {
            assert.ok(answer.headers.get("www-authenticate")?.includes(METADATA_URL), c.name);
          }
          for (const header of Object.values(c.headers ?? {})) secrets.push(header.slice(7));
        }
        assert.deepEqual(await db.snapshot(), before, "no refused request wrote anything");
      });
      // the good token works on the same server, so the refusals above were the tokens'
      const accepted = await postRpc(url, { authorization: `Bearer ${good}` }, INITIALIZE);
      assert.equal(accepted.status, 200);
      await other.close();
      return secrets.filter((s) => s.length > 20);
    },
  ],
  [
    "the protected resource metadata names the issuer and scopes; no token is a 401 pointing at it",
    async ({ url, idp }) => {
      for (
        const path of [
          "/.well-known/oauth-protected-resource/mcp",
          "/.well-known/oauth-protected-resource",
        ]
      ) {
        const response = await fetch(new URL(path, url));
        assert.equal(response.status, 200, path);
        assert.deepEqual(await response.json(), {
          resource: RESOURCE,
          authorization_servers: [idp.issuer],
          scopes_supported: [SCOPE],
          bearer_methods_supported: ["header"],
          resource_name: "waymark",
        });
      }
      const refused = await postRpc(url);
      assert.equal(refused.status, 401);
      const challenge = refused.headers.get("www-authenticate") ?? "";
      assert.match(challenge, /^Bearer /);
      assert.ok(challenge.includes(`resource_metadata="${METADATA_URL}"`), challenge);
      assert.ok(challenge.includes(`scope="${SCOPE}"`), challenge);
      assert.equal(refused.body.error, "invalid_token");
      return [];
    },
  ],
  [
    "a bearer JWT (v2 client) and a personal access token (v1 client) each walk a workflow",
    async (service) => {
      const jwt = await service.jwt({ sub: "alice" });
      const pat = await service.pat("ci-runner", ["--bot"]);
      const steps: string[][] = [];
      for (const [token, version] of [[jwt, "v2"], [pat, "v1"]] as const) {
        const client = await connectWithToken(service.url, token, version);
        try {
          const walk = await walkWorkflow(client, "waymark.code_review", { variant: 0 });
          assert.equal(walk.last.isComplete, true);
          steps.push(walk.steps);
          const found = ok(await client.call("resume_session", { query: "Scripted walk" }));
          assert.ok(found.candidates.length >= 1);
        } finally {
          await client.close();
        }
      }
      assert.deepEqual(steps[0], steps[1], "both principals walked the same workflow");
      await withTestDb(service.home.dbUrl, async (db) => {
        assert.equal(await db.number("SELECT count(*) FROM runs"), 2);
      });
      return [jwt, pat];
    },
  ],
  ["an MCP session answers only the principal who opened it", async (service) => {
    const alice = await service.jwt({ sub: "alice" });
    const bob = await service.pat("bob");
    const opened = await postRpc(service.url, { authorization: `Bearer ${alice}` }, INITIALIZE);
    assert.equal(opened.status, 200);
    const sessionId = opened.headers.get("mcp-session-id");
    assert.ok(sessionId);
    const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
    const as = (token: string) => ({
      authorization: `Bearer ${token}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    });
    const stolen = await postRpc(service.url, as(bob), ping);
    assert.equal(stolen.status, 404, "another principal is told the session does not exist");
    assert.match(String((stolen.body.error as { message: string }).message), /Unknown/);
    const own = await postRpc(service.url, as(alice), ping);
    assert.equal(own.status, 200);
    return [alice, bob];
  }],
];

Deno.test("serve --http as a resource server: hostile tokens, metadata, sessions and walks", async (t) => {
  await withService(async (service) => {
    const secrets: string[] = [];
    for (const [name, run] of CASES) {
      await t.step(name, async () => void secrets.push(...await run(service)));
    }
    return secrets;
  });
});
