/**
 * The DeepWork profile as a DeepWork configuration starts it: the server is named `deepwork`,
 * and `--external-runner claude` reviews through the `claude` CLI on PATH (a stand-in written
 * for the tests that answers in Claude Code's JSON output mode): a pass, a failed review with
 * its feedback, an error result as REVIEWER_FAILED, and at most five files inlined per review.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { connectRich, err, ok, tempHome } from "../helpers/server.ts";
import { MEMO_JOB, writeIn } from "../helpers/deepwork.ts";

const STAND_IN = fileURLToPath(new URL("../fixtures/deepwork/claude_stand_in.ts", import.meta.url));

Deno.test("serverInfo.name is deepwork; --external-runner claude reviews through the claude CLI's JSON output", async () => {
  const home = await tempHome();
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-dw-claude-" }));
  const bin = await Deno.makeTempDir({ prefix: "waymark-bin-" });
  const log = `${bin}/claude.log`;
  await Deno.writeTextFile(
    `${bin}/claude`,
    `#!/bin/sh\nexec '${Deno.execPath()}' run -A --quiet '${STAND_IN}' "$@"\n`,
  );
  await Deno.chmod(`${bin}/claude`, 0o755);
  await writeIn(ws, ".deepwork/jobs/memo/job.yml", MEMO_JOB);
  await writeIn(ws, ".deepwork/jobs/memo/steps/draft.md", "Draft the memo.\n");
  const c = await connectRich(home.home, {
    cwd: ws,
    extraArgs: ["--profile", "deepwork", "--external-runner", "claude"],
    env: { PATH: `${bin}:${Deno.env.get("PATH")}`, CLAUDE_LOG: log },
  });
  try {
    assert.equal(c.client.getServerVersion()?.name, "deepwork");
    const start = { goal: "memo", job_name: "memo", workflow_name: "write" };
    ok(await c.call("start_workflow", start));
    await writeIn(ws, "memo.md", "# Memo\nSLOPPY and long.\n");
    const attachments = [1, 2, 3, 4, 5, 6].map((i) => `a${i}.txt`);
    for (const a of attachments) await writeIn(ws, a, `attachment ${a}\n`);
    const outputs = { "memo.md": "memo.md", attachments };
    const sent = ok(await c.call("finished_step", { outputs }));
    assert.equal(sent.status, "needs_work");
    assert.match(sent.feedback, /The memo rambles/);
    const text = await Deno.readTextFile(log);
    assert.match(text, /^ARGS -p --output-format json$/m);
    assert.ok(text.includes("attachment a4.txt"), "files are inlined");
    assert.ok(!text.includes("attachment a5.txt"), "five files at most: memo.md and a1..a4");
    await writeIn(ws, "memo.md", "# Memo\nBROKEN model.\n");
    const broken = err(await c.call("finished_step", { outputs }));
    assert.equal(broken.code, "REVIEWER_FAILED");
    assert.match(broken.message, /claude answered with an error: overloaded/);
    await writeIn(ws, "memo.md", "# Memo\nShort.\n");
    const done = ok(await c.call("finished_step", { outputs }));
    assert.equal(done.status, "workflow_complete");
  } finally {
    await c.close();
    await Deno.remove(ws, { recursive: true }).catch(() => {});
    await Deno.remove(bin, { recursive: true }).catch(() => {});
    await home.cleanup();
  }
});
