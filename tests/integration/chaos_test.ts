/**
 * Nothing lost when PostgreSQL goes away (short form; the soak is `deno task bench:chaos`):
 * sixteen agents walk workflows through two `--stateless` replicas behind the round-robin
 * proxy while PostgreSQL is stopped and started twice, killed with SIGKILL once, and a replica
 * is killed and started again (`tests/helpers/chaos.ts`). Then, from the database: every
 * acknowledgement that got an answer is recorded exactly once, no run has a gap, a duplicated
 * step or a fork, no token is redeemed twice; every replay answers byte for byte what the first
 * answer said; during the outages the agents were only told to retry (HTTP 503 with
 * `Retry-After`, the proxy's 502 for a killed replica, or a `retryable_*` error), never a bare
 * 500 or `INTERNAL_ERROR`, and no request hung past its deadline; and both replicas serve
 * again without a restart.
 * @module
 */
import assert from "node:assert/strict";
import { startPostgres } from "../helpers/postgres.ts";
import { startReplicas } from "../helpers/replicas.ts";
import {
  callUntilAnswered,
  chaosLog,
  checkInvariants,
  disturb,
  type Disturbance,
  replayAll,
  walker,
} from "../helpers/chaos.ts";

const WORKFLOW = { id: "project.chaos_walk", steps: 6 };
const AGENTS = 16;
const PLAN: Disturbance[] = [
  { kind: "pg_stop", downMs: 1_000 },
  { kind: "replica_kill", replica: 1, downMs: 500 },
  { kind: "pg_kill", downMs: 800 },
  { kind: "pg_stop", downMs: 1_500 },
];
/**
 * Load between disturbances (and after the last). The agents walk as fast as the replicas
 * answer, so this is most of the file's CPU. 1.5 s has every agent back at work before the
 * next disturbance (a refused call is sent again at most 1.5 s after a `Retry-After: 1`, the
 * longest pause `callUntilAnswered` takes); 2 s made about twice the calls, and their replays,
 * for no more coverage. The soak (`deno task bench:chaos`) runs longer gaps.
 */
const GAP_MS = 1_500;

Deno.test({
  name: "chaos: PostgreSQL stopped, killed and restarted, a replica killed: nothing lost",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const pg = await startPostgres();
  const replicas = await startReplicas(pg, { count: 2, workflow: WORKFLOW });
  const log = chaosLog();
  try {
    const tokens = await Promise.all(["ann", "ben", "cat", "dan"].map((n) => replicas.pat(n)));
    let stop = false;
    const walks = Array.from({ length: AGENTS }, (_, agent) =>
      walker(
        { url: replicas.url, token: tokens[agent % tokens.length]!, log, agent },
        { workflowId: WORKFLOW.id, until: () => stop },
      ));
    const done = await disturb({ pg, replicas, gapMs: GAP_MS }, PLAN);
    stop = true;
    await Promise.all(walks);
    console.error(
      `chaos: ${
        done.join(", ")
      }; ${log.answered.length} steps answered in ${log.runs.size} runs; ` +
        `retried ${JSON.stringify(Object.fromEntries(log.retried))}`,
    );
    assert.ok(log.answered.length > AGENTS, "the agents got somewhere");
    const seen = (log.retried.get("503") ?? 0) + (log.retried.get("STORAGE_UNREACHABLE") ?? 0);
    assert.ok(seen > 0, "the outages were seen, as 503s or STORAGE_UNREACHABLE");
    // both replicas serve again, unrestarted replica 0 included, within a few tries
    const served = chaosLog();
    for (let i = 0; i < replicas.count; i++) {
      const answered = await callUntilAnswered(
        { url: replicas.replicaUrl(i), token: tokens[0]!, log: served },
        { name: "list_workflows", args: {} },
      );
      assert.ok(answered, `replica ${i} serves again`);
    }
    assert.ok([...served.retried.values()].reduce((a, b) => a + b, 0) <= 3, "served at once");
    const broken = [
      ...log.violations,
      ...served.violations,
      ...await checkInvariants(replicas.dbUrl, log),
      ...await replayAll({ url: replicas.url, log }),
    ];
    assert.deepEqual(broken, [], "nothing lost, nothing but retry-saying refusals, none hung");
  } finally {
    await replicas.stop();
    await pg.stop();
  }
});
