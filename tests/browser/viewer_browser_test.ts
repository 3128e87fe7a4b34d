/**
 * The viewer in a real headless browser (playwright-core driving Debian's chromium; never a
 * downloaded browser). Sessions are written by a real waymark MCP server; the viewer
 * is a `waymark view` process on the same home. Screenshots of the main pages, light and dark,
 * laptop and phone, go to test-artifacts/screenshots/.
 *
 * Without chromium the test is ignored outside CI, with one line saying how to install it; in CI
 * (`CI=true`) a missing browser fails the test.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { BrowserContext, Page } from "npm:playwright-core@1.65.1";
import { exportSession, importBundle, openWaymark } from "../../mod.ts";
import { connect, ROOT, tempHome } from "../helpers/server.ts";
import { HAS_CHROMIUM, IN_CI, launch } from "../helpers/browser.ts";
import {
  advance,
  overMcp,
  rawRequest,
  seedForkedReview,
  seedHostile,
  spawnView,
} from "../helpers/viewer_fixture.ts";
import { placeOf } from "../helpers/answers.ts";
import { testingOnPostgres } from "../helpers/postgres.ts";

const SHOTS = join(ROOT, "test-artifacts", "screenshots");
/**
 * Screenshots are for people to look at and assert only that they were written; the pages they
 * show are checked above on each store. On PostgreSQL (the store matrix,
 * `tests/postgres/browser_pg_test.ts`) they would be the same pictures written over the same
 * files (16 page loads), so they are taken on libSQL only.
 */
const SHOOTING = !testingOnPostgres();

async function shoot(
  context: BrowserContext,
  url: string,
  name: string,
): Promise<void> {
  for (const [device, width, height] of [["laptop", 1440, 1000], ["phone", 390, 844]] as const) {
    const page = await context.newPage();
    await page.setViewportSize({ width, height });
    await page.goto(url);
    await page.waitForLoadState("networkidle").catch(() => {});
    // the colour scheme is CSS alone: the loaded page repaints, no second load
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: join(SHOTS, `${name}-${device}-${scheme}.png`) });
    }
    await page.close();
  }
}

Deno.test({
  name:
    "viewer in chromium: forks, node notes, live updates, hostile notes inert, guards, screenshots",
  ignore: !HAS_CHROMIUM && !IN_CI,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const { home, cleanup } = await tempHome();
    const client = await connect(home);
    let view: Awaited<ReturnType<typeof spawnView>> | null = null;
    let browser: Awaited<ReturnType<typeof launch>> | null = null;
    try {
      const driver = overMcp(client);
      const review = await seedForkedReview(driver);
      const hostile = await seedHostile(driver);
      view = await spawnView(home);
      browser = await launch();
      await Deno.mkdir(SHOTS, { recursive: true });
      const { context } = browser;
      const base = view.url.replace(/\/$/, "");
      const sessionUrl = `${base}/sessions/ses_${review.sessionId}`;
      const errors: string[] = [];
      const watch = (page: Page) => {
        page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
        page.on("console", (m) => {
          if (m.type() === "error") errors.push(`console: ${m.text()}`);
        });
      };

      await t.step("a session with a fork renders both branches", async () => {
        const page = await context.newPage();
        watch(page);
        await page.goto(sessionUrl);
        const rows = page.locator(".graph li");
        const count = Number(
          (await (await fetch(`${base}/api/sessions/ses_${review.sessionId}`)).json()).runs[0]
            .nodeCount,
        );
        assert.equal(await rows.count(), count);
        for (const tip of [review.oldTip, review.newTip]) {
          assert.ok(await page.locator(`#n-${placeOf(tip).nodeId}`).isVisible());
        }
        assert.equal(
          await page.locator(`#n-${placeOf(review.newTip).nodeId}`).getAttribute("data-branch"),
          "0",
        );
        assert.equal(
          await page.locator(`#n-${placeOf(review.oldTip).nodeId}`).getAttribute("data-branch"),
          "1",
        );
        assert.equal(await page.locator(".graph li[data-branch='1']").count() > 0, true);
        assert.equal(
          await page.locator(`#n-${placeOf(review.newTip).nodeId} .badge.tip`).count(),
          1,
        );
        assert.equal(await page.locator(".graph li.kind-checkpoint").count(), 1);
        assert.match(await page.locator(".runs").innerText(), /2 branches/);
        // the SVG draws the fork: lanes 0 and 1 both have nodes
        const lanes = await page.locator(
          ".graph svg circle.dot, .graph svg circle.hollow, .graph svg circle.done, .graph svg polygon",
        )
          .evaluateAll((
            els,
          ) => [
            ...new Set(
              els.map((e) => e.getAttribute("cx") ?? e.getAttribute("points")?.split(",")[0]),
            ),
          ]);
        assert.ok(lanes.length >= 2, `lanes drawn: ${lanes}`);
        await page.close();
      });

      await t.step("clicking a node shows its notes, in place, with a deep link", async () => {
        const page = await context.newPage();
        watch(page);
        await page.goto(sessionUrl);
        await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 42));
        assert.doesNotMatch(await page.locator("#node").innerText(), new RegExp(review.notedText));
        await page.locator(`#n-${review.notedNodeId} a`).click();
        await page.locator("#node").getByText(review.notedText).waitFor({ timeout: 10_000 });
        assert.match(
          page.url(),
          new RegExp(`/runs/run_${review.runId}/nodes/${review.notedNodeId}#node$`),
        );
        assert.equal(
          await page.evaluate(() => (window as unknown as { __marker?: number }).__marker),
          42,
          "no reload",
        );
        assert.equal(
          await page.locator(`#n-${review.notedNodeId}`).getAttribute("class"),
          "kind-step sel",
        );
        // the pending step's prompt is shown for the clicked node
        assert.match(await page.locator("#node .prompt").innerText(), /Review correctness/);
        // a deep link opens the same node directly
        await page.goto(`${sessionUrl}/runs/run_${review.runId}/nodes/${review.checkpointNodeId}`);
        assert.match(await page.locator("#node").innerText(), /halfway through the file map/);
        await page.close();
      });

      await t.step("the page updates live when another process advances the run", async () => {
        const page = await context.newPage();
        watch(page);
        await page.goto(sessionUrl);
        await page.locator("#live.on").waitFor({ timeout: 10_000 });
        await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 7));
        const before = await page.locator(".graph li").count();
        const next = await advance(
          driver,
          review.newTip,
          "Live: the tests step is done, seen without a reload.",
        );
        await page.locator(`#n-${placeOf(next).nodeId}`).waitFor({ timeout: 10_000 });
        assert.equal(await page.locator(".graph li").count(), before + 1);
        assert.equal(
          await page.evaluate(() => (window as unknown as { __marker?: number }).__marker),
          7,
          "no reload",
        );
        await page.locator("#node").getByText("seen without a reload").waitFor({ timeout: 10_000 });
        assert.equal(await page.locator(`#n-${placeOf(next).nodeId} .badge.tip`).count(), 1);
        // the sessions list updates live too
        const list = await context.newPage();
        watch(list);
        await list.goto(`${base}/`);
        await list.locator("#live.on").waitFor({ timeout: 10_000 });
        const started = await driver.start({
          workflowId: "waymark.bug_investigation",
          goal: "A third session, live",
        });
        assert.ok(started.stateToken);
        await list.getByText("A third session, live").waitFor({ timeout: 10_000 });
        await list.close();
        await page.close();
      });

      await t.step(
        "an agent's <script>, javascript: links and event attributes run nothing",
        async () => {
          const page = await context.newPage();
          const dialogs: string[] = [];
          const consoleLines: string[] = [];
          page.on("dialog", (d) => {
            dialogs.push(d.message());
            d.dismiss().catch(() => {});
          });
          page.on("console", (m) => consoleLines.push(m.text()));
          const hostileUrl = `${base}/sessions/ses_${hostile.sessionId}`;
          const root = (await (await fetch(
            `${base}/api/sessions/ses_${hostile.sessionId}/runs/run_${hostile.runId}/graph`,
          )).json())
            .nodes[0].nodeId;
          for (
            const url of [
              `${base}/`,
              hostileUrl,
              `${hostileUrl}/runs/run_${hostile.runId}/nodes/${hostile.nodeId}`,
              `${hostileUrl}/runs/run_${hostile.runId}/nodes/${root}`,
            ]
          ) {
            await page.goto(url);
            await page.waitForLoadState("networkidle").catch(() => {});
            // open every <details> and hover/click every link inside rendered notes
            await page.locator("details").evaluateAll((els) =>
              els.forEach((e) => e.setAttribute("open", ""))
            );
            for (const link of await page.locator(".md a").all()) {
              await link.hover().catch(() => {});
            }
            // (a string, evaluated in the page: the test's own types have no DOM)
            const dom = await page.evaluate(`(() => {
            const all = [...document.querySelectorAll("*")];
            return {
              xss: window.__xss ?? null,
              scripts: [...document.scripts].map((s) => s.getAttribute("src")),
              handlers: all.flatMap((el) => [...el.attributes]
                .filter((a) => a.name.toLowerCase().startsWith("on"))
                .map((a) => el.tagName + "[" + a.name + "]")),
              badLinks: [...document.querySelectorAll("a[href]")]
                .map((a) => a.getAttribute("href") || "")
                .filter((h) => /^\\s*(javascript|vbscript|data):/i.test(h)),
              embeds: document.querySelectorAll("img, iframe, object, embed, style").length,
              inlineStyles: document.querySelectorAll("[style]").length,
              shown: document.body.innerText.includes("<script>"),
            };
          })()`) as {
              xss: unknown;
              scripts: string[];
              handlers: string[];
              badLinks: string[];
              embeds: number;
              inlineStyles: number;
              shown: boolean;
            };
            assert.equal(dom.xss, null, `${url}: window.__xss was set`);
            assert.deepEqual(dom.scripts, ["/assets/app.js"], url);
            assert.deepEqual(dom.handlers, [], url);
            assert.deepEqual(dom.badLinks, [], url);
            assert.equal(dom.embeds, 0, url);
            assert.equal(dom.inlineStyles, 0, url);
            assert.ok(dom.shown, `${url}: the hostile text is shown as text`);
          }
          // the prompt filled with a hostile context value shows it as text
          assert.match(
            await page.locator("#node .prompt").innerText(),
            /javascript:window\.__xss='prompt'/,
          );
          assert.deepEqual(dialogs, []);
          assert.deepEqual(consoleLines.filter((l) => /XSS-RAN/.test(l)), []);
          if (SHOOTING) {
            await shoot(
              context,
              `${hostileUrl}/runs/run_${hostile.runId}/nodes/${hostile.nodeId}`,
              "hostile-notes",
            );
          }
          await page.close();
        },
      );

      await t.step(
        "'Download bundle' saves the session's bundle, which imports elsewhere",
        async () => {
          const page = await context.newPage();
          watch(page);
          await page.goto(sessionUrl);
          const [download] = await Promise.all([
            page.waitForEvent("download"),
            page.click("a.download-bundle"),
          ]);
          assert.equal(download.suggestedFilename(), `ses_${review.sessionId}.json`);
          const text = await Deno.readTextFile(await download.path());
          await page.close();
          const other = await tempHome();
          const waymark = await openWaymark({ home: other.home, dbUrl: other.dbUrl });
          try {
            const imported = await importBundle(waymark, text);
            assert.ok(imported.ok, JSON.stringify(imported));
            assert.equal(imported.value.sessionId, `ses_${review.sessionId}`);
            const again = await exportSession(waymark, imported.value.sessionId);
            assert.ok(
              again.ok && again.value.text === text,
              "the downloaded bundle is not the export",
            );
          } finally {
            await waymark.close();
            await other.cleanup();
          }
        },
      );

      await t.step("a foreign Host header gets 403 and a POST gets 405", async () => {
        const port = view!.port;
        assert.match(
          await rawRequest(
            port,
            `GET / HTTP/1.1\r\nHost: attacker.example:${port}\r\nConnection: close\r\n\r\n`,
          ),
          /^HTTP\/1\.1 403/,
        );
        assert.match(
          await rawRequest(
            port,
            `POST /sessions/ses_${review.sessionId} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
          ),
          /^HTTP\/1\.1 405/,
        );
        // from the page itself: a cross-origin-looking write is refused too
        const page = await context.newPage();
        await page.goto(`${base}/`);
        const status = await page.evaluate(async () =>
          (await fetch("/api/sessions", { method: "POST", body: "{}" })).status
        );
        assert.equal(status, 405);
        await page.close();
      });

      await t.step({
        name: "screenshots of the main pages, light and dark, laptop and phone",
        ignore: !SHOOTING,
        fn: async () => {
          await shoot(context, `${base}/`, "sessions-list");
          await shoot(context, sessionUrl, "session");
          await shoot(
            context,
            `${sessionUrl}/runs/run_${review.runId}/nodes/${review.notedNodeId}#node`,
            "node-detail",
          );
          const files = [...Deno.readDirSync(SHOTS)].map((e) => e.name);
          for (const name of ["sessions-list", "session", "node-detail"]) {
            for (const variant of ["laptop-light", "laptop-dark", "phone-light", "phone-dark"]) {
              assert.ok(files.includes(`${name}-${variant}.png`), `${name}-${variant}.png`);
            }
          }
        },
      });

      assert.deepEqual(errors, [], "no script errors in any page");
    } finally {
      await browser?.close();
      await client.close();
      if (view) await view.stop();
      await cleanup();
    }
  },
});
