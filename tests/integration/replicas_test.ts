/**
 * The team service as three replicas on one PostgreSQL behind a plain round-robin proxy
 * (`tests/helpers/replicas.ts`), authenticated with personal access tokens: twenty agents walk
 * workflows while one replica is killed (SIGKILL) and started again. Every acknowledged step is
 * in the log exactly once, every replay answers identically on whichever replica it lands,
 * every event names its principal, and a principal who does not own a run is refused on it.
 * @module
 */
import assert from "node:assert/strict";
// @ts-types="npm:@types/pg@8.23.1"
import pg from "pg";
import { err, ok } from "../helpers/server.ts";
import { type ReplicaClient, replicaClient, startReplicas } from "../helpers/replicas.ts";
import { type PostgresServer, sharedPostgres } from "../helpers/postgres.ts";
import { placeOf } from "../helpers/answers.ts";

const WORKFLOW = { id: "project.replica_walk", steps: 8 };
const AGENTS = 20;
const PEOPLE = ["alice", "bob", "carol", "dave"];

/** One acknowledged step: what was sent and what came back. */
interface Acked {
  agent: number;
  args: Record<string, unknown>;
  answer: Record<string, unknown>;
  text: string;
}

/** Walks one run to its end, acknowledging each step; returns the acknowledged steps. */
async function walk(client: ReplicaClient, agent: number): Promise<Acked[]> {
  const acked: Acked[] = [];
  let response = ok(await client.call("start_workflow", { workflowId: WORKFLOW.id }));
  while (!response.isComplete) {
    const args = {
      stateToken: response.stateToken,
      ackToken: response.ackToken,
      output: { notesMarkdown: `agent ${agent} did ${response.pending.stepId}` },
    };
    const result = await client.call("continue_workflow", args);
    response = ok(result);
    acked.push({ agent, args, answer: response, text: result.content[0]!.text });
  }
  return acked;
}

Deno.test({
  name: "three replicas behind round robin: a replica killed mid-walk loses nothing",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  // the run's server (nothing here stops or kills PostgreSQL): a database of this test's own
  const server = await sharedPostgres();
  const replicas = await startReplicas(server, { count: 3, workflow: WORKFLOW });
  const db = new pg.Client({ connectionString: replicas.dbUrl });
  const clients: ReplicaClient[] = [];
  try {
    const tokens = await Promise.all(PEOPLE.map((name) => replicas.pat(name)));
    for (let i = 0; i < AGENTS; i++) {
      clients.push(replicaClient(replicas.url, tokens[i % PEOPLE.length]!));
    }
    // the walks run while replica 1 is killed and, a moment later, started again
    const walks = Promise.all(clients.map((c, i) => walk(c, i)));
    const chaos = (async () => {
      while (replicas.proxy.sent[1]! < 40) await new Promise((r) => setTimeout(r, 50));
      await replicas.kill(1);
      await new Promise((r) => setTimeout(r, 1_000));
      await replicas.restart(1);
    })();
    const [walked] = await Promise.all([walks, chaos]);
    const acked = walked.flat();
    assert.equal(acked.length, AGENTS * WORKFLOW.steps, "every agent finished its walk");
    const retried = clients.reduce((n, c) => n + c.retries, 0);
    console.error(
      `replicas: ${acked.length} steps acknowledged, ${retried} calls sent again, requests per replica ${
        replicas.proxy.sent.join("/")
      }`,
    );

    await db.connect();
    // every acknowledged step is recorded exactly once: one attempt, one advance event
    const attempts = await db.query(
      `SELECT payload::json->>'attemptId' AS attempt_id, count(*)::int AS n FROM events
       WHERE kind = 'advance_recorded' GROUP BY 1`,
    );
    const recorded = new Map(attempts.rows.map((r) => [r.attempt_id as string, r.n as number]));
    assert.equal(recorded.size, acked.length, "one advance per acknowledged step, no more");
    assert.ok([...recorded.values()].every((n) => n === 1), "no advance recorded twice");

    // every replay answers byte for byte what the step's first answer said, on any replica
    for (const step of acked.filter((_, i) => i % 4 === 0)) {
      const again = await clients[step.agent]!.call("continue_workflow", step.args);
      assert.equal(again.content[0]!.text, step.text);
      assert.deepEqual(ok(again), step.answer);
    }

    // every event the agents wrote names the principal whose token wrote it
    const events = await db.query(`SELECT payload FROM events`);
    const principals = new Set<string>();
    for (const { payload } of events.rows) {
      const principal = JSON.parse(payload).principal;
      assert.ok(principal, `an event without its principal: ${payload.slice(0, 120)}`);
      principals.add(principal.displayName);
    }
    assert.deepEqual([...principals].sort(), PEOPLE);
  } finally {
    await db.end().catch(() => {});
    await Promise.all(clients.map((c) => c.close()));
    await replicas.stop();
  }
});

/** Starts a run as `owner` and walks its first step; the run's tip tokens. */
async function firstStep(client: ReplicaClient): Promise<Record<string, unknown>> {
  const started = ok(await client.call("start_workflow", { workflowId: WORKFLOW.id }));
  return ok(
    await client.call("continue_workflow", {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      output: { notesMarkdown: "first step, by its owner" },
    }),
  );
}

Deno.test({
  name:
    "team policy over MCP: another member reads a run but may not act on it, unless the run's access is team",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const server = await sharedPostgres();
  const clients: ReplicaClient[] = [];
  for (const access of ["owner", "team"]) await policyCase(server, { access, clients });
});

/** One access setting's case of the policy test. */
async function policyCase(
  server: PostgresServer,
  at: { access: string; clients: ReplicaClient[] },
): Promise<void> {
  const { access, clients } = at;
  const replicas = await startReplicas(server, {
    count: 2,
    workflow: WORKFLOW,
    args: access === "team" ? ["--run-access", "team"] : [],
  });
  const count = async () => {
    const client = new pg.Client({ connectionString: replicas.dbUrl });
    await client.connect();
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM events`);
    await client.end();
    return rows[0].n as number;
  };
  try {
    const [alice, bob] = await Promise.all(
      ["alice", "bob"].map(async (name) => replicaClient(replicas.url, await replicas.pat(name))),
    );
    clients.push(alice!, bob!);
    const tip = await firstStep(alice!);
    // reading is every member's: bob rehydrates alice's run and finds it in resume_session
    const read = ok(await bob!.call("continue_workflow", { stateToken: tip.stateToken }));
    assert.equal(read.pending.stepId, (tip.pending as { stepId: string }).stepId);
    const found = ok(await bob!.call("resume_session", {}));
    const candidate = found.candidates.find((c: { runId: string }) =>
      c.runId === placeOf(tip as { stateToken: string }).runId
    );
    assert.equal(candidate.startedBy.displayName, "alice");
    assert.equal(candidate.tip.madeBy.displayName, "alice", "who acknowledged the last step");
    assert.equal(candidate.access, access);
    assert.equal(candidate.mayContinue, access === "team");
    const before = await count();
    const acked = await bob!.call("continue_workflow", {
      stateToken: read.stateToken,
      ackToken: read.ackToken,
      output: { notesMarkdown: "bob tries to carry alice's run on" },
    });
    if (access === "owner") {
      const refused = err(acked);
      assert.equal(refused.code, "RUN_NOT_YOURS");
      assert.equal(refused.retry.kind, "not_retryable");
      assert.equal((refused.details!.owner as { displayName: string }).displayName, "alice");
      assert.match(refused.message, /alice/);
      assert.equal(await count(), before, "nothing written");
      // alice's own token still acts on it
      ok(
        await alice!.call("continue_workflow", {
          stateToken: read.stateToken,
          ackToken: read.ackToken,
          output: { notesMarkdown: "alice carries on" },
        }),
      );
    } else {
      ok(acked);
      const client = new pg.Client({ connectionString: replicas.dbUrl });
      await client.connect();
      const { rows } = await client.query(
        `SELECT payload FROM events WHERE kind = 'advance_recorded' ORDER BY seq`,
      );
      await client.end();
      const by = rows.map((r) => JSON.parse(r.payload).principal.displayName);
      assert.deepEqual(by, ["alice", "bob"], "each step names who acknowledged it");
    }
  } finally {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await replicas.stop();
  }
}
