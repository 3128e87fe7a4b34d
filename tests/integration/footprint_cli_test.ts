/**
 * Each step's footprint outside the viewer: `sessions show --json` and its text carry each
 * step's time, changed files with their diff, and tokens (per step and per run), and a session
 * bundle carries them into another home, where `sessions show` says the same. The run is a real
 * one: a git repository, a real MCP server with snapshots on, a host transcript on disk.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { driveFootprints, footprintPlace, HOSTILE, type Json } from "../helpers/footprint.ts";
import { runCli } from "../helpers/maintenance.ts";
import { tempHome } from "../helpers/server.ts";

const json = (text: string) => JSON.parse(text);

/** What of a shown run the test compares across homes. */
function footprints(run: Json) {
  return run.steps.map((s: Json) => ({
    step: s.completedStepId,
    files: s.changes?.files.map((f: Json) => `${f.status} ${f.path}`),
    lines: s.changes ? [s.changes.linesAdded, s.changes.linesRemoved] : null,
    tokens: s.tokens,
  }));
}

Deno.test({
  name: "sessions show carries each step's time, changes and tokens, and a bundle carries them",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const place = await footprintPlace();
    const other = await tempHome();
    try {
      const drove = await driveFootprints(place);
      const sid = `ses_${drove.sessionId.replace(/^ses_/, "")}`;
      const shown = await runCli(["sessions", "show", sid, "--json"], { home: place.home });
      assert.equal(shown.code, 0, shown.err);
      const run = json(shown.out).runs[0];
      const steps = footprints(run);
      assert.deepEqual(steps.map((s: Json) => [s.step, s.files, s.lines]), [
        ["add", ["added added.txt"], [2, 0]],
        ["edit", ["modified app.ts"], [2, 1]],
        ["report", [], [0, 0]],
      ]);
      assert.deepEqual(steps.map((s: Json) => s.tokens.inputTokens), [1000, 5000, 500]);
      assert.deepEqual(steps.map((s: Json) => s.tokens.calls), [1, 2, 1]);
      assert.ok(run.steps.every((s: Json) => Number.isInteger(s.durationMs) && s.durationMs >= 0));
      assert.ok(run.steps[1].changes.diff.includes(HOSTILE), "the diff, as recorded");
      assert.equal(run.tokens.steps, 3);
      assert.equal(run.tokens.total.inputTokens, 6500);
      assert.equal(run.tokens.total.cacheReadInputTokens, 400);

      const text = await runCli(["sessions", "show", sid], { home: place.home });
      assert.match(text.out, /tokens: 6928 over 3 step\(s\)/);
      assert.match(text.out, /steps:\n {4}add: \d+\.\d s, 1 file\(s\) \+2 -0, 1107 tokens/);
      assert.match(text.out, / {4}edit: \d+\.\d s, 1 file\(s\) \+2 -1, 5214 tokens/);

      const file = join(place.home, "bundle.json");
      const exported = await runCli(["sessions", "export", sid, "-o", file], { home: place.home });
      assert.equal(exported.code, 0, exported.err);
      const imported = await runCli(["import", file], { home: other.home });
      assert.equal(imported.code, 0, imported.err);
      const again = await runCli(["sessions", "show", sid, "--json"], { home: other.home });
      assert.equal(again.code, 0, again.err);
      const moved = json(again.out).runs[0];
      assert.deepEqual(footprints(moved), steps, "the bundle carried every footprint");
      assert.deepEqual(moved.tokens, run.tokens);
    } finally {
      await other.cleanup();
      await place.cleanup();
    }
  },
});
