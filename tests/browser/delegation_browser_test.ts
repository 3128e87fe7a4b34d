/**
 * The delegation tree in the viewer, in a real headless chromium: a parent run driven over MCP
 * reaches a parallel step with three children (one completed, one open, one abandoned with a
 * reason); its page lists them under that step with their status, goal and workflow, each
 * linked to its run, and a child's page links back to the parent run and step. When the last
 * child ends, the page updates live to say which child settled the step, the parallel step's
 * node shows the settlement, and the synthesis node shows the results it was handed. A
 * screenshot of the parent's page goes to test-artifacts/screenshots/.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Page } from "npm:playwright-core@1.65.1";
import { HAS_CHROMIUM, IN_CI, launch } from "../helpers/browser.ts";
import {
  abandonChild,
  CHILD_ID,
  delegationWorkspace,
  driveChild,
  reachParallel,
} from "../helpers/delegation.ts";
import { connect, ok, ROOT, tempHome } from "../helpers/server.ts";
import { spawnView } from "../helpers/viewer_fixture.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Any = Record<string, any>;

const SHOTS = join(ROOT, "test-artifacts", "screenshots");
const ABANDONED = "The docs are out of scope for this change.";

/** The children listed under the parallel step `reviews`, as the page shows them. */
async function listed(page: Page): Promise<{ run: string; status: string; text: string }[]> {
  const items = page.locator("#children .child-group[data-step='reviews'] li.child");
  return await items.evaluateAll((els) =>
    els.map((e) => ({
      run: e.getAttribute("data-run") ?? "",
      status: e.getAttribute("data-status") ?? "",
      text: (e as unknown as { innerText: string }).innerText,
    }))
  );
}

Deno.test({
  name:
    "viewer in chromium: child runs under the parallel step, links both ways, settlement and synthesis",
  ignore: !HAS_CHROMIUM && !IN_CI,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { home, cleanup } = await tempHome();
    const ws = await delegationWorkspace();
    const agent = await connect(home, { extraArgs: ws.args });
    let view: Awaited<ReturnType<typeof spawnView>> | null = null;
    let browser: Awaited<ReturnType<typeof launch>> | null = null;
    try {
      const atParallel = await reachParallel(agent, "Review the billing change");
      const [first, second, third] = atParallel.delegations as Any[];
      await driveChild(agent, first!.delegationToken, (s) => `first ${s}: fine`);
      const secondStart = ok(
        await agent.call("start_workflow", { delegationToken: second!.delegationToken }),
      );
      await abandonChild(agent, third!.delegationToken, ABANDONED);

      view = await spawnView(home);
      browser = await launch();
      const base = view.url.replace(/\/$/, "");
      const sid = atParallel.session.sessionId as string;
      const parentRun = placeOf(atParallel).runId as string;
      const home_ = placeOf(atParallel).nodeId as string;
      const parentUrl = `${base}/sessions/${sid}/runs/${parentRun}`;
      const errors: string[] = [];
      const page = await browser.context.newPage();
      page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));

      // The parent's page: three children under `reviews`, in delegation order.
      await page.goto(parentUrl);
      const group = page.locator("#children .child-group[data-step='reviews']");
      assert.equal(await group.getAttribute("data-node"), home_);
      assert.match(await group.locator("h3").innerText(), /Parallel reviews\s+reviews/);
      const before = await listed(page);
      assert.deepEqual(before.map((c) => c.run), [first!.runId, second!.runId, third!.runId]);
      assert.deepEqual(before.map((c) => c.status), ["complete", "open", "aborted"]);
      for (const [i, part] of ["api", "storage", "docs"].entries()) {
        assert.match(before[i]!.text, new RegExp(`Review the ${part}`));
        assert.ok(before[i]!.text.includes(CHILD_ID));
      }
      assert.ok(before[2]!.text.includes(`Abandoned: ${ABANDONED}`));
      assert.match(await group.locator(".settled").innerText(), /^2 of 3 ended$/);
      assert.match(await page.locator(`#n-${home_} .badge.delegated`).innerText(), /3 child runs/);
      // The sidebar marks the children as delegated, under their parent.
      assert.deepEqual(
        await page.locator(".runs li.delegated .rt").allInnerTexts(),
        ["Review the api", "Review the storage", "Review the docs"],
        "in delegation order",
      );
      assert.match(
        await page.locator(".runs li.delegated").first().innerText(),
        /child of Review the billing change · step reviews/,
      );

      // A child's page links back to the parent run and the step's node.
      await group.locator(`li.child[data-run='${second!.runId}'] a`).click();
      await page.waitForURL(`${parentUrl.replace(parentRun, second!.runId)}`);
      const back = page.locator("#run-head .delegated-from");
      assert.match(
        await back.innerText(),
        /Child run 2 of step reviews in Review the billing change/,
      );
      assert.equal(
        await back.locator("a").getAttribute("href"),
        `/sessions/${sid}/runs/${parentRun}/nodes/${home_}#node`,
      );
      assert.equal(await page.locator("#children .child").count(), 0, "a child has no children");
      await back.locator("a").click();
      await page.waitForURL(`${parentUrl}/nodes/${home_}#node`);
      await page.locator("#live.on").waitFor({ timeout: 10_000 });

      // The last child ends in another process: the open page says who settled the step.
      const other = await connect(home, { extraArgs: ws.args });
      try {
        let at = secondStart;
        while (!at.isComplete) {
          at = ok(
            await other.call("continue_workflow", {
              stateToken: at.stateToken,
              ackToken: at.ackToken,
              output: { notesMarkdown: `second ${at.pending.stepId}: fine` },
            }),
          );
        }
        assert.equal(at.delegatedFrom.settled, true);
      } finally {
        await other.close();
      }
      await page.locator("#children .settled")
        .getByText(`All 3 ended · settled by ${second!.runId}`).waitFor({ timeout: 10_000 });
      assert.deepEqual((await listed(page)).map((c) => c.status), [
        "complete",
        "complete",
        "aborted",
      ]);
      const settled = page.locator("#node #reviews li.settled");
      await settled.waitFor({ timeout: 10_000 });
      assert.match(await settled.innerText(), new RegExp(`settled by ${second!.runId}`));
      assert.equal(
        await settled.locator("a").getAttribute("href"),
        `/sessions/${sid}/runs/${second!.runId}`,
      );

      // The parent goes on to the synthesis step: its node shows what it was handed.
      const blocked = ok(
        await agent.call("continue_workflow", { stateToken: atParallel.stateToken }),
      );
      const synthesis = ok(
        await agent.call("continue_workflow", {
          stateToken: blocked.stateToken,
          ackToken: blocked.ackToken,
        }),
      );
      assert.equal(synthesis.pending.stepId, "reviews-synthesis");
      await page.goto(`${parentUrl}/nodes/${placeOf(synthesis).nodeId}`);
      const collected = page.locator("#node #reviews li.collected");
      assert.match(await collected.innerText(), /Results handed to the synthesis step \(3\)/);
      assert.deepEqual(
        await collected.locator("li").evaluateAll((els) =>
          els.map((e) => e.getAttribute("data-run"))
        ),
        [first!.runId, second!.runId, third!.runId],
      );
      const prompt = await page.locator("#node .prompt").innerText();
      assert.equal(
        prompt.replace(/\s+/g, " ").includes("first report: fine"),
        true,
        "the synthesis prompt is shown as the agent received it",
      );
      assert.ok(prompt.includes(`Aborted: ${ABANDONED}`));
      await page.setViewportSize({ width: 1440, height: 1400 });
      await page.goto(`${parentUrl}/nodes/${home_}`);
      await Deno.mkdir(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, "delegation-laptop-light.png"), fullPage: true });
      assert.deepEqual(errors, [], "no script errors");
      await page.close();
    } finally {
      await browser?.close();
      await agent.close();
      if (view) await view.stop();
      await ws.cleanup();
      await cleanup();
    }
  },
});
