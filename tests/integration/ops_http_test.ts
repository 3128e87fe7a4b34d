/**
 * Operating the team service (`web/ops.ts`): `/healthz` and `/readyz` answer without a token and
 * say nothing but `ok` / `ready`; `/metrics` is refused without one (and shows nothing) and, with
 * one, is Prometheus text counting requests, tool calls by error code, open runs and the
 * database pool. On PostgreSQL, `/readyz` says 503 with `Retry-After` while the database is down
 * and 200 once it is back, and a personal token that cannot be checked meanwhile gets 503 with
 * `Retry-After` and no detail (it was a bare 500); and SIGTERM under load stops the replica within its grace, every
 * request answered whole or refused (never a broken answer), nothing half written.
 * @module
 */
import assert from "node:assert/strict";
import { postRpc, startAuthService } from "../helpers/auth_service.ts";
import { startPostgres } from "../helpers/postgres.ts";
import { startReplicas } from "../helpers/replicas.ts";
import { chaosLog, checkInvariants, walker } from "../helpers/chaos.ts";
import { runCli } from "../helpers/maintenance.ts";
import { RECORD_TTL_MS } from "../../web/auth/personal.ts";

const pathOf = (url: URL, path: string) => new URL(path, url);

Deno.test("healthz and readyz need no token and say nothing; metrics need one", async () => {
  const service = await startAuthService(["--stateless"]);
  try {
    for (const [path, text] of [["/healthz", "ok\n"], ["/readyz", "ready\n"]]) {
      const response = await fetch(pathOf(service.url, path));
      assert.equal(response.status, 200);
      assert.equal(await response.text(), text, `${path} tells an outsider nothing more`);
      assert.equal(response.headers.get("server"), null);
    }
    const refused = await fetch(pathOf(service.url, "/metrics"));
    assert.equal(refused.status, 401);
    assert.doesNotMatch(await refused.text(), /waymark_/);
    const token = await service.pat("ops");
    const auth = { authorization: `Bearer ${token}` };
    const started = await postRpc(service.url, auth);
    assert.equal(started.status, 200);
    await postRpc(service.url, auth, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "continue_workflow", arguments: { stateToken: "st1_forged" } },
    });
    const response = await fetch(pathOf(service.url, "/metrics"), { headers: auth });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    assert.match(text, /waymark_http_requests_total\{route="\/mcp",status="200"\} \d+/);
    assert.match(text, /waymark_http_requests_total\{route="\/metrics",status="401"\} 1/);
    assert.match(text, /waymark_tool_calls_total\{tool="start_workflow",code="ok"\} 1/);
    assert.match(
      text,
      /waymark_tool_calls_total\{tool="continue_workflow",code="TOKEN_[A-Z_]+"\} 1/,
    );
    assert.match(text, /waymark_tool_call_duration_seconds_count\{tool="start_workflow"\} 1/);
    assert.match(text, /waymark_open_runs 1/);
    assert.doesNotMatch(text, /waymark_db_pool_connections\{/, "a libSQL file has no pool");
    assert.doesNotMatch(text, /wmp_/, "no token in the metrics");
    // a revoked token is refused on every request once its kept row is a second old
    const listed = await runCli(["tokens", "list", "--json"], { home: service.home.home });
    const id = JSON.parse(listed.out)[0].id;
    assert.equal((await runCli(["tokens", "revoke", id], { home: service.home.home })).code, 0);
    await new Promise((r) => setTimeout(r, RECORD_TTL_MS + 200));
    const revoked = await fetch(pathOf(service.url, "/metrics"), { headers: auth });
    assert.equal(revoked.status, 401);
    assert.match(await revoked.text(), /revoked/);
  } finally {
    await service.stop();
  }
});

Deno.test({
  name: "on PostgreSQL: readyz follows the database; SIGTERM under load loses nothing",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const pg = await startPostgres();
  const replicas = await startReplicas(pg, { count: 1, workflow: { id: "project.ops", steps: 6 } });
  const url = replicas.replicaUrl(0);
  try {
    const token = await replicas.pat("ops");
    const metrics = await fetch(pathOf(url, "/metrics"), {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.match(await metrics.text(), /waymark_db_pool_connections\{state="max"\} \d+/);
    await pg.down();
    const down = await fetch(pathOf(url, "/readyz"));
    assert.equal(down.status, 503);
    assert.equal(down.headers.get("retry-after"), "1");
    assert.equal(await down.text(), "not ready\n");
    // the personal token cannot be checked (its kept row gone stale): 503 and when to retry,
    // not a bare 500, no detail
    await new Promise((r) => setTimeout(r, RECORD_TTL_MS + 200));
    const refused = await postRpc(url, { authorization: `Bearer ${token}` });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.equal(refused.body.error, "temporarily_unavailable");
    assert.doesNotMatch(JSON.stringify(refused.body), /PGSQL|\/tmp|ECONN|ENOENT/);
    await pg.up();
    const up = await fetch(pathOf(url, "/readyz"));
    assert.equal(up.status, 200, "ready again, without a restart");
    await up.body?.cancel();

    // SIGTERM while eight agents walk: it stops in bounded time, cleanly; nothing half written
    const log = chaosLog();
    let stop = false;
    const walks = Array.from(
      { length: 8 },
      (_, agent) =>
        walker({ url, token, log, agent }, { workflowId: "project.ops", until: () => stop }),
    );
    while (log.answered.length < 20) await new Promise((r) => setTimeout(r, 50));
    const stopped = await replicas.terminate(0);
    assert.ok(stopped.success, "exits cleanly on SIGTERM");
    assert.ok(stopped.ms < 12_000, `stopped within its grace (${stopped.ms | 0} ms)`);
    stop = true;
    await replicas.restart(0);
    await Promise.all(walks);
    assert.deepEqual(
      log.violations.filter((v) => !/still refused/.test(v)),
      [],
      "every call answered whole or refused in a way that says to retry",
    );
    assert.deepEqual(await checkInvariants(replicas.dbUrl, log), []);
  } finally {
    await replicas.stop();
    await pg.stop();
  }
});
