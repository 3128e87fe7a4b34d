/**
 * Durable delegation over MCP: a parallel step opens one child run per delegation that applies;
 * three subagents in three server processes drive them at once; the parent step is blocked
 * while any is open; the last child to end settles the parent exactly once; the synthesis step
 * sees all three; every call replays byte for byte. The tests where subagents race are served
 * by processes; the ones with one agent are served in-process (`tests/helpers/in_process.ts`).
 * @module
 */
import assert from "node:assert/strict";
import { openTestDb } from "../helpers/db.ts";
import {
  abandonChild,
  CHILD_ID,
  delegationWorkspace,
  driveChild,
  PARENT_ID,
  reachParallel,
} from "../helpers/delegation.ts";
import { connect, err, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

/** Server processes, for the tests where subagents in several processes race. */
const PROCESS = { process: true };

function hex(label: string): string {
  return label.replace(/^[a-z]+_/, "");
}

async function setup() {
  const { home, dbUrl, cleanup } = await tempHome();
  const ws = await delegationWorkspace();
  const clients: TestClient[] = [];
  /**
   * A client: of a server process when processes race (`process`), else in-process (the
   * same server, flags and store, with one agent there is nothing between processes to show).
   */
  const open = async (options: { process?: boolean } = {}) => {
    const c = await connect(home, { extraArgs: ws.args, ...options });
    clients.push(c);
    return c;
  };
  return {
    home,
    dbUrl,
    workspace: ws.workspace,
    open,
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await cleanup();
      await ws.cleanup();
    },
  };
}

Deno.test("three subagents drive three child runs at once; the parent waits, then synthesizes all three", async () => {
  const t = await setup();
  try {
    const parent = await t.open(PROCESS);
    const atParallel = await reachParallel(parent);
    assert.equal(atParallel.pending.stepId, "reviews");
    const children = atParallel.delegations;
    assert.equal(children.length, 3, "the UI delegation's condition does not hold");
    assert.deepEqual(children.map((c: { goal: string }) => c.goal), [
      "Review the api",
      "Review the storage",
      "Review the docs",
    ]);
    for (const c of children) {
      assert.equal(c.status, "open");
      assert.equal(c.workflowId, CHILD_ID);
      assert.match(c.delegationToken, /^dlg1_/);
      assert.ok(c.instruction.includes(c.delegationToken));
    }
    // Early acknowledgement: blocked, naming the open children with their tips.
    const early = ok(
      await parent.call("continue_workflow", {
        stateToken: atParallel.stateToken,
        ackToken: atParallel.ackToken,
      }),
    );
    assert.equal(early.kind, "blocked");
    assert.equal(early.blockers[0].code, "DELEGATIONS_OPEN");
    assert.equal(early.delegations.filter((c: { tip?: unknown }) => c.tip).length, 3);

    // Three subagents, three processes, at once.
    const subagents = await Promise.all([t.open(PROCESS), t.open(PROCESS), t.open(PROCESS)]);
    const runs = await Promise.all(
      children.map((c: { delegationToken: string }, i: number) =>
        driveChild(subagents[i]!, c.delegationToken, (step) => `child ${i} ${step}: all good`)
      ),
    );
    for (const [i, answers] of runs.entries()) {
      assert.equal(answers[0]!.pending.stepId, "read");
      assert.match(answers[0]!.pending.prompt, new RegExp(`Read ${["api", "storage", "docs"][i]}`));
      assert.match(answers[0]!.pending.prompt, /billing/, "the parent's context is mapped in");
      assert.equal(answers[0]!.delegatedFrom.parentStepId, "reviews");
      assert.equal(answers.at(-1)!.delegatedFrom.index, i);
    }
    const settledBy = runs.filter((a) => a.at(-1)!.delegatedFrom.settled === true);
    assert.equal(settledBy.length, 1, "exactly one child settles the parent");
    const db = await openTestDb(t.dbUrl);
    try {
      assert.equal(
        await db.number("SELECT count(*) FROM node_events WHERE kind = 'delegations_settled'"),
        1,
      );
    } finally {
      await db.close();
    }

    // The parent goes on (with the blocked answer's fresh ack token) to the synthesis step.
    const synthesis = ok(
      await parent.call("continue_workflow", {
        stateToken: early.stateToken,
        ackToken: early.ackToken,
      }),
    );
    assert.equal(synthesis.kind, "ok");
    assert.equal(synthesis.pending.stepId, "reviews-synthesis");
    for (let i = 0; i < 3; i++) {
      assert.ok(synthesis.pending.prompt.includes(`child ${i} report: all good`));
    }
    assert.match(synthesis.pending.prompt, /Merge the three reviews/);
    // A rehydrate shows the same text; a replay returns the same bytes.
    const again = ok(await parent.call("continue_workflow", { stateToken: synthesis.stateToken }));
    assert.equal(again.pending.prompt, synthesis.pending.prompt);
    const replay = ok(
      await parent.call("continue_workflow", {
        stateToken: early.stateToken,
        ackToken: early.ackToken,
      }),
    );
    assert.equal(JSON.stringify(replay), JSON.stringify(synthesis));
    // Every child call replays the same answer.
    for (const answers of runs) {
      for (let k = 1; k < answers.length; k++) {
        const before = answers[k - 1]!;
        const replayed = ok(
          await subagents[0]!.call("continue_workflow", {
            stateToken: before.stateToken,
            ackToken: before.ackToken,
            output: { notesMarkdown: "different notes" },
          }),
        );
        assert.equal(JSON.stringify(replayed), JSON.stringify(answers[k]));
      }
    }
  } finally {
    await t.close();
  }
});

Deno.test("one agent can do every child itself (serial fallback), and an abandoned child ends with its reason", async () => {
  const t = await setup();
  try {
    const agent = await t.open();
    const atParallel = await reachParallel(agent);
    const [first, second, third] = atParallel.delegations;
    await driveChild(agent, first.delegationToken, (s) => `first ${s}`);
    // The second is driven through the tip tokens of a blocked answer, as a host without subagents would.
    const blocked = ok(
      await agent.call("continue_workflow", {
        stateToken: atParallel.stateToken,
        ackToken: atParallel.ackToken,
      }),
    );
    assert.equal(blocked.kind, "blocked");
    assert.deepEqual(
      blocked.delegations.map((c: { status: string }) => c.status),
      ["complete", "open", "open"],
    );
    const tip = blocked.delegations[1].tip;
    let at = ok(await agent.call("continue_workflow", { stateToken: tip.stateToken }));
    while (!at.isComplete) {
      at = ok(
        await agent.call("continue_workflow", {
          stateToken: at.stateToken,
          ackToken: at.ackToken,
          output: { notesMarkdown: `second ${at.pending.stepId}` },
        }),
      );
    }
    assert.equal(at.delegatedFrom.settled, false);
    // The third is abandoned with a reason: that settles the parent.
    const aborted = await abandonChild(
      agent,
      third.delegationToken,
      "The docs are out of scope for this change.",
    );
    assert.equal(aborted.status, "aborted");
    const synthesis = ok(
      await agent.call("continue_workflow", {
        stateToken: blocked.stateToken,
        ackToken: blocked.ackToken,
      }),
    );
    assert.equal(synthesis.pending.stepId, "reviews-synthesis");
    assert.match(synthesis.pending.prompt, /first report/);
    assert.match(synthesis.pending.prompt, /second report/);
    assert.match(synthesis.pending.prompt, /Aborted: The docs are out of scope/);
    assert.equal(second.status, "open");
  } finally {
    await t.close();
  }
});

Deno.test("a fork inside one child leaves its siblings and the parent as they were", async () => {
  const t = await setup();
  try {
    const agent = await t.open();
    const atParallel = await reachParallel(agent);
    const [a, b] = atParallel.delegations;
    const aRun = await driveChild(agent, a.delegationToken, (s) => `a ${s}`);
    const bRun = await driveChild(agent, b.delegationToken, (s) => `b ${s}`);
    const db = await openTestDb(t.dbUrl);
    try {
      const before = await db.number(
        "SELECT count(*) FROM nodes WHERE run_id IN (?, ?)",
        [hex(placeOf(atParallel).runId), hex(placeOf(bRun[0]!).runId)],
      );
      // The same tokens replay; a fresh ack token at child a's first step forks a only.
      const replay = ok(
        await agent.call("continue_workflow", {
          stateToken: aRun[0]!.stateToken,
          ackToken: aRun[0]!.ackToken,
        }),
      );
      assert.equal(JSON.stringify(replay), JSON.stringify(aRun[1]));
      const fresh = ok(await agent.call("continue_workflow", { stateToken: aRun[0]!.stateToken }));
      const forked = ok(
        await agent.call("continue_workflow", {
          stateToken: fresh.stateToken,
          ackToken: fresh.ackToken,
          output: { notesMarkdown: "a read again, differently" },
        }),
      );
      assert.ok(forked.forked, "the child's advance started a new branch");
      assert.equal(placeOf(forked).runId, placeOf(aRun[0]!).runId);
      const after = await db.number(
        "SELECT count(*) FROM nodes WHERE run_id IN (?, ?)",
        [hex(placeOf(atParallel).runId), hex(placeOf(bRun[0]!).runId)],
      );
      assert.equal(after, before, "the parent and the sibling gained no node");
    } finally {
      await db.close();
    }
  } finally {
    await t.close();
  }
});

Deno.test("a delegation token is refused when mangled, swapped or given with other arguments", async () => {
  const t = await setup();
  try {
    const agent = await t.open();
    const atParallel = await reachParallel(agent);
    const token: string = atParallel.delegations[0].delegationToken;
    const mangled = token.slice(0, -2) + (token.at(-2) === "A" ? "B" : "A") + token.at(-1);
    assert.equal(
      err(await agent.call("start_workflow", { delegationToken: mangled })).code,
      "TOKEN_INVALID",
    );
    assert.equal(
      err(await agent.call("start_workflow", { delegationToken: atParallel.stateToken })).code,
      "TOKEN_INVALID",
    );
    assert.equal(
      err(
        await agent.call("start_workflow", { delegationToken: token, workflowId: CHILD_ID }),
      ).code,
      "INVALID_ARGUMENTS",
    );
    assert.equal(err(await agent.call("start_workflow", {})).code, "INVALID_ARGUMENTS");
  } finally {
    await t.close();
  }
});

Deno.test("children ending at the same moment in three processes settle their parent exactly once", async () => {
  const t = await setup();
  try {
    const agent = await t.open(PROCESS);
    const subagents = await Promise.all([t.open(PROCESS), t.open(PROCESS), t.open(PROCESS)]);
    const rounds = 4;
    for (let round = 0; round < rounds; round++) {
      const atParallel = await reachParallel(agent);
      // Each child to its last step, then the three last acknowledgements at once.
      const lasts = [];
      for (const child of atParallel.delegations) {
        const first = ok(
          await agent.call("start_workflow", { delegationToken: child.delegationToken }),
        );
        lasts.push(ok(
          await agent.call("continue_workflow", {
            stateToken: first.stateToken,
            ackToken: first.ackToken,
            output: { notesMarkdown: "read" },
          }),
        ));
      }
      const ends = await Promise.all(lasts.map((at, i) =>
        subagents[i]!.call("continue_workflow", {
          stateToken: at.stateToken,
          ackToken: at.ackToken,
          output: { notesMarkdown: `report ${i}` },
        })
      ));
      const settled = ends.map((e) => ok(e).delegatedFrom.settled);
      assert.equal(settled.filter(Boolean).length, 1, `round ${round}: ${settled}`);
    }
    const db = await openTestDb(t.dbUrl);
    try {
      assert.equal(
        await db.number("SELECT count(*) FROM node_events WHERE kind = 'delegations_settled'"),
        rounds,
      );
    } finally {
      await db.close();
    }
  } finally {
    await t.close();
  }
});

Deno.test("a delegation whose workflow no directory provides opens no child, warns, and leaves the work to the agent", async () => {
  const t = await setup();
  try {
    const agent = await t.open();
    await Deno.remove(`${t.workspace}/.waymark/workflows/review_part.json`);
    const atParallel = await reachParallel(agent);
    assert.equal(atParallel.pending.stepId, "reviews");
    assert.equal(atParallel.delegations, undefined);
    assert.ok(
      atParallel.warnings.some((w: { code: string }) => w.code === "DELEGATION_UNAVAILABLE"),
    );
    const synthesis = ok(
      await agent.call("continue_workflow", {
        stateToken: atParallel.stateToken,
        ackToken: atParallel.ackToken,
      }),
    );
    assert.equal(synthesis.kind, "ok", "nothing to wait for");
    assert.match(synthesis.pending.prompt, /No child run was opened/);
  } finally {
    await t.close();
  }
});

Deno.test("taking up a child and rehydrating it write nothing; the answer that opened the children replays byte for byte", async () => {
  const t = await setup();
  try {
    const agent = await t.open();
    const started = ok(await agent.call("start_workflow", { workflowId: PARENT_ID }));
    const ack = {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      context: { area: "billing", hasUi: true },
      output: { notesMarkdown: "Area: billing, with a UI." },
    };
    const atParallel = ok(await agent.call("continue_workflow", ack));
    assert.equal(atParallel.delegations.length, 4, "the UI delegation's condition holds now");
    assert.equal(
      JSON.stringify(ok(await agent.call("continue_workflow", ack))),
      JSON.stringify(atParallel),
    );
    const db = await openTestDb(t.dbUrl);
    try {
      const before = await db.snapshot();
      const taken = ok(
        await agent.call("start_workflow", {
          delegationToken: atParallel.delegations[3].delegationToken,
        }),
      );
      assert.match(taken.pending.prompt, /Read ui/);
      ok(await agent.call("continue_workflow", { stateToken: taken.stateToken }));
      ok(await agent.call("continue_workflow", { stateToken: atParallel.stateToken }));
      const after = await db.snapshot();
      assert.deepEqual(after.counts, before.counts);
      assert.equal(after.dump, before.dump, "nothing was written");
    } finally {
      await db.close();
    }
  } finally {
    await t.close();
  }
});

Deno.test("a child whose first step is a parallel step opens its own children at once", async () => {
  const t = await setup();
  try {
    const dir = `${t.workspace}/.waymark/workflows`;
    const wf = (id: string, steps: unknown[]) =>
      JSON.stringify({ id, name: id, description: "d", version: "1", steps });
    await Deno.writeTextFile(
      `${dir}/middle.json`,
      wf("project.middle", [{
        id: "inner",
        type: "parallel",
        title: "Inner fan-out",
        parallelDelegations: [{ workflowId: "project.review_part", args: { part: "core" } }],
      }]),
    );
    await Deno.writeTextFile(
      `${dir}/outer.json`,
      wf("project.outer", [{
        id: "outer",
        type: "parallel",
        title: "Outer fan-out",
        parallelDelegations: [{ workflowId: "project.middle", goal: "Middle" }],
      }]),
    );
    const agent = await t.open();
    const outer = ok(await agent.call("start_workflow", { workflowId: "project.outer" }));
    assert.equal(outer.delegations.length, 1);
    const middle = ok(
      await agent.call("start_workflow", { delegationToken: outer.delegations[0].delegationToken }),
    );
    assert.equal(middle.pending.stepId, "inner");
    assert.equal(middle.delegations.length, 1, "the middle run's own child was opened with it");
    const grandchild = await driveChild(
      agent,
      middle.delegations[0].delegationToken,
      (s) => `core ${s}`,
    );
    assert.equal(grandchild.at(-1)!.delegatedFrom.settled, true);
    let at = ok(
      await agent.call("continue_workflow", {
        stateToken: middle.stateToken,
        ackToken: middle.ackToken,
      }),
    );
    assert.equal(at.pending.stepId, "inner-synthesis");
    assert.match(at.pending.prompt, /core report/);
    at = ok(
      await agent.call("continue_workflow", {
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        output: { notesMarkdown: "Middle merged the core review." },
      }),
    );
    assert.equal(at.isComplete, true);
    assert.equal(at.delegatedFrom.settled, true, "the middle run's end settles the outer step");
    const done = ok(
      await agent.call("continue_workflow", {
        stateToken: outer.stateToken,
        ackToken: outer.ackToken,
      }),
    );
    assert.match(done.pending.prompt, /Middle merged the core review/);
  } finally {
    await t.close();
  }
});

Deno.test("checkpoints at a parallel step keep its children in view, and its acknowledgement waits for them", async () => {
  const t = await setup();
  try {
    const agent = await t.open();
    let at = await reachParallel(agent);
    for (const n of [1, 2, 3]) {
      at = ok(
        await agent.call("checkpoint_workflow", {
          stateToken: at.stateToken,
          checkpointToken: at.checkpointToken,
          output: { notesMarkdown: `Waiting on the children (${n}).` },
        }),
      );
      assert.equal(at.delegations.length, 3, "a checkpoint lists the step's children");
    }
    const blocked = ok(
      await agent.call("continue_workflow", { stateToken: at.stateToken, ackToken: at.ackToken }),
    );
    assert.equal(blocked.kind, "blocked");
    assert.equal(blocked.blockers[0].code, "DELEGATIONS_OPEN");
    assert.equal(blocked.delegations.length, 3);
  } finally {
    await t.close();
  }
});
