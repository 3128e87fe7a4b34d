/**
 * Verification evidence in the viewer, in real headless Chromium: a session written by a real
 * waymark MCP server whose allowlisted check failed, then passed, and whose disallowed command
 * did not run; a `waymark view` process on the same home shows each node's evidence (verdict,
 * command, exit code, git HEAD, the output's end) and an agent's hostile output stays text.
 */
import assert from "node:assert/strict";
import { HAS_CHROMIUM, IN_CI, launch } from "../helpers/browser.ts";
import { connect } from "../helpers/server.ts";
import { spawnView } from "../helpers/viewer_fixture.ts";
import { driveVerified, verifiedWorkspace } from "../helpers/verification.ts";

Deno.test({
  name: "viewer in chromium: a node's verification evidence, failed, passed and not run",
  ignore: !HAS_CHROMIUM && !IN_CI,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const ws = await verifiedWorkspace();
    let view: Awaited<ReturnType<typeof spawnView>> | null = null;
    let browser: Awaited<ReturnType<typeof launch>> | null = null;
    try {
      const client = await connect(ws.home, { cwd: ws.workspace });
      const drove = await driveVerified(client, ws).finally(() => client.close());
      view = await spawnView(ws.home);
      browser = await launch();
      const base = `${view.url.replace(/\/$/, "")}/sessions/${drove.sessionId}/runs/${drove.runId}`;
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));

      await page.goto(`${base}/nodes/${drove.failedNodeId}`);
      const failed = page.locator("li.evidence[data-verdict='failed']");
      assert.equal(await failed.count(), 1);
      const text = await failed.innerText();
      assert.match(text, /failed/);
      assert.match(text, /deno run --quiet --allow-read=\. --allow-write=\. check\.ts/);
      assert.match(text, /exit 3/);
      assert.match(text, new RegExp(`HEAD ${ws.head.slice(0, 12)}`));
      assert.ok(await failed.locator("pre", { hasText: "FAIL: status is broken" }).isVisible());

      await page.goto(`${base}/nodes/${drove.passedNodeId}`);
      const passed = page.locator("li.evidence[data-verdict='passed']");
      assert.match(await passed.innerText(), /exit 0 · .* s · HEAD [0-9a-f]{12} \(dirty\)/);

      await page.goto(`${base}/nodes/${drove.skippedNodeId}`);
      const skipped = page.locator("li.evidence[data-verdict='not_allowed']");
      assert.match(await skipped.innerText(), /not_allowed[\s\S]*deno lint[\s\S]*config\.json/);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      await browser?.close();
      await view?.stop();
      await ws.cleanup();
    }
  },
});
