/**
 * Real Claude Code (from npm) with its model replaced by the scripted stand-in on loopback:
 * waymark's entry written by `waymark setup`, every bundled workflow run to completion through
 * the host, and a verified step blocked by waymark's own run of the check, fixed with the host's
 * shell, passed. A parallel step's children in real subagents (the host's Agent tool) are
 * `claude_cost_test.ts`'s, whose session also counts their tokens.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { hostTestOptions } from "../helpers/hosts.ts";
import {
  type Answered,
  answered,
  bundledIds,
  conversations,
  pool,
  waymarkTools,
} from "../helpers/host_model_runs.ts";
import { type HostPlace, hostPlace, runClaude } from "../helpers/host_run.ts";
import { serveAnthropic } from "../helpers/model/anthropic_api.ts";
import { DONE } from "../helpers/model/diligent.ts";

/**
 * Claude Code sessions run at once (each starts its own waymark server). The sweep gives each
 * session a share of the bundled workflows to run one after another: a session's start costs
 * more CPU than its turns, and every workflow is still walked from its start to its end.
 */
const PARALLEL = 4;

/**
 * Runs one task through Claude Code against a fresh stand-in; returns its requests. Nothing here
 * reads a session back (`claude_resume_test.ts` and `claude_cost_test.ts` do), so the sessions are
 * not saved: writing the transcript after every turn cost a fifth of the sweep's CPU.
 */
async function throughClaude(place: HostPlace, prompt: string) {
  const model = serveAnthropic();
  try {
    const out = await runClaude(place, {
      prompt,
      modelUrl: model.url,
      args: ["--no-session-persistence"],
    });
    return { out, requests: model.requests };
  } finally {
    await model.close();
  }
}

function assertDone(out: { code: number; stdout: string; stderr: string }, what: string) {
  assert.equal(out.code, 0, `${what}: claude exited ${out.code}: ${out.stderr.slice(-800)}`);
  const result = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  assert.ok(
    String(result.result).includes(DONE),
    `${what}: the model did not finish: ${String(result.result).slice(0, 400)}`,
  );
}

/** `ids` dealt into `n` groups, round robin. */
function deal<T>(ids: T[], n: number): T[][] {
  return Array.from({ length: n }, (_, k) => ids.filter((_, i) => i % n === k))
    .filter((g) => g.length > 0);
}

/**
 * A conversation's step calls split by run: each `start_workflow` opens the next group, and its
 * `continue_workflow` calls follow (listing and inspecting between runs belong to none).
 */
function byRun(calls: Answered[]): Answered[][] {
  const runs: Answered[][] = [];
  for (const call of calls) {
    if (/start_workflow$/.test(call.tool)) runs.push([call]);
    else if (/continue_workflow$/.test(call.tool)) runs.at(-1)?.push(call);
  }
  return runs;
}

Deno.test({
  name: "every bundled workflow completes through Claude Code, reading waymark's JSON",
  ...hostTestOptions("claude"),
  fn: async () => {
    const ids = await bundledIds();
    assert.ok(ids.length >= 15, `expected the bundled library, got ${ids.join(", ")}`);
    const place = await hostPlace("claude-code");
    try {
      const sessions = await pool(deal(ids, PARALLEL), PARALLEL, async (group) => ({
        group,
        ...await throughClaude(
          place,
          `Run the waymark workflows ${
            group.map((id) => `\`${id}\``).join(", ")
          } to completion, one after another.`,
        ),
      }));
      for (const { group, out, requests } of sessions) {
        assertDone(out, group.join(", "));
        const [conversation] = conversations(requests);
        assert.ok(conversation, `${group}: no request offered waymark's tools`);
        const offered = waymarkTools(conversation).map((t) => t.name);
        for (const tool of ["list_workflows", "start_workflow", "continue_workflow"]) {
          assert.ok(offered.includes(`mcp__waymark__${tool}`), `${group}: ${tool} was not offered`);
        }
        const calls = answered(conversation);
        const failed = calls.find((c) => c.json?.error);
        assert.ok(!failed, `${group}: ${failed?.tool} failed: ${failed?.text.slice(0, 300)}`);
        const runs = byRun(calls);
        assert.deepEqual(runs.map((r) => r[0]!.json?.workflow?.id), group, "one run per workflow");
        for (const [i, calls] of runs.entries()) assertWalked(group[i]!, calls);
      }
    } finally {
      await place.cleanup();
    }
  },
});

/** One run's calls: JSON throughout, none failed or blocked, the last answer complete. */
function assertWalked(id: string, calls: Answered[]) {
  const last = calls.at(-1)!;
  assert.ok(last.json, `${id}: Claude Code passed text, not the structured JSON`);
  assert.equal(last.json.isComplete, true, `${id}: the last answer is not complete`);
  assert.ok(
    calls.every((c) => !c.json?.error && c.json?.kind !== "blocked"),
    `${id}: a call failed or blocked: ${
      calls.find((c) => c.json?.error || c.json?.kind === "blocked")?.text.slice(0, 300)
    }`,
  );
}

/** A one-step project workflow whose step waymark verifies by running `sh check.sh`. */
const VERIFIED = {
  id: "project.verified",
  name: "Verified change",
  description: "One step that waymark checks by running the workspace's check.",
  version: "1.0.0",
  steps: [
    { id: "plan", title: "Plan", prompt: "Plan the change." },
    {
      id: "implement",
      title: "Implement",
      prompt: "Make the check pass.",
      verify: { run: ["sh", "check.sh"], prompt: "The workspace's check." },
    },
  ],
};

Deno.test({
  name: "a verified step is blocked by waymark's run of the check, fixed in the host, then passes",
  ...hostTestOptions("claude"),
  fn: async () => {
    const place = await hostPlace("claude-code");
    try {
      const dir = join(place.workspace, ".waymark", "workflows");
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(join(dir, "verified.json"), JSON.stringify(VERIFIED));
      await Deno.writeTextFile(
        join(place.workspace, "check.sh"),
        'if [ -f fixed ]; then echo "check ok"; else echo "check failed: no file named fixed"; echo "FIX: touch fixed"; exit 1; fi\n',
      );
      const workspace = await Deno.realPath(place.workspace);
      await Deno.writeTextFile(
        join(place.waymarkHome, "config.json"),
        JSON.stringify({
          verification: { workspaces: { [workspace]: { allow: ["sh check.sh"] } } },
        }),
      );
      const { out, requests } = await throughClaude(
        place,
        "Run the waymark workflow `project.verified` to completion.",
      );
      assertDone(out, "project.verified");
      const calls = answered(conversations(requests)[0]!);
      const verdicts = calls.map((c) => c.json?.verification?.verdict).filter(Boolean);
      assert.deepEqual(verdicts, ["failed", "passed"], "blocked by the failing check, then passed");
      const blocked = calls.find((c) => c.json?.kind === "blocked")!;
      assert.equal(blocked.json!.blockers[0].code, "VERIFICATION_FAILED");
      assert.ok(
        (await Deno.stat(join(place.workspace, "fixed"))).isFile,
        "the host's shell ran the fix",
      );
      assert.equal(calls.at(-1)!.json?.isComplete, true);
    } finally {
      await place.cleanup();
    }
  },
});
