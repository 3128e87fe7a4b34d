/**
 * What a run costs, through real Claude Code with the scripted model: the server Claude Code
 * starts reads the session's transcript (CLAUDE_CODE_SESSION_ID, under the host's own HOME), and
 * the usage the stand-in reported for each model call comes back on the step it was made in; a
 * token budget in the user's config makes each later answer carry a warning, never a refusal;
 * `"transcripts": false` records nothing; a parallel step's children, run by real subagents from
 * their delegation tokens, count theirs too.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openWaymark } from "../../mod.ts";
import { getStepFootprints, sumRunTokens } from "../../store/sql/viewer/mod.ts";
import { writeDelegationWorkflows } from "../helpers/delegation.ts";
import { hostTestOptions } from "../helpers/hosts.ts";
import {
  agentRequests,
  answered,
  conversations,
  firstUserText,
} from "../helpers/host_model_runs.ts";
import { type HostPlace, hostPlace, runClaude } from "../helpers/host_run.ts";
import { serveAnthropic } from "../helpers/model/anthropic_api.ts";
import type { Recorded } from "../helpers/model/recording_server.ts";
import { DONE } from "../helpers/model/diligent.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const THREE_STEPS = {
  id: "project.costed",
  name: "Costed",
  description: "Three steps, so each one's tokens can be told apart.",
  version: "1.0.0",
  steps: [
    { id: "look", title: "Look", prompt: "Look around." },
    { id: "change", title: "Change", prompt: "Make the change." },
    { id: "report", title: "Report", prompt: "Report what changed." },
  ],
};

/** The usage the stand-in reports for a request (`anthropic_api.ts`'s `message`). */
function reported(r: Recorded): { input: number; output: number } {
  return { input: Math.ceil(JSON.stringify(r.body).length / 4), output: 20 };
}

/** The step pending when a request was made: the last waymark answer it carries. */
function pendingAt(r: Recorded): string | null {
  const last = answered(r).at(-1);
  return last?.json?.pending?.stepId ?? null;
}

/**
 * The transcript wait these tests allow: on a loaded machine Claude Code's line can land after the
 * default 1.5 s, and a wait ends as soon as the line is there.
 */
const PATIENT = { transcriptWaitMs: 10_000 };

async function runCosted(place: HostPlace, config: Json) {
  const dir = join(place.workspace, ".waymark", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "costed.json"), JSON.stringify(THREE_STEPS));
  const patient = { ...config, cost: { ...PATIENT, ...config.cost } };
  await Deno.writeTextFile(join(place.waymarkHome, "config.json"), JSON.stringify(patient));
  const model = serveAnthropic();
  try {
    const out = await runClaude(place, {
      prompt: "Run the waymark workflow `project.costed` to completion.",
      modelUrl: model.url,
    });
    assert.equal(out.code, 0, `claude exited ${out.code}: ${out.stderr.slice(-800)}`);
    return model.requests;
  } finally {
    await model.close();
  }
}

async function footprints(home: string) {
  const wm = await openWaymark({ home });
  try {
    const run = await wm.store.db.selectFrom("runs").select(["run_id", "last_node_id"])
      .executeTakeFirstOrThrow();
    const steps = await getStepFootprints(wm.store.db, {
      runId: run.run_id,
      nodeId: run.last_node_id!,
    });
    return { steps, total: await sumRunTokens(wm.store.db, run.run_id) };
  } finally {
    await wm.close();
  }
}

Deno.test({
  name: "each step's tokens are the usage the model reported for the calls made in it",
  ...hostTestOptions("claude"),
  fn: async () => {
    const place = await hostPlace("claude-code");
    try {
      const requests = await runCosted(place, { cost: { tokenBudget: 1 } });
      const [conversation] = conversations(requests);
      assert.ok(conversation, "no request offered waymark's tools");
      const calls = answered(conversation);
      assert.equal(calls.at(-1)?.json?.isComplete, true, "the run completed");

      // every call of the conversation, grouped by the step pending when it was made
      const agent = requests.filter((r) =>
        (r.body.tools ?? []).some((t: Json) => /waymark/.test(t.name))
      );
      const expected = new Map<string, { input: number; output: number; calls: number }>();
      for (const r of agent) {
        const step = pendingAt(r);
        if (!step) continue;
        const u = reported(r);
        const sum = expected.get(step) ?? { input: 0, output: 0, calls: 0 };
        expected.set(step, {
          input: sum.input + u.input,
          output: sum.output + u.output,
          calls: sum.calls + 1,
        });
      }
      assert.deepEqual([...expected.keys()].sort(), ["change", "look", "report"]);

      const { steps, total } = await footprints(place.waymarkHome);
      const measured = steps.filter((s) => s.completedStepId !== null);
      assert.deepEqual(measured.map((s) => s.completedStepId), ["look", "change", "report"]);
      for (const s of measured) {
        const want = expected.get(s.completedStepId!)!;
        assert.ok(s.tokens, `${s.completedStepId}: no tokens (${s.tokensNotice})`);
        assert.equal(s.tokensNotice, null, "the transcript held every call in time");
        assert.deepEqual(
          {
            input: s.tokens.inputTokens,
            output: s.tokens.outputTokens,
            calls: s.tokens.calls,
          },
          want,
          `${s.completedStepId}: the tokens differ from the model's reported usage`,
        );
      }
      const sum = [...expected.values()].reduce((a, b) => a + b.input + b.output, 0);
      assert.equal(total!.total.inputTokens + total!.total.outputTokens, sum, "the run's total");

      // past the budget every acknowledgement's answer warns, and none is refused
      const acks = calls.filter((c) => /continue_workflow$/.test(c.tool));
      assert.equal(acks.length, 3);
      for (const a of acks) {
        assert.equal(a.json?.kind, "ok");
        assert.ok(
          (a.json?.warnings ?? []).some((w: Json) => w.code === "TOKEN_BUDGET_EXCEEDED"),
          `no budget warning in ${a.text.slice(0, 300)}`,
        );
      }
    } finally {
      await place.cleanup();
    }
  },
});

Deno.test({
  name: 'with "transcripts": false no transcript is read and no tokens are recorded',
  ...hostTestOptions("claude"),
  fn: async () => {
    const place = await hostPlace("claude-code");
    try {
      await runCosted(place, { cost: { transcripts: false } });
      const { steps, total } = await footprints(place.waymarkHome);
      assert.ok(steps.length >= 4);
      assert.ok(steps.every((s) => s.tokens === null && s.tokensNotice === null));
      assert.equal(total, null);
    } finally {
      await place.cleanup();
    }
  },
});

/**
 * A parallel step's children in subagents (what `claude_code_test.ts` proved on a session of its
 * own): one subagent per open child, each starting its child run from the `delegationToken` in its
 * prompt and finishing it, and the parent's synthesis step carrying the children's results.
 */
function assertDelegated(requests: Recorded[]): void {
  const subagents = conversations(requests).filter((r) =>
    /dlg1_/.test(firstUserText(r)) && !/project\.fanout/.test(firstUserText(r))
  );
  assert.equal(subagents.length, 3, "one subagent per open child");
  for (const sub of subagents) {
    const calls = answered(sub);
    assert.equal(calls[0]!.tool, "mcp__waymark__start_workflow");
    assert.match(String(calls[0]!.input.delegationToken), /^dlg1_/);
    assert.ok(firstUserText(sub).includes(calls[0]!.input.delegationToken));
    assert.equal(calls.at(-1)!.json?.isComplete, true, "the child run completed");
  }
  const main = conversations(requests).find((r) => /project\.fanout/.test(firstUserText(r)))!;
  const parent = answered(main);
  const synthesis = parent.find((c) => c.json?.pending?.stepId === "reviews-synthesis");
  assert.ok(synthesis, "the parent reached the synthesis step");
  assert.ok(
    (synthesis.json!.pending.prompt.match(/Review the (api|storage|docs)/g) ?? []).length >= 3,
    "the synthesis prompt carries the three children's results",
  );
  assert.equal(parent.at(-1)!.json?.isComplete, true);
  assert.ok(agentRequests(requests).length > subagents.length);
}

Deno.test({
  name:
    "a parallel step's children run in Claude Code subagents from their delegationTokens, and count their tokens too",
  ...hostTestOptions("claude"),
  fn: async () => {
    const place = await hostPlace("claude-code");
    try {
      await writeDelegationWorkflows(place.workspace);
      const config = JSON.stringify({ cost: PATIENT });
      await Deno.writeTextFile(join(place.waymarkHome, "config.json"), config);
      const model = serveAnthropic();
      try {
        const out = await runClaude(place, {
          prompt: "Run the waymark workflow `project.fanout` to completion.",
          modelUrl: model.url,
        });
        assert.equal(out.code, 0, `claude exited ${out.code}: ${out.stderr.slice(-800)}`);
        assert.ok(String(JSON.parse(out.stdout.trim().split("\n").at(-1)!).result).includes(DONE));
        assertDelegated(model.requests);
      } finally {
        await model.close();
      }
      const wm = await openWaymark({ home: place.waymarkHome });
      try {
        const rows = await wm.store.db.selectFrom("node_events").select(["run_id", "payload"])
          .where("kind", "=", "usage_recorded").execute();
        const events = rows.map((r) => ({ runId: r.run_id, ...JSON.parse(r.payload) }));
        const runs = new Set(events.map((e) => e.runId));
        assert.equal(runs.size, 4, "the parent and its three children measured their steps");
        // every acknowledgement found the call behind it (a subagent's in its own transcript)
        assert.deepEqual(events.filter((e) => e.notice).map((e) => e.notice.code), []);
        const total = events.reduce((n, e) => n + e.usage.inputTokens + e.usage.outputTokens, 0);
        assert.ok(total > 0, "tokens were counted");
      } finally {
        await wm.close();
      }
    } finally {
      await place.cleanup();
    }
  },
});
