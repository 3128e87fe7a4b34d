/**
 * Real Gemini CLI (from npm) with its model replaced by a scripted Gemini API on loopback: it
 * hands the model waymark's text content (not the JSON), so a bundled workflow run here is driven
 * by what the text rendering says alone (every one under `deno task test:hosts-full`; in the main
 * suite Claude Code walks every one, and `renderings_test.ts` drives every one from the text). And one run crosses hosts: started in Claude
 * Code, found with `resume_session` in Gemini CLI and finished there.
 * @module
 */
import assert from "node:assert/strict";
import { hostTestOptions } from "../helpers/hosts.ts";
import {
  bundledIds,
  geminiAgentRequests,
  geminiAnswered,
  pool,
  runsOf,
  sampled,
} from "../helpers/host_model_runs.ts";
import { type HostPlace, hostPlace, runClaude, runGemini } from "../helpers/host_run.ts";
import { serveAnthropic } from "../helpers/model/anthropic_api.ts";
import { DONE, PAUSED } from "../helpers/model/diligent.ts";
import { serveGemini } from "../helpers/model/gemini_api.ts";

const PARALLEL = 4;

async function throughGemini(place: HostPlace, prompt: string) {
  const model = serveGemini();
  try {
    const out = await runGemini(place, { prompt, modelUrl: model.url });
    return { out, requests: model.requests };
  } finally {
    await model.close();
  }
}

/** The last conversation's waymark answers (as Gemini CLI passed them: text). */
function lastAnswers(requests: Parameters<typeof geminiAgentRequests>[0]) {
  const last = geminiAgentRequests(requests).at(-1);
  assert.ok(last, "no request offered waymark's tools");
  return geminiAnswered(last);
}

function runIdOf(text: string): string | undefined {
  return text.match(/\brun (run_[0-9a-f]+)/)?.[1];
}

Deno.test({
  name: "bundled workflows complete through Gemini CLI, reading waymark's text",
  ...hostTestOptions("gemini"),
  fn: async () => {
    const ids = sampled(await bundledIds());
    const place = await hostPlace("gemini");
    try {
      const runs = await pool(ids, PARALLEL, async (id) => ({
        id,
        ...await throughGemini(place, `Run the waymark workflow \`${id}\` to completion.`),
      }));
      for (const { id, out, requests } of runs) {
        assert.equal(out.code, 0, `${id}: gemini exited ${out.code}: ${out.stderr.slice(-800)}`);
        assert.ok(
          out.stdout.includes(DONE),
          `${id}: the model did not finish: ${out.stdout.slice(-400)}`,
        );
        const answers = lastAnswers(requests);
        assert.ok(answers.every((a) => a.json === null), `${id}: Gemini CLI passed JSON, not text`);
        assert.match(
          answers.at(-1)!.text,
          /^# .* complete$/m,
          `${id}: the last answer is not complete`,
        );
        assert.ok(
          !answers.some((a) => /^(<\w+>\n)?(BLOCKED|Error )/.test(a.text)),
          `${id}: blocked`,
        );
      }
    } finally {
      await place.cleanup();
    }
  },
});

Deno.test({
  name:
    "a run started in Claude Code is found with resume_session in Gemini CLI and finished there",
  ...hostTestOptions("claude", "gemini"),
  fn: async () => {
    const place = await hostPlace("claude-code", "gemini");
    const anthropic = serveAnthropic();
    try {
      const started = await runClaude(place, {
        prompt: "Run the waymark workflow `waymark.docs_update`, but stop after 2 steps.",
        modelUrl: anthropic.url,
      });
      assert.equal(started.code, 0, started.stderr.slice(-800));
      assert.ok(started.stdout.includes(PAUSED), started.stdout.slice(-400));
      const { out, requests } = await throughGemini(
        place,
        "Resume where I left off with waymark and finish the run.",
      );
      assert.equal(out.code, 0, out.stderr.slice(-800));
      assert.ok(out.stdout.includes(DONE), out.stdout.slice(-400));
      const answers = lastAnswers(requests);
      assert.equal(answers[0]!.tool, "mcp_waymark_resume_session");
      assert.match(answers[0]!.text, /waymark\.docs_update/);
      const rehydrated = answers[1]!;
      assert.equal(rehydrated.input.ackToken, undefined, "the first continue only rehydrates");
      const claudeRun = JSON.stringify(anthropic.requests.at(-1)!.body).match(/run_[0-9a-f]{16}/)
        ?.[0];
      assert.equal(runIdOf(rehydrated.text), claudeRun, "Gemini CLI took up Claude Code's run");
      assert.match(answers.at(-1)!.text, /^# .* complete$/m);
      assert.deepEqual(
        (await runsOf(place.waymarkHome)).map((r) => [r.runId, r.status]),
        [[claudeRun, "complete"]],
        "Claude Code's run, and no other, is complete",
      );
    } finally {
      await anthropic.close();
      await place.cleanup();
    }
  },
});
