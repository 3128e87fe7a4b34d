/**
 * One stack per agent: two DeepWork server processes on one database and one project (two
 * chats in one repository) each keep their own stack, on the same job and on different jobs,
 * with their calls interleaved; each agent's outputs land in its own run only. A server killed
 * and restarted takes its stack back without a session id while the other agent carries on; with
 * two stacks left by dead servers, a fresh one names both and takes the one it is told. And
 * nested workflows each have their own session id, which targets exactly that workflow.
 * The job files are written here, for these tests.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { connectRich, err, ok, type RichClient, tempHome } from "../helpers/server.ts";
import { writeIn } from "../helpers/deepwork.ts";

const ARGS = ["--profile", "deepwork", "--no-quality-gate"];

const LEDGER = `name: ledger
summary: Keep a ledger
workflows:
  - name: entry
    summary: Record one entry, then close it
    steps: [record, close]
steps:
  - id: record
    name: Record
    description: Write the entry
    instructions_file: steps/record.md
    outputs:
      entry.md: {type: file, description: The entry, required: true}
  - id: close
    name: Close
    description: Close the entry
    instructions_file: steps/close.md
    outputs:
      closing: {type: file, description: The closing line, required: true}
`;

const AUDIT = `name: audit
summary: Audit something
step_arguments:
  - name: verdict
    description: What the audit found
    type: string
workflows:
  check:
    summary: One check
    steps:
      - name: look
        instructions: Look at it and say what you found.
        outputs:
          verdict: {required: true}
`;

async function project(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-dw-agents-" }));
  await writeIn(dir, ".deepwork/jobs/ledger/job.yml", LEDGER);
  await writeIn(dir, ".deepwork/jobs/ledger/steps/record.md", "Write the ledger entry.\n");
  await writeIn(dir, ".deepwork/jobs/ledger/steps/close.md", "Write the closing line.\n");
  await writeIn(dir, ".deepwork/jobs/audit/job.yml", AUDIT);
  return { dir, cleanup: () => Deno.remove(dir, { recursive: true }).catch(() => {}) };
}

async function rows(db: string, sql: string) {
  const client = createClient({ url: `file:${db}` });
  try {
    return (await client.execute(sql)).rows;
  } finally {
    client.close();
  }
}

/** Each run's recorded file outputs, by goal: `goal: step=path,…`. */
async function outputsByGoal(db: string): Promise<Record<string, string[]>> {
  const found = await rows(
    db,
    `SELECT r.goal, o.step_id, o.artifacts FROM outputs o JOIN runs r USING (run_id)
     ORDER BY o.created_seq`,
  );
  const out: Record<string, string[]> = {};
  for (const r of found) {
    const [artifact] = JSON.parse(String(r.artifacts)) as { files?: { path: string }[] }[];
    for (const f of artifact?.files ?? []) {
      (out[String(r.goal)] ??= []).push(`${r.step_id}=${f.path}`);
    }
  }
  return out;
}

// deno-lint-ignore no-explicit-any
const stackOf = (answer: Record<string, any>): string[] =>
  (answer.stack as { workflow: string; step: string }[]).map((s) => `${s.workflow}@${s.step}`);

/** `count` DeepWork servers (processes) on one fresh home and project; all closed after `body`. */
async function withAgents(
  count: number,
  body: (agents: RichClient[], at: { ws: string; db: string; home: string }) => Promise<void>,
): Promise<void> {
  const home = await tempHome();
  const ws = await project();
  const agents: RichClient[] = [];
  try {
    for (let i = 0; i < count; i++) {
      agents.push(await connectRich(home.home, { cwd: ws.dir, extraArgs: ARGS }));
    }
    await body(agents, { ws: ws.dir, db: home.dbFile, home: home.home });
  } finally {
    for (const agent of agents) await agent.close().catch(() => {});
    await ws.cleanup();
    await home.cleanup();
  }
}

function withTwo(
  body: (a: RichClient, b: RichClient, at: { ws: string; db: string; home: string }) => Promise<
    void
  >,
): Promise<void> {
  return withAgents(2, ([a, b], at) => body(a!, b!, at));
}

Deno.test("two agents, one job: interleaved calls each advance their own run with their own outputs", async () => {
  await withTwo(async (a, b, { ws, db }) => {
    const startA = ok(
      await a.call("start_workflow", { goal: "A", job_name: "ledger", workflow_name: "entry" }),
    );
    const startB = ok(
      await b.call("start_workflow", { goal: "B", job_name: "ledger", workflow_name: "entry" }),
    );
    assert.deepEqual(stackOf(startB), ["ledger/entry@record"], "B's run is not nested on A's");
    assert.notEqual(startA.begin_step.session_id, startB.begin_step.session_id);
    await writeIn(ws, "a.md", "entry of A\n");
    await writeIn(ws, "b.md", "entry of B\n");
    await writeIn(ws, "a_close.md", "A closed\n");
    await writeIn(ws, "b_close.md", "B closed\n");
    const a1 = ok(await a.call("finished_step", { outputs: { "entry.md": "a.md" } }));
    assert.equal(a1.begin_step.step_id, "close");
    const b1 = ok(await b.call("finished_step", { outputs: { "entry.md": "b.md" } }));
    assert.equal(b1.begin_step.step_id, "close", "B's own run, still at record, advances");
    assert.equal(b1.stack[0].run_id, startB.stack[0].run_id);
    const a2 = ok(await a.call("finished_step", { outputs: { closing: "a_close.md" } }));
    assert.equal(a2.status, "workflow_complete");
    assert.deepEqual(a2.all_outputs, { "entry.md": "a.md", closing: "a_close.md" });
    const b2 = ok(await b.call("finished_step", { outputs: { closing: "b_close.md" } }));
    assert.equal(b2.status, "workflow_complete");
    assert.deepEqual(b2.all_outputs, { "entry.md": "b.md", closing: "b_close.md" });
    assert.deepEqual(await outputsByGoal(db), {
      A: ["record=a.md", "close=a_close.md"],
      B: ["record=b.md", "close=b_close.md"],
    });
  });
});

Deno.test("two agents, different jobs: neither's finished_step, go_to_step or abort reaches the other's run", async () => {
  await withTwo(async (a, b, { ws, db }) => {
    ok(await a.call("start_workflow", { goal: "A", job_name: "ledger", workflow_name: "entry" }));
    ok(await b.call("start_workflow", { goal: "B", job_name: "audit", workflow_name: "check" }));
    await writeIn(ws, "a.md", "entry\n");
    const a1 = ok(await a.call("finished_step", { outputs: { "entry.md": "a.md" } }));
    assert.deepEqual(stackOf(a1), ["ledger/entry@close"]);
    const back = ok(await a.call("go_to_step", { step_id: "record" }));
    assert.deepEqual(stackOf(back), ["ledger/entry@record"]);
    const b1 = ok(await b.call("finished_step", { outputs: { verdict: "fine" } }));
    assert.equal(b1.status, "workflow_complete");
    assert.deepEqual(b1.all_outputs, { verdict: "fine" });
    // B has nothing running now; its abort must not reach A's workflow
    const none = err(await b.call("abort_workflow", { explanation: "B is done" }));
    assert.equal(none.code, "NO_ACTIVE_WORKFLOW");
    const a2 = ok(await a.call("finished_step", { outputs: { "entry.md": "a.md" } }));
    assert.deepEqual(stackOf(a2), ["ledger/entry@close"]);
    const status = await rows(db, "SELECT goal, status FROM runs ORDER BY goal");
    assert.deepEqual(status.map((r) => [r.goal, r.status]), [["A", "running"], ["B", "complete"]]);
  });
});

Deno.test("a server killed and restarted takes its own stack back without a session id; the other agent's stays its own", async () => {
  await withTwo(async (a, b, { ws, db, home }) => {
    ok(await a.call("start_workflow", { goal: "A", job_name: "ledger", workflow_name: "entry" }));
    ok(await b.call("start_workflow", { goal: "B", job_name: "ledger", workflow_name: "entry" }));
    Deno.kill(a.pid!, "SIGKILL");
    await a.close().catch(() => {});
    const again = await connectRich(home, { cwd: ws, extraArgs: ARGS });
    try {
      await writeIn(ws, "a.md", "A after restart\n");
      await writeIn(ws, "b.md", "B\n");
      // B is live and has its own stack: it never takes A's over
      const b1 = ok(await b.call("finished_step", { outputs: { "entry.md": "b.md" } }));
      assert.deepEqual(stackOf(b1), ["ledger/entry@close"]);
      const a1 = ok(await again.call("finished_step", { outputs: { "entry.md": "a.md" } }));
      assert.deepEqual(stackOf(a1), ["ledger/entry@close"]);
      assert.deepEqual(await outputsByGoal(db), { B: ["record=b.md"], A: ["record=a.md"] });
      const claimed = await rows(
        db,
        "SELECT count(*) AS n FROM events WHERE kind = 'stack_claimed'",
      );
      assert.equal(Number(claimed[0]!.n), 1, "the stack passed to the restarted server once");
    } finally {
      await again.close();
    }
  });
});

Deno.test("two stacks left by dead servers: a fresh one names both and takes the one session_id picks", async () => {
  await withTwo(async (a, b, { ws, home }) => {
    const sa = ok(
      await a.call("start_workflow", { goal: "A", job_name: "ledger", workflow_name: "entry" }),
    );
    ok(await b.call("start_workflow", { goal: "B", job_name: "audit", workflow_name: "check" }));
    for (const c of [a, b]) {
      Deno.kill(c.pid!, "SIGKILL");
      await c.close().catch(() => {});
    }
    const fresh = await connectRich(home, { cwd: ws, extraArgs: ARGS });
    try {
      const ambiguous = err(await fresh.call("finished_step", { outputs: { verdict: "x" } }));
      assert.equal(ambiguous.code, "NO_ACTIVE_WORKFLOW");
      assert.equal(ambiguous.retry.kind, "not_retryable");
      const details = ambiguous.details as {
        reason: string;
        candidates: { session_id: string; job: string; workflow: string; step: string }[];
      };
      assert.equal(details.reason, "several_orphaned_stacks");
      assert.deepEqual(
        details.candidates.map((c) => `${c.job}/${c.workflow}@${c.step}`).sort(),
        ["audit/check@look", "ledger/entry@record"],
      );
      assert.match(ambiguous.message, /session_id/);
      await writeIn(ws, "a.md", "A\n");
      const picked = ok(
        await fresh.call("finished_step", {
          outputs: { "entry.md": "a.md" },
          session_id: sa.begin_step.session_id,
        }),
      );
      assert.deepEqual(stackOf(picked), ["ledger/entry@close"]);
      // taken over: later calls without session_id act on it
      const back = ok(await fresh.call("go_to_step", { step_id: "record" }));
      assert.deepEqual(stackOf(back), ["ledger/entry@record"]);
    } finally {
      await fresh.close();
    }
  });
});

Deno.test("nested workflows have their own session ids; session_id targets exactly that workflow", async () => {
  // one agent: a second server that makes no call proves nothing here
  await withAgents(1, async (agents, { ws }) => {
    const a = agents[0]!;
    const outer = ok(
      await a.call("start_workflow", { goal: "outer", job_name: "ledger", workflow_name: "entry" }),
    );
    const inner = ok(
      await a.call("start_workflow", { goal: "inner", job_name: "audit", workflow_name: "check" }),
    );
    assert.notEqual(inner.begin_step.session_id, outer.begin_step.session_id);
    assert.deepEqual(stackOf(inner), ["ledger/entry@record", "audit/check@look"]);
    await writeIn(ws, "e.md", "entry\n");
    const parent = ok(
      await a.call("finished_step", {
        outputs: { "entry.md": "e.md" },
        session_id: outer.begin_step.session_id,
      }),
    );
    assert.equal(parent.begin_step.step_id, "close");
    assert.equal(parent.begin_step.session_id, outer.begin_step.session_id);
    assert.deepEqual(stackOf(parent), ["ledger/entry@close", "audit/check@look"]);
    const child = ok(
      await a.call("finished_step", {
        outputs: { verdict: "ok" },
        session_id: inner.begin_step.session_id,
      }),
    );
    assert.equal(child.status, "workflow_complete");
    assert.deepEqual(stackOf(child), ["ledger/entry@close"]);
  });
});
