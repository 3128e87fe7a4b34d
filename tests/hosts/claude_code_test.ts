/**
 * Real Claude Code (from npm) with its model replaced by the scripted stand-in on loopback:
 * waymark's entry written by `waymark setup`, every bundled workflow run to completion through
 * the host, a parallel step's children driven by real subagents (the host's Agent tool), and a
 * verified step blocked by waymark's own run of the check, fixed with the host's shell, passed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeDelegationWorkflows } from "../helpers/delegation.ts";
import { hostTestOptions } from "../helpers/hosts.ts";
import {
  agentRequests,
  answered,
  bundledIds,
  conversations,
  firstUserText,
  pool,
  waymarkTools,
} from "../helpers/host_model_runs.ts";
import { type HostPlace, hostPlace, runClaude } from "../helpers/host_run.ts";
import { serveAnthropic } from "../helpers/model/anthropic_api.ts";
import { DONE } from "../helpers/model/diligent.ts";

/** Claude Code sessions run at once (each starts its own waymark server). */
const PARALLEL = 4;

/** Runs one task through Claude Code against a fresh stand-in; returns its requests. */
async function throughClaude(place: HostPlace, prompt: string) {
  const model = serveAnthropic();
  try {
    const out = await runClaude(place, { prompt, modelUrl: model.url });
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

Deno.test({
  name: "every bundled workflow completes through Claude Code, reading waymark's JSON",
  ...hostTestOptions("claude"),
  fn: async () => {
    const ids = await bundledIds();
    assert.ok(ids.length >= 15, `expected the bundled library, got ${ids.join(", ")}`);
    const place = await hostPlace("claude-code");
    try {
      const runs = await pool(ids, PARALLEL, async (id) => ({
        id,
        ...await throughClaude(place, `Run the waymark workflow \`${id}\` to completion.`),
      }));
      for (const { id, out, requests } of runs) {
        assertDone(out, id);
        const [conversation] = conversations(requests);
        assert.ok(conversation, `${id}: no request offered waymark's tools`);
        const offered = waymarkTools(conversation).map((t) => t.name);
        for (const tool of ["list_workflows", "start_workflow", "continue_workflow"]) {
          assert.ok(offered.includes(`mcp__waymark__${tool}`), `${id}: ${tool} was not offered`);
        }
        const calls = answered(conversation);
        const last = calls.at(-1)!;
        assert.ok(last.json, `${id}: Claude Code passed text, not the structured JSON`);
        assert.equal(last.json.isComplete, true, `${id}: the last answer is not complete`);
        const started = calls.find((c) => /start_workflow$/.test(c.tool))!;
        assert.equal(started.json?.workflow?.id, id, `${id}: another workflow was started`);
        assert.ok(
          calls.every((c) => !c.json?.error && c.json?.kind !== "blocked"),
          `${id}: a call failed or blocked: ${
            calls.find((c) => c.json?.error || c.json?.kind === "blocked")?.text.slice(0, 300)
          }`,
        );
      }
    } finally {
      await place.cleanup();
    }
  },
});

Deno.test({
  name: "a parallel step's children run in Claude Code subagents, each from its delegationToken",
  ...hostTestOptions("claude"),
  fn: async () => {
    const place = await hostPlace("claude-code");
    try {
      await writeDelegationWorkflows(place.workspace);
      const { out, requests } = await throughClaude(
        place,
        "Run the waymark workflow `project.fanout` to completion.",
      );
      assertDone(out, "project.fanout");
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
      assert.equal(
        (synthesis.json!.pending.prompt.match(/Review the (api|storage|docs)/g) ?? []).length >= 3,
        true,
        "the synthesis prompt carries the three children's results",
      );
      assert.equal(parent.at(-1)!.json?.isComplete, true);
      assert.ok(agentRequests(requests).length > subagents.length);
    } finally {
      await place.cleanup();
    }
  },
});

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
