/**
 * The authenticated service's edges: a JWKS that is slow or down refuses calls within a bounded
 * time (and the service recovers when it is back), found by discovery from the issuer's
 * metadata; listening off loopback is refused without authentication; a flood of
 * unauthenticated requests while an authenticated agent keeps walking; the viewer behind the
 * same authentication; and the `tokens` commands (shown once, stored as a hash).
 * @module
 */
import assert from "node:assert/strict";
import { ok } from "../helpers/server.ts";
import {
  connectWithToken,
  INITIALIZE,
  postRpc,
  startAuthService,
  waymark,
} from "../helpers/auth_service.ts";
import { tempHome } from "../helpers/server.ts";

Deno.test("a slow or unreachable JWKS fails closed in bounded time; the service recovers", async () => {
  // no --auth-jwks-url: the JWKS is found from the issuer's metadata
  const service = await startAuthService(["--auth-jwks-timeout", "300"]);
  try {
    const token = await service.jwt();
    const auth = { authorization: `Bearer ${token}` };
    for (const mode of [{ kind: "slow", delayMs: 2000 }, { kind: "down" }] as const) {
      service.idp.setJwks(mode);
      const started = Date.now();
      const answer = await postRpc(service.url, auth, INITIALIZE);
      const ms = Date.now() - started;
      assert.equal(answer.status, 503, mode.kind);
      assert.equal(answer.body.error, "temporarily_unavailable");
      assert.equal(answer.headers.get("retry-after"), "5");
      assert.ok(ms < 1800, `${mode.kind}: refused after ${ms} ms, before the JWKS answered`);
    }
    service.idp.setJwks({ kind: "up" });
    assert.equal((await postRpc(service.url, auth, INITIALIZE)).status, 200, "recovers");
    assert.ok(service.idp.jwksRequests >= 3);
  } finally {
    const { stderr } = await service.stop();
    assert.match(stderr, /refusing bearer JWTs for now/);
  }
});

Deno.test("listening off loopback is refused without authentication; half a configuration too", async () => {
  const home = await tempHome();
  try {
    const bare = await waymark(home.home, ["serve", "--http", "0", "--bind", "0.0.0.0"]);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /refusing to listen on 0\.0\.0\.0 without authentication/);
    const half = await waymark(home.home, [
      "serve",
      "--http",
      "0",
      "--bind",
      "0.0.0.0",
      "--auth-issuer",
      "https://idp.example",
    ]);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /--auth-resource URL/);
    const nothing = await waymark(home.home, [
      "serve",
      "--http",
      "0",
      "--auth-resource",
      "https://w.example/mcp",
    ]);
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /--auth-issuer URL .*and\/or --personal-tokens/);
    const badUrl = await waymark(home.home, ["serve", "--http", "0", "--auth-issuer", "ftp://x"]);
    assert.equal(badUrl.code, 2);
    assert.match(badUrl.stderr, /--auth-issuer must be an http:\/\/ or https:\/\/ URL/);
  } finally {
    await home.cleanup();
  }
});

Deno.test("a flood of unauthenticated requests is refused while an authenticated agent keeps walking", async () => {
  const service = await startAuthService();
  const token = await service.pat("steady");
  const client = await connectWithToken(service.url, token);
  try {
    let flooding = true;
    const statuses = new Map<number, number>();
    const flood = (async () => {
      for (let round = 0; round < 40 && flooding; round++) {
        const answers = await Promise.all(
          Array.from({ length: 25 }, () => postRpc(service.url)),
        );
        for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      }
    })();
    let response = ok(await client.call("start_workflow", { workflowId: "wr.code_review" }));
    let steps = 0;
    const latencies: number[] = [];
    while (!response.isComplete && steps < 8) {
      const started = performance.now();
      response = ok(
        await client.call("continue_workflow", {
          stateToken: response.stateToken,
          ackToken: response.ackToken,
          output: { notesMarkdown: `step ${steps} done under the flood` },
        }),
      );
      latencies.push(performance.now() - started);
      steps++;
    }
    flooding = false;
    await flood;
    assert.ok(steps >= 3, "the authenticated agent advanced during the flood");
    assert.deepEqual([...statuses.keys()], [401], "every flood request was refused");
    latencies.sort((a, b) => a - b);
    console.error(
      `flood: ${statuses.get(401)} refused; authenticated advance p50 ${
        latencies[latencies.length >> 1]!.toFixed(0)
      } ms over ${steps} advances`,
    );
  } finally {
    await client.close();
    await service.stop();
  }
});

Deno.test("the viewer on the same listener sits behind the same authentication", async () => {
  const service = await startAuthService(["--viewer"]);
  try {
    const token = await service.pat("reader");
    const page = new URL("/", service.url);
    const refused = await fetch(page);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get("www-authenticate") ?? "", /resource_metadata=/);
    await refused.body?.cancel();
    const shown = await fetch(page, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(shown.status, 200);
    assert.match(await shown.text(), /<html/i);
    const written = await fetch(page, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(written.status, 405, "read-only, authenticated or not");
    await written.body?.cancel();
  } finally {
    await service.stop();
  }
});

Deno.test("tokens create shows a token once and keeps only its hash; list and revoke", async () => {
  const home = await tempHome();
  try {
    const usage = await waymark(home.home, ["tokens", "create"]);
    assert.equal(usage.code, 2, "--name is required");
    const made = await waymark(home.home, [
      "tokens",
      "create",
      "--name",
      "nightly CI",
      "--bot",
      "--expires",
      "30d",
      "--auth-scope",
      "waymark",
    ]);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();
    assert.match(token, /^wmp_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    assert.match(made.stderr, /shown this once/);
    const secret = token.slice(18);
    const bytes = new TextDecoder("latin1").decode(await Deno.readFile(home.dbFile));
    assert.ok(!bytes.includes(secret), "the database does not hold the token");
    const listed = JSON.parse((await waymark(home.home, ["tokens", "list", "--json"])).stdout);
    assert.equal(listed.length, 1);
    assert.deepEqual(
      {
        name: listed[0].name,
        kind: listed[0].kind,
        scopes: listed[0].scopes,
        state: listed[0].state,
      },
      { name: "nightly CI", kind: "bot", scopes: ["waymark"], state: "active" },
    );
    assert.ok(!JSON.stringify(listed).includes(secret));
    const days = (Date.parse(listed[0].expiresAt) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
    const revoked = await waymark(home.home, ["tokens", "revoke", listed[0].id]);
    assert.equal(revoked.code, 0);
    const again = JSON.parse((await waymark(home.home, ["tokens", "list", "--json"])).stdout);
    assert.equal(again[0].state, "revoked");
    const unknown = await waymark(home.home, ["tokens", "revoke", "feedfeedfeed"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no personal access token "feedfeedfeed"/);
    const badName = await waymark(home.home, ["tokens", "create", "--name", "x\ny"]);
    assert.equal(badName.code, 2);
  } finally {
    await home.cleanup();
  }
});
