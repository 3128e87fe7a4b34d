/**
 * Each rendering must carry everything: for every bundled workflow, the scripted model's agent
 * drives a run over MCP from the text content alone (what Gemini CLI hands a model), and at each
 * answer its reading of the text equals its reading of the JSON (what Claude Code hands it):
 * tokens, the pending step, its gates, assessments and contract. Needs no host.
 * @module
 */
import assert from "node:assert/strict";
import { bundledIds } from "../helpers/host_model_runs.ts";
import { readStep, type StepView } from "../helpers/model/answer_view.ts";
import { DONE, nextMove, type Turn } from "../helpers/model/diligent.ts";
import { connect, tempHome } from "../helpers/server.ts";

/** What both readings must agree on (the prompt's own text is compared apart, by inclusion). */
function comparable(v: StepView) {
  const { verificationOutput: _v, pending, ...rest } = v;
  if (!pending) return { ...rest, pending };
  const { prompt: _p, title: _t, ...gates } = pending;
  return { ...rest, pending: gates };
}

Deno.test("the text and the JSON of every answer read the same, and the text alone completes every bundled workflow", async () => {
  const home = await tempHome();
  const client = await connect(home.home);
  try {
    for (const id of await bundledIds()) {
      const transcript: Turn[] = [{ role: "user", text: `Run the waymark workflow \`${id}\`.` }];
      let move = nextMove(transcript, { delegate: false, shell: false });
      for (let i = 0; "calls" in move; i++) {
        assert.ok(i < 200, `${id}: no end`);
        const call = { id: `c${i}`, ...move.calls[0]! };
        const result = await client.call(call.name, call.input);
        const text = result.content[0]!.text;
        if (/(start|continue)_workflow/.test(call.name)) {
          const json = readStep(JSON.stringify(result.structuredContent));
          const read = readStep(text);
          assert.deepEqual(comparable(read), comparable(json), `${id}: ${call.name} #${i}`);
          if (json.pending) assert.ok(text.includes(json.pending.prompt), `${id}: prompt`);
        }
        transcript.push({ role: "model", text: "", calls: [call] });
        transcript.push({ role: "results", results: [{ id: call.id, text }] });
        move = nextMove(transcript, { delegate: false, shell: false });
      }
      assert.match(move.text, new RegExp(DONE), `${id}: ${move.text}`);
    }
  } finally {
    await client.close();
    await home.cleanup();
  }
});
