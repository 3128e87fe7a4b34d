/**
 * Each step's footprint in the viewer, in real headless Chromium: a run driven through a real
 * waymark MCP server in a real git repository, its host's transcript (a Claude Code session file
 * the test appends to, as the host would) read for tokens; a `waymark view` process on the same
 * home shows each step's duration, tokens, changed files and their diff (an agent's hostile line
 * stays text), and the branch's chart of time, change and tokens per step (screenshots of both go
 * to test-artifacts/screenshots/).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { HAS_CHROMIUM, IN_CI, launch } from "../helpers/browser.ts";
import { driveFootprints, footprintPlace, HOSTILE, type Json } from "../helpers/footprint.ts";
import { spawnView } from "../helpers/viewer_fixture.ts";
import { ROOT } from "../helpers/server.ts";

const SHOTS = join(ROOT, "test-artifacts", "screenshots");

Deno.test({
  name: "viewer in chromium: each step's duration, tokens, changed files, diff and the chart",
  ignore: !HAS_CHROMIUM && !IN_CI,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const place = await footprintPlace();
    let view: Awaited<ReturnType<typeof spawnView>> | null = null;
    let browser: Awaited<ReturnType<typeof launch>> | null = null;
    try {
      const drove = await driveFootprints(place);
      view = await spawnView(place.home);
      browser = await launch();
      const base = `${view.url.replace(/\/$/, "")}/sessions/${drove.sessionId}/runs/${drove.runId}`;
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));

      // the step that added a file: its time, its tokens, the file and its two lines
      await page.goto(`${base}/nodes/${drove.addedNode}`);
      assert.match(await page.locator("#step-duration").innerText(), /^\d+(\.\d)? (ms|s)$/);
      assert.match(
        await page.locator("#step-tokens").innerText(),
        /^1,107 tokens \(1,000 in, 7 out, 0 cache write, 100 cache read; 1 call\)/,
      );
      assert.match(await page.locator("#changes-summary").innerText(), /1 file changed · 1 added/);
      assert.match(await page.locator("#footprint").innerText(), /snapshot\s+[0-9a-f]{12}/);
      const addedRows = page.locator(".diff-view tr.d-add td.dt");
      assert.deepEqual(await addedRows.allInnerTexts(), ["one", "two"]);

      // the edit: two calls' tokens, the old line removed, the hostile line shown as text
      await page.goto(`${base}/nodes/${drove.editedNode}`);
      assert.match(await page.locator("#step-tokens").innerText(), /^5,214 tokens .* 2 calls\)/);
      assert.deepEqual(
        await page.locator(".diff-view tr.d-del td.dt").allInnerTexts(),
        ["export const a = 1;"],
      );
      const hostile = page.locator(".diff-view tr.d-add td.dt", { hasText: "<script>" });
      assert.equal(await hostile.innerText(), `// ${HOSTILE}`);
      assert.equal(await page.locator(".diff-view script, .diff-view img").count(), 0);
      assert.equal(await page.evaluate(() => (globalThis as Json).__pwned), undefined);
      await Deno.mkdir(SHOTS, { recursive: true });
      await page.locator("#footprint").screenshot({ path: join(SHOTS, "footprint-step.png") });

      // the chart: time, lines and tokens for each of the three steps
      await page.goto(`${base}/nodes/${drove.reportedNode}`);
      const chart = page.locator("#footprint-chart svg");
      assert.equal(await chart.locator("rect.bar-time").count(), 3);
      const lines = await chart.locator("rect.bar-lines").evaluateAll((rs) =>
        rs.map((r) => r.getAttribute("data-value"))
      );
      assert.deepEqual(lines, ["2", "3", "0"], "+2 · +2 −1 · nothing");
      const tokens = await chart.locator("rect.bar-tokens").evaluateAll((rs) =>
        rs.map((r) => r.getAttribute("data-value"))
      );
      assert.deepEqual(tokens, ["1107", "5214", "607"]);
      await chart.screenshot({ path: join(SHOTS, "footprint-chart.png") });
      const api = await page.request.get(
        `${
          view.url.replace(/\/$/, "")
        }/api/sessions/${drove.sessionId}/runs/${drove.runId}/nodes/${drove.editedNode}/footprints`,
      );
      const steps = (await api.json()).steps as Json[];
      assert.deepEqual(steps.map((s) => s.completedStepId), [null, "add", "edit"]);
      assert.equal(steps[2]!.tokens.inputTokens, 5000);
      assert.ok(steps[2]!.changes.diff.includes(HOSTILE), "the API carries the diff as data");
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      await browser?.close();
      await view?.stop();
      await place.cleanup();
    }
  },
});
