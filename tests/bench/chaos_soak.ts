/**
 * The chaos test's soak (`tests/integration/chaos_test.ts` is its short form): sixteen agents
 * walk workflows through two `--stateless` replicas on one PostgreSQL for `--seconds` (bounded:
 * the disturbances stop then, the agents finish their current call), while PostgreSQL is
 * stopped and started, killed with SIGKILL, and a replica is killed, in turn, again and again.
 * Then the same invariants are read from the database. Prints what happened and what broke
 * (nothing, or it exits 1).
 *
 *   deno task bench:chaos [--seconds 120] [--agents 16] [--gap-ms 3000]
 * @module
 */
import { parseArgs } from "node:util";
import { startPostgres } from "../helpers/postgres.ts";
import { startReplicas } from "../helpers/replicas.ts";
import {
  chaosLog,
  checkInvariants,
  disturb,
  type Disturbance,
  replayAll,
  walker,
} from "../helpers/chaos.ts";

const WORKFLOW = { id: "project.chaos_soak", steps: 12 };
const CYCLE: Disturbance[] = [
  { kind: "pg_stop", downMs: 1_000 },
  { kind: "replica_kill", replica: 0, downMs: 700 },
  { kind: "pg_kill", downMs: 1_500 },
  { kind: "pg_stop", downMs: 3_000 },
  { kind: "replica_kill", replica: 1, downMs: 300 },
];

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      seconds: { type: "string", default: "120" },
      agents: { type: "string", default: "16" },
      "gap-ms": { type: "string", default: "3000" },
    },
  });
  const until = performance.now() + Number(values.seconds) * 1000;
  const pg = await startPostgres();
  const replicas = await startReplicas(pg, { count: 2, workflow: WORKFLOW });
  const log = chaosLog();
  let broken: string[] = [];
  try {
    const tokens = await Promise.all(["ann", "ben", "cat", "dan"].map((n) => replicas.pat(n)));
    let stop = false;
    const walks = Array.from({ length: Number(values.agents) }, (_, agent) =>
      walker(
        { url: replicas.url, token: tokens[agent % tokens.length]!, log, agent },
        { workflowId: WORKFLOW.id, until: () => stop },
      ));
    const done: string[] = [];
    for (let i = 0; performance.now() < until; i = (i + 1) % CYCLE.length) {
      done.push(...await disturb({ pg, replicas, gapMs: Number(values["gap-ms"]) }, [CYCLE[i]!]));
    }
    stop = true;
    await Promise.all(walks);
    broken = [
      ...log.violations,
      ...await checkInvariants(replicas.dbUrl, log),
      ...await replayAll({ url: replicas.url, log }),
    ];
    const count = (k: string) => done.filter((d) => d === k).length;
    console.log(
      `chaos soak: ${values.seconds} s, ${values.agents} agents; PostgreSQL stopped ${
        count("pg_stop")
      }×, killed ${count("pg_kill")}×; replicas killed ${
        count("replica_kill")
      }×; ${log.answered.length} steps answered in ${log.runs.size} runs; refusals retried ${
        JSON.stringify(Object.fromEntries(log.retried))
      }; broken invariants: ${broken.length}`,
    );
    for (const line of broken.slice(0, 20)) console.log(`  ${line}`);
  } finally {
    await replicas.stop();
    await pg.stop();
  }
  Deno.exit(broken.length === 0 ? 0 : 1);
}
