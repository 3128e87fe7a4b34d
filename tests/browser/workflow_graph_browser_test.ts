/**
 * The workflow drawn in the viewer, in a real headless chromium: a code review run with a rewind
 * shows the workflow graph with the preferred branch's steps taken, the pending step marked, the
 * steps only the older branch reached marked as another branch, and the rest not reached; its
 * "workflow page" link opens the pinned workflow's page, whose graph has the same steps as the
 * Mermaid text `workflows inspect --graph` prints (shown there too). Screenshots go to
 * test-artifacts/screenshots/.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openWaymark } from "../../mod.ts";
import { mermaidFlowchart, workflowGraph } from "../../engine/authoring/graph.ts";
import { loadWorkflowFiles } from "../../engine/workflow/catalog.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { HAS_CHROMIUM, IN_CI, launch } from "../helpers/browser.ts";
import { ROOT, tempHome } from "../helpers/server.ts";
import { advance, ids, inProcess, spawnView } from "../helpers/viewer_fixture.ts";

const SHOTS = join(ROOT, "test-artifacts", "screenshots");

async function bundledMermaid(id: string): Promise<string> {
  const loaded = await loadWorkflowFiles(BUNDLED_WORKFLOWS);
  const found = loaded.find((l) => l.ok && l.workflow.id === id);
  if (!found?.ok) throw new Error(`no bundled ${id}`);
  return mermaidFlowchart(workflowGraph(found.workflow.compiled));
}

Deno.test({
  name: "viewer in chromium: the workflow graph with the run's path and branches, and its page",
  ignore: !HAS_CHROMIUM && !IN_CI,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { home, dbUrl, cleanup } = await tempHome();
    let view: Awaited<ReturnType<typeof spawnView>> | null = null;
    let browser: Awaited<ReturnType<typeof launch>> | null = null;
    try {
      const waymark = await openWaymark({ home, dbUrl });
      let runUrlPath: string;
      try {
        const driver = inProcess(waymark);
        const s0 = await driver.start({
          workflowId: "waymark.code_review",
          goal: "Review the retry change",
          context: { changeSize: "small" },
        });
        const s1 = await advance(driver, s0, "Intent: retries with backoff.");
        const s2 = await advance(driver, s1, "Mapped 3 files.");
        await advance(driver, s2, "Correctness: fine.");
        const again = await driver.continue({ stateToken: s1.stateToken });
        await advance(driver, { ...again, session: s1.session }, "Mapped only the uploader.");
        const { sessionId, runId } = ids(s0);
        runUrlPath = `/sessions/${sessionId}/runs/${runId}`;
      } finally {
        await waymark.close();
      }
      view = await spawnView(home);
      browser = await launch();
      const base = view.url.replace(/\/$/, "");
      const errors: string[] = [];
      const page = await browser.context.newPage();
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
      await page.goto(`${base}${runUrlPath}`);
      const svg = page.locator("#workflow-graph svg.wf-graph");
      assert.equal(await svg.count(), 1);
      const classOf = async (step: string) =>
        (await svg.locator(`g[data-step='${step}']`).getAttribute("class")) ?? "";
      assert.match(await classOf("understand-intent"), /\btaken\b/);
      assert.match(await classOf("map-changes"), /\btaken\b/);
      assert.match(await classOf("review-correctness"), /\bcurrent\b/);
      assert.match(await classOf("review-tests"), /\bbranched\b/);
      assert.match(await classOf("prioritized-findings"), /\buntaken\b/);
      const box = await svg.boundingBox();
      assert.ok(box && box.width > 300 && box.height > 300, JSON.stringify(box));
      await page.screenshot({ path: join(SHOTS, "workflow-graph-run.png"), fullPage: true });

      await page.click("#workflow-graph a[href^='/workflows/sha256:']");
      await page.waitForSelector("#workflow-page svg.wf-graph");
      const drawn = await page.locator("#workflow-page g[data-step]").evaluateAll((els) =>
        els.map((e) => e.getAttribute("data-step"))
      );
      const mermaid = await page.locator("#mermaid").textContent();
      assert.equal(mermaid, await bundledMermaid("waymark.code_review"));
      const inMermaid = [...mermaid!.matchAll(/^\s+step_(\S+?)\[/gm)].map((m) => m[1]);
      assert.deepEqual(inMermaid, drawn.map((id) => id!.replace(/[^A-Za-z0-9_]/g, "_")));
      assert.equal(await page.locator("#workflow-page .taken").count(), 0);
      await page.screenshot({ path: join(SHOTS, "workflow-graph-page.png"), fullPage: true });

      assert.deepEqual(errors, []);
      const missing = await page.goto(`${base}/workflows/sha256:${"0".repeat(64)}`);
      assert.equal(missing?.status(), 404);
    } finally {
      await browser?.close();
      await view?.stop();
      await cleanup();
    }
  },
});
