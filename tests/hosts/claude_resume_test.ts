/**
 * The place given back, through real Claude Code with the repository's plugin installed (its
 * `SessionStart` hook): a run paused in one session is taken up after a new session, after
 * `--resume` and after compaction. Each time the model's first request after the break carries
 * the open run (the hook's text, with a fresh stateToken) and the scripted model finishes the run
 * from there; after compaction the summary keeps no token, so the hook is its only way back.
 * @module
 */
import assert from "node:assert/strict";
import { hostTestOptions } from "../helpers/hosts.ts";
import { agentRequests, answered, runsOf } from "../helpers/host_model_runs.ts";
import {
  claudeSessionId,
  type HostOutput,
  type HostPlace,
  hostPlace,
  installPlugin,
  runClaude,
} from "../helpers/host_run.ts";
import { COMPACT_SUMMARY, serveAnthropic } from "../helpers/model/anthropic_api.ts";
import type { ModelServer } from "../helpers/model/recording_server.ts";
import { DONE, PAUSED } from "../helpers/model/diligent.ts";

/** The hook's opening words, as the plugin's `waymark hook session-start` prints them. */
const HOOK_TEXT = /waymark: an open workflow run in this workspace/;

function resultOf(out: HostOutput): string {
  assert.equal(out.code, 0, out.stderr.slice(-800));
  return String(JSON.parse(out.stdout.trim().split("\n").at(-1)!).result);
}

/** Pauses a run of waymark.docs_update after two steps; returns the session id and the run id. */
async function pausedRun(place: HostPlace, model: ModelServer) {
  const out = await runClaude(place, {
    prompt: "Run the waymark workflow `waymark.docs_update`, but stop after 2 steps.",
    modelUrl: model.url,
  });
  assert.match(resultOf(out), new RegExp(PAUSED));
  const runId = JSON.stringify(model.requests.at(-1)!.body).match(/run_[0-9a-f]{16}/)?.[0];
  assert.ok(runId, "the paused run's id is in the conversation");
  return { sessionId: claudeSessionId(out), runId };
}

/**
 * Carries on in a later invocation; checks its first agent request carries the open run and the
 * run is finished from there.
 */
async function carriedOn(
  scenario: string,
  options: {
    args?: string[];
    /** What happens between the two invocations (compaction). */
    between?: (at: { place: HostPlace; model: ModelServer; sessionId: string }) => Promise<void>;
    /** Whether the model must find its way back through the hook's token alone. */
    hookOnly: boolean;
  },
): Promise<void> {
  const place = await hostPlace();
  const model = serveAnthropic();
  try {
    await installPlugin(place);
    const { sessionId, runId } = await pausedRun(place, model);
    await options.between?.({ place, model, sessionId });
    const from = model.requests.length;
    const out = await runClaude(place, {
      prompt: "Please carry on with the open waymark run.",
      modelUrl: model.url,
      args: options.args?.map((a) => a.replace("{session}", sessionId)),
    });
    assert.match(resultOf(out), new RegExp(DONE), `${scenario}: the run was not finished`);
    const later = agentRequests(model.requests.slice(from));
    const first = JSON.stringify(later[0]!.body.messages);
    assert.match(first, HOOK_TEXT, `${scenario}: the first request does not carry the open run`);
    assert.ok(first.includes(runId), `${scenario}: the hook names another run`);
    // the calls of this invocation (a resumed conversation also holds the earlier ones)
    const calls = answered(later.at(-1)!).slice(answered(later[0]!).length);
    const last = calls.at(-1)!;
    assert.equal(last.json?.isComplete, true, `${scenario}: the last answer is not complete`);
    assert.deepEqual(
      (await runsOf(place.waymarkHome)).map((r) => [r.runId, r.status]),
      [[runId, "complete"]],
      `${scenario}: the paused run, and no other, is complete`,
    );
    assert.ok(
      !calls.some((c) => /start_workflow$/.test(c.tool) && c.input.workflowId),
      `${scenario}: a new run was started instead`,
    );
    if (options.hookOnly) {
      const hookToken = first.match(/continue_workflow \{\\"stateToken\\": \\"(st1_[\w-]+)/)?.[1];
      const taken = calls.find((c) => /continue_workflow$/.test(c.tool))!;
      assert.equal(taken.input.stateToken, hookToken, `${scenario}: not taken up from the hook`);
      assert.equal(taken.input.ackToken, undefined, `${scenario}: the first call rehydrates`);
    }
  } finally {
    await model.close();
    await place.cleanup();
  }
}

Deno.test({
  name: "the plugin's SessionStart hook gives the place back: new session, --resume, compaction",
  ...hostTestOptions("claude"),
  fn: async () => {
    await Promise.all([
      carriedOn("new session", { hookOnly: true }),
      carriedOn("--resume", { args: ["--resume", "{session}"], hookOnly: false }),
      carriedOn("compaction", {
        args: ["--resume", "{session}"],
        hookOnly: true,
        between: async ({ place, model, sessionId }) => {
          const out = await runClaude(place, {
            prompt: "/compact",
            modelUrl: model.url,
            args: ["--resume", sessionId],
          });
          assert.equal(out.code, 0, out.stderr.slice(-800));
          assert.ok(
            model.requests.some((r) =>
              r.answer && "text" in r.answer && r.answer.text === COMPACT_SUMMARY
            ),
            "Claude Code asked the model for a summary",
          );
        },
      }),
    ]);
  },
});
