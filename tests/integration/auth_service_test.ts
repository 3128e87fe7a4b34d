/**
 * The authenticated service's edges: a JWKS that is slow or down refuses calls within a bounded
 * time (and the service recovers when it is back), found by discovery from the issuer's
 * metadata; listening off loopback is refused without authentication; a flood of
 * unauthenticated requests while an authenticated agent keeps walking; the viewer behind the
 * same authentication; and the `tokens` commands (shown once, stored as a hash).
 * @module
 */
import assert from "node:assert/strict";
import { ok, type TestClient } from "../helpers/server.ts";
import {
  connectWithToken,
  INITIALIZE,
  postRpc,
  startAuthService,
} from "../helpers/auth_service.ts";
import { tempHome } from "../helpers/server.ts";
import { startHttpServer } from "../helpers/http_server.ts";
import { runCli } from "../helpers/maintenance.ts";

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
    const bare = await runCli(["serve", "--http", "0", "--bind", "0.0.0.0"], { home: home.home });
    assert.equal(bare.code, 2);
    assert.match(bare.err, /refusing to listen on 0\.0\.0\.0 without authentication/);
    const half = await runCli([
      "serve",
      "--http",
      "0",
      "--bind",
      "0.0.0.0",
      "--auth-issuer",
      "https://idp.example",
    ], { home: home.home });
    assert.equal(half.code, 2);
    assert.match(half.err, /--auth-resource URL/);
    const nothing = await runCli([
      "serve",
      "--http",
      "0",
      "--auth-resource",
      "https://w.example/mcp",
    ], { home: home.home });
    assert.equal(nothing.code, 2);
    assert.match(nothing.err, /--auth-issuer URL .*and\/or --personal-tokens/);
    const badUrl = await runCli(["serve", "--http", "0", "--auth-issuer", "ftp://x"], {
      home: home.home,
    });
    assert.equal(badUrl.code, 2);
    assert.match(badUrl.err, /--auth-issuer must be an http:\/\/ or https:\/\/ URL/);
  } finally {
    await home.cleanup();
  }
});

/** Starts a run and advances it up to `n` times; each advance's latency in ms, sorted. */
async function advances(client: TestClient, n: number): Promise<number[]> {
  let response = ok(await client.call("start_workflow", { workflowId: "waymark.code_review" }));
  const latencies: number[] = [];
  while (!response.isComplete && latencies.length < n) {
    const started = performance.now();
    response = ok(
      await client.call("continue_workflow", {
        stateToken: response.stateToken,
        ackToken: response.ackToken,
        output: { notesMarkdown: `step ${latencies.length} done` },
      }),
    );
    latencies.push(performance.now() - started);
  }
  return latencies.sort((a, b) => a - b);
}

const median = (sorted: number[]) => sorted[sorted.length >> 1]!.toFixed(0);

Deno.test("a flood of unauthenticated requests is refused while an authenticated agent keeps walking", async () => {
  const service = await startAuthService();
  const token = await service.pat("steady");
  const client = await connectWithToken(service.url, token);
  try {
    const quiet = await advances(client, 8);
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
    const flooded = await advances(client, 8);
    flooding = false;
    await flood;
    assert.ok(flooded.length >= 3, "the authenticated agent advanced during the flood");
    assert.deepEqual([...statuses.keys()], [401], "every flood request was refused");
    console.error(
      `flood: ${statuses.get(401)} refused; authenticated advance p50 ${median(quiet)} ms ` +
        `alone, ${median(flooded)} ms under the flood (${flooded.length} advances each)`,
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
    const usage = await runCli(["tokens", "create"], { home: home.home });
    assert.equal(usage.code, 2, "--name is required");
    const made = await runCli([
      "tokens",
      "create",
      "--name",
      "nightly CI",
      "--bot",
      "--expires",
      "30d",
      "--auth-scope",
      "waymark",
    ], { home: home.home });
    assert.equal(made.code, 0, made.err);
    const token = made.out.trim();
    assert.match(token, /^wmp_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    assert.match(made.err, /shown this once/);
    const secret = token.slice(18);
    const bytes = new TextDecoder("latin1").decode(await Deno.readFile(home.dbFile));
    assert.ok(!bytes.includes(secret), "the database does not hold the token");
    const listed = JSON.parse(
      (await runCli(["tokens", "list", "--json"], { home: home.home })).out,
    );
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
    const revoked = await runCli(["tokens", "revoke", listed[0].id], { home: home.home });
    assert.equal(revoked.code, 0);
    const again = JSON.parse((await runCli(["tokens", "list", "--json"], { home: home.home })).out);
    assert.equal(again[0].state, "revoked");
    const unknown = await runCli(["tokens", "revoke", "feedfeedfeed"], { home: home.home });
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /no personal access token "feedfeedfeed"/);
    const badName = await runCli(["tokens", "create", "--name", "x\ny"], { home: home.home });
    assert.equal(badName.code, 2);
  } finally {
    await home.cleanup();
  }
});

Deno.test("config.json's auth section configures the service; its scopes are a new token's default", async () => {
  const home = await tempHome();
  const auth = { resource: "https://team.test/mcp", personalTokens: true, scopes: ["team"] };
  await Deno.writeTextFile(`${home.home}/config.json`, JSON.stringify({ auth }));
  const made = await runCli(["tokens", "create", "--name", "dev"], { home: home.home });
  assert.equal(made.code, 0, made.err);
  assert.match(made.err, /scopes team/);
  const server = await startHttpServer(home.home);
  try {
    const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
    const refused = await postRpc(url, {}, INITIALIZE);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get("www-authenticate") ?? "", /scope="team"/);
    const token = made.out.trim();
    assert.equal(
      (await postRpc(url, { authorization: `Bearer ${token}` }, INITIALIZE)).status,
      200,
    );
  } finally {
    await server.stop();
  }
  await Deno.writeTextFile(
    `${home.home}/config.json`,
    JSON.stringify({ auth: { ...auth, jwksTimeoutMs: "soon" } }),
  );
  const broken = await runCli(["serve", "--http", "0"], { home: home.home });
  assert.equal(broken.code, 1);
  assert.match(broken.err, /config\.json: auth\.jwksTimeoutMs: .*expected number/);
  await home.cleanup();
});

/** Runs openssl with `args` in `dir`. */
async function openssl(dir: string, args: string[]): Promise<void> {
  const made = await new Deno.Command("openssl", {
    args,
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(made.success, new TextDecoder().decode(made.stderr));
}

/** A test CA and a certificate it signed for localhost and 127.0.0.1, made by openssl in `dir`. */
async function testCertificate(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-days",
    "1",
    "-subj",
    "/CN=waymark test CA",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
  ]);
  await openssl(dir, [
    "req",
    ...ec,
    "-subj",
    "/CN=localhost",
    "-keyout",
    "key.pem",
    "-out",
    "leaf.csr",
  ]);
  await Deno.writeTextFile(
    `${dir}/leaf.ext`,
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
  );
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    "leaf.ext",
    "-out",
    "cert.pem",
  ]);
  return { ca: `${dir}/ca.pem`, cert: `${dir}/cert.pem`, key: `${dir}/key.pem` };
}

Deno.test("--tls-cert/--tls-key serve HTTPS, authenticated; one without the other is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-tls-" });
  const { ca, cert, key } = await testCertificate(dir);
  const service = await startAuthService(["--tls-cert", cert, "--tls-key", key]);
  const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(ca)] });
  try {
    const url = new URL(`https://localhost:${service.server.port}/mcp`);
    const refused = await fetch(url, { method: "POST", client });
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    const token = await service.pat("over-tls");
    const accepted = await fetch(url, {
      method: "POST",
      client,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(INITIALIZE),
    });
    assert.equal(accepted.status, 200);
    await accepted.body?.cancel();
    await assert.rejects(fetch(url), "plain clients that do not trust the certificate fail");
    const half = await runCli(["serve", "--http", "0", "--tls-cert", cert], {
      home: service.home.home,
    });
    assert.equal(half.code, 2);
    assert.match(half.err, /--tls-cert FILE and --tls-key FILE go together/);
  } finally {
    client.close();
    await service.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
