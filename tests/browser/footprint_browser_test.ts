/**
 * Each step's footprint in the viewer, in real headless Chromium: a run driven through a real
 * waymark MCP server in a real git repository, its host's transcript (a Claude Code session file
 * the test appends to, as the host would) read for tokens; a `waymark view` process on the same
 * home shows each step's duration, tokens, changed files and their diff (an agent's hostile line
 * stays text), and the branch's chart of time, change and tokens per step.
 */
import assert from "node:assert/strict";
import { appendFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { HAS_CHROMIUM, IN_CI, launch } from "../helpers/browser.ts";
import { gitRepo } from "../helpers/git_repo.ts";
import { placeOf } from "../helpers/answers.ts";
import { connect, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { spawnView } from "../helpers/viewer_fixture.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const STEPS = {
  id: "project.footprint",
  name: "Footprint",
  description: "Three steps that change files.",
  version: "1.0.0",
  steps: [
    { id: "add", title: "Add a file", prompt: "Add it." },
    { id: "edit", title: "Edit the app", prompt: "Edit it." },
    { id: "report", title: "Report", prompt: "Say what changed." },
  ],
};

const HOSTILE = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
const SESSION = "5d1f3c8e-2b7a-4c1e-9f0d-7a6b5c4d3e2f";

/** The host's transcript: one model call with the given usage, stamped now. */
async function modelCall(file: string, id: number, input: number): Promise<void> {
  await appendFile(
    file,
    `${
      JSON.stringify({
        type: "assistant",
        timestamp: new Date().toISOString(),
        sessionId: SESSION,
        message: {
          id: `msg_${id}`,
          content: [{ type: "text", text: "not kept" }],
          usage: { input_tokens: input, output_tokens: 7, cache_read_input_tokens: 100 },
        },
      })
    }\n`,
  );
}

async function ack(client: TestClient, from: Json, notes: string): Promise<Json> {
  return ok(
    await client.call("continue_workflow", {
      stateToken: from.stateToken,
      ackToken: from.ackToken,
      output: { notesMarkdown: notes },
    }),
  );
}

/** Drives the run: a new file, then an edit with a hostile line, then nothing. */
async function drive(repo: string, home: string, config: string) {
  const transcript = join(config, "projects", "-elsewhere", `${SESSION}.jsonl`);
  await mkdir(join(config, "projects", "-elsewhere"), { recursive: true });
  await Deno.writeTextFile(transcript, "");
  const client = await connect(home, {
    cwd: repo,
    env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: config, WAYMARK_SNAPSHOTS: "1" },
  });
  try {
    const started = ok(await client.call("start_workflow", { workflowId: STEPS.id }));
    await Deno.writeTextFile(join(repo, "added.txt"), "one\ntwo\n");
    await modelCall(transcript, 1, 1000);
    const added = await ack(client, started, "Added a file.");
    await Deno.writeTextFile(join(repo, "app.ts"), `export const a = 2;\n// ${HOSTILE}\n`);
    await modelCall(transcript, 2, 2000);
    await modelCall(transcript, 3, 3000);
    const edited = await ack(client, added, "Edited the app.");
    await modelCall(transcript, 4, 500);
    const reported = await ack(client, edited, "Reported.");
    return {
      sessionId: started.session.sessionId as string,
      runId: placeOf(started).runId,
      addedNode: placeOf(added).nodeId,
      editedNode: placeOf(edited).nodeId,
      reportedNode: placeOf(reported).nodeId,
    };
  } finally {
    await client.close();
  }
}

Deno.test({
  name: "viewer in chromium: each step's duration, tokens, changed files, diff and the chart",
  ignore: !HAS_CHROMIUM && !IN_CI,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const repo = await gitRepo({ "app.ts": "export const a = 1;\n", ".gitignore": "ignored/\n" });
    const { home, cleanup } = await tempHome();
    const config = await Deno.makeTempDir({ prefix: "waymark-claude-config-" });
    let view: Awaited<ReturnType<typeof spawnView>> | null = null;
    let browser: Awaited<ReturnType<typeof launch>> | null = null;
    try {
      await mkdir(join(repo.dir, ".waymark", "workflows"), { recursive: true });
      await Deno.writeTextFile(
        join(repo.dir, ".waymark", "workflows", "footprint.json"),
        JSON.stringify(STEPS),
      );
      const drove = await drive(repo.dir, home, config);
      view = await spawnView(home);
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
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      await browser?.close();
      await view?.stop();
      await cleanup();
      await repo.cleanup();
      await Deno.remove(config, { recursive: true }).catch(() => {});
    }
  },
});
