/**
 * Chaos for the team service: agents walk workflows through two `--stateless` replicas behind
 * the round-robin proxy while PostgreSQL is stopped and started (and once killed with SIGKILL)
 * and a replica is killed and started again. The agents speak raw JSON-RPC over HTTP so that
 * every refusal is seen as it came (its status, its `Retry-After`, its error code), and each
 * request has a deadline. What must hold is then read from the database (`checkInvariants`).
 * Used by the short test (`tests/integration/chaos_test.ts`) and the soak
 * (`tests/bench/chaos_soak.ts`).
 * @module
 */
// @ts-types="npm:@types/pg@8.23.1"
import pg from "pg";
import type { OwnedPostgresServer } from "./postgres.ts";
import type { ReplicaSet } from "./replicas.ts";
import { placeOf } from "./answers.ts";
import { toolCallInit } from "./tool_call_request.ts";
import { runLabel } from "../../engine/model/ids.ts";

/** A request not answered within this long is hung (a violation). */
export const DEADLINE_MS = 20_000;
/** A call still refused after this long is given up (a violation: the outages are shorter). */
const GIVE_UP_MS = 30_000;

/** One acknowledgement that got an answer: what was sent, what came back. */
export interface Answered {
  args: Record<string, unknown>;
  /** Whose token sent it (a replay must come from the run's owner). */
  token: string;
  /** The answer's structured content, as its text arrived. */
  text: string;
  /** The run and the node the answer leads to. */
  runId: string;
  nodeId: string;
}

/** What the agents saw. */
export interface ChaosLog {
  answered: Answered[];
  /** Runs the agents started (by run label). */
  runs: Set<string>;
  /** Why tries were sent again, by kind (`503`, `502`, `STORAGE_UNREACHABLE`, `network`…). */
  retried: Map<string, number>;
  /** What must never happen: a bare 500, an INTERNAL_ERROR, a hung request, a 503 without Retry-After. */
  violations: string[];
}

/** A new, empty log. */
export function chaosLog(): ChaosLog {
  return { answered: [], runs: new Set(), retried: new Map(), violations: [] };
}

function note(log: ChaosLog, why: string): void {
  log.retried.set(why, (log.retried.get(why) ?? 0) + 1);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Calls a tool until it answers: refusals that say to retry are retried (after what they say),
 * anything that must never happen is noted in `log.violations` (and retried too, so the walk
 * goes on). Returns the answer's structured content and its text, or `null` when the call was
 * refused for longer than any outage lasts (noted as a violation).
 */
export async function callUntilAnswered(
  at: { url: URL; token: string; log: ChaosLog },
  call: { name: string; args: Record<string, unknown> },
): Promise<{ answer: Record<string, unknown>; text: string } | null> {
  const { log } = at;
  const started = performance.now();
  let last = "";
  for (let attempt = 0;; attempt++) {
    if (performance.now() - started > GIVE_UP_MS) {
      log.violations.push(`${call.name}: still refused after ${GIVE_UP_MS} ms (${last})`);
      return null;
    }
    const t0 = performance.now();
    let response: Response;
    let body: string;
    try {
      response = await fetch(at.url, {
        ...toolCallInit({ token: at.token, id: attempt + 1 }, call.name, call.args),
        signal: AbortSignal.timeout(DEADLINE_MS),
      });
      body = await response.text();
    } catch (error) {
      if ((error as Error).name === "TimeoutError") {
        log.violations.push(`${call.name}: no answer within ${DEADLINE_MS} ms`);
      } else note(log, "network");
      last = "network";
      await pause(100);
      continue;
    }
    const waited = performance.now() - t0;
    const refusal = refusalOf(response, body, waited);
    if (refusal.violation) log.violations.push(`${call.name}: ${refusal.violation}`);
    if (refusal.answer) return { answer: refusal.answer, text: refusal.text! };
    if (refusal.final) return null;
    note(log, refusal.why!);
    last = refusal.why!;
    await pause(Math.min(refusal.afterMs ?? 100, 1_000) * (0.5 + Math.random()));
  }
}

/** What one HTTP answer was: an answer, or a refusal (to retry) and whether it was allowed. */
function refusalOf(response: Response, body: string, waited: number): {
  answer?: Record<string, unknown>;
  text?: string;
  why?: string;
  afterMs?: number;
  violation?: string;
  /** Sending it again cannot help (`not_retryable`). */
  final?: boolean;
} {
  if (response.status === 503) {
    const after = Number(response.headers.get("retry-after"));
    if (!(after >= 0)) return { why: "503", violation: "503 without Retry-After" };
    return { why: "503", afterMs: after * 1000 };
  }
  if (response.status === 502) return { why: "502" }; // the proxy: a replica went away
  if (response.status !== 200) {
    return {
      why: String(response.status),
      violation: `HTTP ${response.status}: ${body.slice(0, 200)}`,
    };
  }
  const message = JSON.parse(body) as {
    result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
    error?: { code: number; message: string };
  };
  if (message.error || !message.result?.structuredContent) {
    return {
      why: "jsonrpc",
      violation: `JSON-RPC error after ${waited | 0} ms: ${body.slice(0, 200)}`,
    };
  }
  const content = message.result.structuredContent;
  if (!message.result.isError) return { answer: content, text: JSON.stringify(content) };
  const error = content.error as { code: string; retry: { kind: string; afterMs?: number } };
  if (error.code === "INTERNAL_ERROR" || error.retry.kind === "not_retryable") {
    return {
      why: error.code,
      violation: `${error.code} (${error.retry.kind}): ${body.slice(0, 300)}`,
    };
  }
  return { why: error.code, afterMs: error.retry.afterMs ?? 0 };
}

/** One agent: walks runs of `workflowId` to their end until `until()` says stop. */
export async function walker(
  at: { url: URL; token: string; log: ChaosLog; agent: number },
  run: { workflowId: string; until: () => boolean },
): Promise<void> {
  while (!run.until()) {
    const started = await callUntilAnswered(at, {
      name: "start_workflow",
      args: { workflowId: run.workflowId },
    });
    if (!started) continue;
    let tip = started.answer;
    at.log.runs.add(placeOf(tip as { stateToken: string }).runId);
    while (!tip.isComplete && !run.until()) {
      const pending = tip.pending as { stepId: string };
      const args = {
        stateToken: tip.stateToken,
        ackToken: tip.ackToken,
        output: { notesMarkdown: `agent ${at.agent} did ${pending.stepId}` },
      };
      const answered = await callUntilAnswered(at, { name: "continue_workflow", args });
      if (!answered) break; // the run is abandoned; what it recorded is still checked
      const { answer, text } = answered;
      at.log.answered.push({
        args,
        token: at.token,
        text,
        ...placeOf(answer as { stateToken: string }),
      });
      tip = answer;
    }
  }
}

/** One disturbance. */
export type Disturbance =
  | { kind: "pg_stop"; downMs: number }
  | { kind: "pg_kill"; downMs: number }
  | { kind: "replica_kill"; replica: number; downMs: number };

/** Runs `plan` in order, `gapMs` of load between disturbances; returns what it did. */
export async function disturb(
  at: { pg: OwnedPostgresServer; replicas: ReplicaSet; gapMs: number },
  plan: readonly Disturbance[],
): Promise<string[]> {
  const done: string[] = [];
  for (const d of plan) {
    await pause(at.gapMs);
    if (d.kind === "replica_kill") {
      await at.replicas.kill(d.replica);
      await pause(d.downMs);
      await at.replicas.restart(d.replica);
    } else {
      await (d.kind === "pg_kill" ? at.pg.crash() : at.pg.down());
      await pause(d.downMs);
      await at.pg.up();
    }
    done.push(d.kind);
  }
  await pause(at.gapMs);
  return done;
}

/** What the database says against what the agents saw; every string is a broken invariant. */
export async function checkInvariants(dbUrl: string, log: ChaosLog): Promise<string[]> {
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  const broken: string[] = [];
  try {
    // every answered acknowledgement is recorded exactly once, with the answer it got
    const attempts = await db.query(
      `SELECT run_id, result_node_id, attempt_id, response FROM attempts
       WHERE attempt_kind = 'ack'`,
    );
    const byNode = new Map<string, { response: string; n: number }>();
    for (const row of attempts.rows) {
      const key = `${runLabel(row.run_id)}/${row.result_node_id}`;
      const seen = byNode.get(key);
      byNode.set(key, { response: row.response, n: (seen?.n ?? 0) + 1 });
    }
    for (const a of log.answered) {
      const recorded = byNode.get(`${a.runId}/${a.nodeId}`);
      if (!recorded) broken.push(`answered ack ${a.runId}/${a.nodeId} is not recorded`);
      else if (recorded.n !== 1) broken.push(`ack ${a.runId}/${a.nodeId} recorded ${recorded.n}×`);
    }
    // every token is redeemed at most once
    const tokens = await db.query(
      `SELECT run_id, attempt_id, count(*)::int AS n FROM attempts GROUP BY 1, 2 HAVING count(*) > 1`,
    );
    for (const row of tokens.rows) broken.push(`token ${row.attempt_id} redeemed ${row.n}×`);
    const events = await db.query(
      `SELECT payload::json->>'attemptId' AS id, count(*)::int AS n FROM events
       WHERE kind = 'advance_recorded' GROUP BY 1 HAVING count(*) > 1`,
    );
    for (const row of events.rows) broken.push(`advance ${row.id} in the log ${row.n}×`);
    broken.push(...await runShapes(db));
  } finally {
    await db.end();
  }
  return broken;
}

/** Runs with a gap, a duplicated step or a fork (the agents never rewind, so none may fork). */
async function runShapes(db: pg.Client): Promise<string[]> {
  const broken: string[] = [];
  const nodes = await db.query(
    `SELECT run_id, node_id, parent_id, depth, pending_step_id FROM nodes
     ORDER BY run_id, depth`,
  );
  const runs = new Map<
    string,
    { node_id: string; parent_id: string | null; depth: number; pending_step_id: string | null }[]
  >();
  for (const row of nodes.rows) {
    const list = runs.get(row.run_id) ?? [];
    list.push(row);
    runs.set(row.run_id, list);
  }
  for (const [run, list] of runs) {
    const steps = list.map((n) => n.pending_step_id).filter((s) => s !== null);
    if (new Set(steps).size !== steps.length) broken.push(`run ${run}: a step twice (${steps})`);
    for (let i = 0; i < list.length; i++) {
      const n = list[i]!;
      if (n.depth !== i) broken.push(`run ${run}: a gap at depth ${i}`);
      if (i > 0 && n.parent_id !== list[i - 1]!.node_id) broken.push(`run ${run}: a fork at ${i}`);
      const expected = `s${String(i + 1).padStart(2, "0")}`;
      if (n.pending_step_id !== null && n.pending_step_id !== expected) {
        broken.push(`run ${run}: depth ${i} pends ${n.pending_step_id}, not ${expected}`);
      }
    }
  }
  return broken;
}

/** Replays every answered acknowledgement: each must answer byte for byte what it first said. */
export async function replayAll(at: { url: URL; log: ChaosLog }): Promise<string[]> {
  const broken: string[] = [];
  const replayLog = chaosLog();
  for (const a of at.log.answered) {
    const again = await callUntilAnswered({ url: at.url, token: a.token, log: replayLog }, {
      name: "continue_workflow",
      args: a.args,
    });
    if (again && again.text !== a.text) broken.push(`replay of ${a.runId}/${a.nodeId} differs`);
  }
  return [...broken, ...replayLog.violations];
}
