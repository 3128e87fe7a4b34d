/**
 * The DeepWork profile's quality gate over MCP: self-review (instructions written under
 * `.deepwork/tmp/`, then an override reason recorded as a gap) and an external reviewer (a
 * program written for the test) that passes, fails, fails then passes, runs out of attempts,
 * crashes, prints garbage or times out. Errors are errors, never passes.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { err, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { connectDeepwork, jobWorkspace, reviewCommand, writeIn } from "../helpers/deepwork.ts";

/**
 * A server with `extraArgs` (and `env` beside this process's), a quick release_notes run at its
 * publish step, and `body`.
 */
async function atPublish(
  extraArgs: string[],
  body: (c: TestClient, at: { ws: string; db: string; sessionId: string }) => Promise<void>,
  options: { env?: Record<string, string> } = {},
): Promise<void> {
  const home = await tempHome();
  const ws = await jobWorkspace(["release_notes"]);
  const c = await connectDeepwork(home.home, ws.dir, { extraArgs, env: options.env });
  try {
    const started = ok(
      await c.call("start_workflow", {
        goal: "g",
        job_name: "release_notes",
        workflow_name: "quick",
      }),
    );
    await writeIn(ws.dir, "changes.md", "- one change\n");
    ok(await c.call("finished_step", { outputs: { "changes.md": "changes.md" } }));
    await writeIn(ws.dir, "release.md", "# Release\n\n- one change\n");
    await body(c, { ws: ws.dir, db: home.dbFile, sessionId: started.begin_step.session_id });
  } finally {
    await c.close();
    await ws.cleanup();
    await home.cleanup();
  }
}

const PUBLISH = { outputs: { "release.md": "release.md" } };

async function events(db: string, kind: string): Promise<Record<string, unknown>[]> {
  const client = createClient({ url: `file:${db}` });
  try {
    const rows = await client.execute({
      sql: "SELECT payload FROM events WHERE kind = ? ORDER BY seq",
      args: [kind],
    });
    return rows.rows.map((r) => JSON.parse(String(r.payload)));
  } finally {
    client.close();
  }
}

Deno.test("self-review: instructions in .deepwork/tmp, then the override reason is recorded as a gap", async () => {
  await atPublish([], async (c, { ws, db, sessionId }) => {
    const first = ok(await c.call("finished_step", PUBLISH));
    assert.equal(first.status, "needs_work");
    const file = `${ws}/.deepwork/tmp/quality_review_${sessionId}_publish.md`;
    assert.ok(first.feedback.includes(file), first.feedback);
    assert.match(first.feedback, /sub-agent/);
    assert.match(first.feedback, /quality_review_override_reason/);
    const text = await Deno.readTextFile(file);
    assert.match(text, /\*\*Complete\*\*: Every change in changes\.md appears in the notes\./);
    assert.match(text, /\*\*Titled\*\*/);
    assert.match(text, /Read changes\.md first\./);
    assert.match(text, /`release\.md`/);
    assert.deepEqual(first.stack.map((s: { step: string }) => s.step), ["publish"]);
    const done = ok(
      await c.call("finished_step", {
        ...PUBLISH,
        quality_review_override_reason: "A sub-agent reviewed it: all criteria met.",
      }),
    );
    assert.equal(done.status, "workflow_complete");
    const gaps = await events(db, "gap_recorded");
    assert.equal(gaps.length, 1);
    assert.equal(gaps[0]!.code, "QUALITY_REVIEW_OVERRIDDEN");
    assert.equal(gaps[0]!.message, "A sub-agent reviewed it: all criteria met.");
    const reviews = await events(db, "review_recorded");
    assert.deepEqual(reviews.map((r) => [r.reviewer, r.verdict, r.file]), [[
      "self",
      "requested",
      file,
    ]]);
  });
});

Deno.test("--no-quality-gate: steps with reviews finish without one", async () => {
  await atPublish(["--no-quality-gate"], async (c) => {
    assert.equal(ok(await c.call("finished_step", PUBLISH)).status, "workflow_complete");
  });
});

Deno.test("external reviewer that passes: one run per review, the file inlined in its prompt", async () => {
  const log = await Deno.makeTempFile();
  try {
    await atPublish(["--review-command", reviewCommand("pass")], async (c, { db }) => {
      const done = ok(await c.call("finished_step", PUBLISH));
      assert.equal(done.status, "workflow_complete");
      const prompts = (await Deno.readTextFile(log)).split("\n=====\n").filter((p) => p.trim());
      assert.equal(prompts.length, 2, "the step review and the release.md review");
      assert.match(prompts[0]!, /\*\*Plain\*\*: No marketing language\./);
      assert.match(prompts[0]!, /# Release\n\n- one change/);
      assert.match(prompts[1]!, /\*\*Titled\*\*/);
      const reviews = await events(db, "review_recorded");
      assert.deepEqual(reviews.map((r) => [r.reviewer, r.verdict, r.attempt]), [[
        "external",
        "passed",
        1,
      ]]);
      assert.deepEqual((reviews[0]!.criteria as unknown[]).length, 2);
    }, { env: { REVIEW_LOG: log } });
  } finally {
    await Deno.remove(log);
  }
});

Deno.test("external reviewer that fails, then passes: needs_work with its feedback, then on", async () => {
  const counter = await Deno.makeTempFile();
  await Deno.remove(counter);
  await atPublish(
    ["--review-command", reviewCommand("fail-then-pass", counter)],
    async (c, { db }) => {
      const first = ok(await c.call("finished_step", PUBLISH));
      assert.equal(first.status, "needs_work");
      assert.match(first.feedback, /First try misses the heading\./);
      const second = ok(await c.call("finished_step", PUBLISH));
      assert.equal(second.status, "workflow_complete");
      const reviews = await events(db, "review_recorded");
      assert.deepEqual(reviews.map((r) => [r.verdict, r.attempt]), [["failed", 1], ["passed", 2]]);
    },
  );
  await Deno.remove(counter).catch(() => {});
});

Deno.test("external reviewer that keeps failing: at the attempt limit the call fails with the feedback", async () => {
  await atPublish(
    ["--review-command", reviewCommand("fail"), "--quality-gate-max-attempts", "2"],
    async (c) => {
      const first = ok(await c.call("finished_step", PUBLISH));
      assert.equal(first.status, "needs_work");
      assert.match(first.feedback, /The heading is missing\./);
      const second = err(await c.call("finished_step", PUBLISH));
      assert.equal(second.code, "QUALITY_GATE_FAILED");
      assert.match(second.message, /after 2 attempt\(s\), the maximum of 2 attempts exceeded/);
      assert.match(second.message, /The heading is missing\./);
    },
  );
});

for (
  const [mode, extra, pattern] of [
    ["crash", [], /exited with status 3: reviewer blew up/],
    ["garbage", [], /printed no JSON verdict.*I think it is fine/],
    ["slow", ["--quality-gate-timeout", "1"], /timed out after 1000 ms/],
  ] as const
) {
  Deno.test(`external reviewer that ${mode === "slow" ? "times out" : mode === "crash" ? "crashes" : "prints garbage"}: a clear error, never a pass`, async () => {
    await atPublish(["--review-command", reviewCommand(mode), ...extra], async (c, { db }) => {
      const failed = err(await c.call("finished_step", PUBLISH));
      assert.equal(failed.code, "REVIEWER_FAILED");
      assert.match(failed.message, pattern);
      assert.equal(failed.retry.kind, "retryable_immediate");
      const reviews = await events(db, "review_recorded");
      assert.deepEqual(reviews.map((r) => r.verdict), ["error"]);
      const advanced = await events(db, "advance_recorded");
      assert.equal(advanced.length, 1, "only the first step advanced");
    });
  });
}
