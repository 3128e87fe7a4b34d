/**
 * The Mermaid text `workflows inspect --graph` prints is real Mermaid: Mermaid itself (npm
 * `mermaid`, a test-only dependency, loaded from Deno's npm cache into a blank page, no CDN)
 * parses the flowchart of every bundled workflow and of a parallel step, and renders one to an
 * SVG with a node per step. The viewer does not ship it (5.5 MB minified): it draws the same
 * graph model as SVG on the server.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { mermaidFlowchart, workflowGraph } from "../../engine/authoring/graph.ts";
import { loadWorkflowFile, loadWorkflowFiles } from "../../engine/workflow/catalog.ts";
import { allSteps } from "../../engine/workflow/interpreter.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { HAS_CHROMIUM, IN_CI, launch } from "../helpers/browser.ts";

// pinned here, not in tests/deno.json: the import map holds only what waymark imports
const MERMAID = "mermaid@12.3.0";

/** The path of Mermaid's browser bundle in Deno's npm cache, fetching the package if needed. */
async function mermaidBundle(): Promise<string> {
  const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  const cache = JSON.parse(new TextDecoder().decode(info.stdout)).npmCache as string;
  const [name, version] = MERMAID.split("@");
  const file = join(cache, "registry.npmjs.org", name!, version!, "dist", "mermaid.min.js");
  try {
    await Deno.stat(file);
  } catch {
    const cached = await new Deno.Command(Deno.execPath(), {
      args: ["cache", "--node-modules-dir=none", `npm:${MERMAID}`],
      cwd: await Deno.makeTempDir(),
    }).output();
    assert.equal(cached.code, 0, new TextDecoder().decode(cached.stderr));
  }
  return file;
}

async function flowcharts(): Promise<Map<string, { text: string; steps: number }>> {
  const out = new Map<string, { text: string; steps: number }>();
  for (const l of await loadWorkflowFiles(BUNDLED_WORKFLOWS)) {
    if (!l.ok) throw new Error(JSON.stringify(l.error));
    const c = l.workflow.compiled;
    out.set(c.id, { text: mermaidFlowchart(workflowGraph(c)), steps: allSteps(c).length });
  }
  const fanOut = JSON.stringify({
    id: "team.fan_out",
    name: "Fan out",
    description: "d",
    version: "1",
    steps: [{
      id: "reviews",
      title: 'Reviews "in parallel" <fast>',
      type: "parallel",
      prompt: "Review.",
      parallelDelegations: [
        { workflowId: "waymark.routine-test_baseline" },
        { workflowId: "team.docs", runCondition: { var: "docs", in: ["yes", "maybe"] } },
      ],
    }],
  });
  const loaded = await loadWorkflowFile({ source: "extra", file: "f.json", text: fanOut });
  assert.ok(loaded.ok);
  const c = loaded.workflow.compiled;
  out.set(c.id, { text: mermaidFlowchart(workflowGraph(c)), steps: allSteps(c).length });
  return out;
}

Deno.test({
  name: "mermaid in chromium parses every bundled workflow's flowchart and renders one",
  ignore: !HAS_CHROMIUM && !IN_CI,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const bundle = await Deno.readTextFile(await mermaidBundle());
    const charts = await flowcharts();
    const browser = await launch();
    try {
      const page = await browser.context.newPage();
      await page.setContent("<!doctype html><div id='out'></div>");
      await page.addScriptTag({ content: bundle });
      await page.evaluate(() =>
        (globalThis as unknown as { mermaid: { initialize(o: unknown): void } }).mermaid
          .initialize({ startOnLoad: false, securityLevel: "strict" })
      );
      const parse = (text: string) =>
        page.evaluate(async (text) => {
          try {
            const m = (globalThis as unknown as { mermaid: { parse(t: string): Promise<unknown> } })
              .mermaid;
            await m.parse(text);
            return null;
          } catch (e) {
            return String((e as Error).message ?? e);
          }
        }, text);
      assert.notEqual(
        await parse('flowchart TD\n  a["x"] -->|"y| b'),
        null,
        "a broken chart parses",
      );
      for (const [id, chart] of charts) {
        assert.equal(await parse(chart.text), null, `${id}:\n${chart.text}`);
      }
      const chart = charts.get("waymark.test_first_implementation")!;
      const svg = await page.evaluate(async (text) => {
        const m = (globalThis as unknown as {
          mermaid: { render(id: string, t: string): Promise<{ svg: string }> };
        }).mermaid;
        return (await m.render("graph", text)).svg;
      }, chart.text);
      const nodes = [...svg.matchAll(/id="[^"]*flowchart-step_[^"]*"/g)].length;
      assert.equal(nodes, chart.steps, "one node per step");
      assert.match(svg, /max 40/);
    } finally {
      await browser.close();
    }
  },
});
