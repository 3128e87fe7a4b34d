/**
 * Output files of any size over a real MCP client: a file past the per-call hashing budget is
 * recorded by size and modification time and the answer says so (a 3 GiB file included, which
 * is never a retryable error); too many paths in one call are refused with the cap; `""` and
 * `"."` are refused as not files; and the self-review file is never written through a
 * `.deepwork/tmp` link that leaves the project. The job file is written here, for these tests.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { err, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { connectDeepwork, MEMO_JOB, writeIn } from "../helpers/deepwork.ts";

const MiB = 1024 * 1024;

async function withMemo(
  body: (c: TestClient, at: { ws: string; db: string; outside: string }) => Promise<void>,
  extraArgs = ["--no-quality-gate"],
): Promise<void> {
  const home = await tempHome();
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-dw-files-" }));
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-dw-out-" }));
  await writeIn(ws, ".deepwork/jobs/memo/job.yml", MEMO_JOB);
  await writeIn(ws, ".deepwork/jobs/memo/steps/draft.md", "Draft the memo.\n");
  const c = await connectDeepwork(home.home, ws, { extraArgs });
  try {
    ok(await c.call("start_workflow", { goal: "memo", job_name: "memo", workflow_name: "write" }));
    await body(c, { ws, db: home.dbFile, outside });
  } finally {
    await c.close();
    await Deno.remove(ws, { recursive: true }).catch(() => {});
    await Deno.remove(outside, { recursive: true }).catch(() => {});
    await home.cleanup();
  }
}

/** A sparse file of `bytes` (no disk space taken). */
async function sparse(path: string, bytes: number): Promise<void> {
  const file = await Deno.open(path, { create: true, write: true });
  await file.truncate(bytes);
  file.close();
}

Deno.test("files past the hashing budget (a 3 GiB one too) are recorded by size and time, and the answer says so", async () => {
  await withMemo(async (c, { ws, db }) => {
    await writeIn(ws, "memo.md", "# Memo\n");
    await sparse(`${ws}/big.bin`, 3 * 1024 * MiB);
    await sparse(`${ws}/mid.bin`, 600 * MiB);
    const done = ok(
      await c.call("finished_step", {
        outputs: { "memo.md": "memo.md", attachments: ["big.bin", "mid.bin"] },
      }),
    );
    assert.equal(done.status, "workflow_complete");
    const unhashed = done.unhashed_files as { path: string; size: number; modified: string }[];
    assert.deepEqual(unhashed.map((f) => [f.path, f.size]), [
      ["big.bin", 3 * 1024 * MiB],
      ["mid.bin", 600 * MiB],
    ]);
    assert.ok(!Number.isNaN(Date.parse(unhashed[0]!.modified)));
    const client = createClient({ url: `file:${db}` });
    try {
      const rows = await client.execute("SELECT artifacts FROM outputs WHERE step_id = 'draft'");
      const [artifact] = JSON.parse(String(rows.rows[0]!.artifacts));
      const files = artifact.files as { path: string; sha256: string | null; modified?: string }[];
      assert.match(files[0]!.sha256!, /^[0-9a-f]{64}$/, "the small file is hashed");
      assert.deepEqual(files.slice(1).map((f) => [f.path, f.sha256, typeof f.modified]), [
        ["big.bin", null, "string"],
        ["mid.bin", null, "string"],
      ]);
    } finally {
      client.close();
    }
  });
});

Deno.test("more paths than one call takes are refused with the cap, not retryable", async () => {
  await withMemo(async (c) => {
    const many = Array.from({ length: 1001 }, (_, i) => `a/${i}.txt`);
    const e = err(
      await c.call("finished_step", { outputs: { "memo.md": "memo.md", attachments: many } }),
    );
    assert.equal(e.code, "INVALID_ARGUMENTS");
    assert.equal(e.retry.kind, "not_retryable");
    assert.deepEqual(e.details, { reason: "too_many_files", count: 1002, max: 1000 });
  });
});

Deno.test('"" and "." as output paths are refused as not files', async () => {
  await withMemo(async (c) => {
    const empty = err(await c.call("finished_step", { outputs: { "memo.md": "" } }));
    assert.equal(empty.code, "OUTPUT_INVALID");
    assert.match(empty.message, /empty path, not a file/);
    assert.doesNotMatch(empty.message, /outside/);
    const dot = err(await c.call("finished_step", { outputs: { "memo.md": "." } }));
    assert.match(dot.message, /is not a regular file \(it names the project root/);
    assert.doesNotMatch(dot.message, /outside/);
  });
});

Deno.test("the self-review file is never written through a .deepwork/tmp link that leaves the project", async () => {
  await withMemo(async (c, { ws, db, outside }) => {
    await Deno.symlink(outside, `${ws}/.deepwork/tmp`);
    await writeIn(ws, "memo.md", "# Memo\n");
    const e = err(await c.call("finished_step", { outputs: { "memo.md": "memo.md" } }));
    assert.equal(e.code, "OUTPUT_INVALID");
    assert.equal(e.retry.kind, "not_retryable");
    assert.match(e.message, /leads outside/);
    assert.deepEqual([...Deno.readDirSync(outside)], [], "nothing written outside");
    const client = createClient({ url: `file:${db}` });
    try {
      const rows = await client.execute("SELECT count(*) AS n FROM node_events");
      assert.equal(Number(rows.rows[0]!.n), 0, "no review recorded");
    } finally {
      client.close();
    }
    // a real folder works
    await Deno.remove(`${ws}/.deepwork/tmp`);
    const review = ok(await c.call("finished_step", { outputs: { "memo.md": "memo.md" } }));
    assert.equal(review.status, "needs_work");
    assert.match(review.feedback, /\.deepwork\/tmp\/quality_review_run_[0-9a-f]+_draft\.md/);
  }, []);
});

Deno.test("a job changed since the run started: the answers name the file and say a new start picks it up", async () => {
  await withMemo(async (c, { ws }) => {
    const unchanged = ok(await c.call("go_to_step", { step_id: "draft" }));
    assert.equal(unchanged.warnings, undefined);
    await writeIn(ws, ".deepwork/jobs/memo/steps/draft.md", "Draft the memo, in French.\n");
    const instr = ok(await c.call("go_to_step", { step_id: "draft" }));
    assert.equal(instr.warnings.length, 1);
    assert.equal(instr.warnings[0].code, "JOB_CHANGED_ON_DISK");
    assert.match(instr.warnings[0].message, /memo\/steps\/draft\.md`/);
    assert.match(instr.warnings[0].message, /a new start_workflow picks up the change/);
    assert.match(instr.begin_step.step_instructions, /^Draft the memo\.$/m, "the pinned version");
    await writeIn(ws, ".deepwork/jobs/memo/steps/draft.md", "Draft the memo.\n");
    await writeIn(
      ws,
      ".deepwork/jobs/memo/job.yml",
      MEMO_JOB.replace("The memo,", "The memo itself,"),
    );
    await writeIn(ws, "memo.md", "# Memo\n");
    const done = ok(await c.call("finished_step", { outputs: { "memo.md": "memo.md" } }));
    assert.equal(done.status, "workflow_complete");
    assert.match(done.warnings[0].message, /memo\/job\.yml`/);
  });
});

Deno.test("the DeepWork tools are held to the caps the default tools are: inputs, notes, outputs", async () => {
  await withMemo(async (c, { ws, db }) => {
    const big = "x".repeat(1024 * 1024);
    const refused = err(
      await c.call("start_workflow", {
        goal: "too big",
        job_name: "memo",
        workflow_name: "write",
        inputs: { blob: big },
      }),
    );
    assert.equal(refused.code, "INVALID_ARGUMENTS");
    assert.equal(refused.retry.kind, "not_retryable");
    assert.equal((refused.details as { reason: string }).reason, "context_budget_exceeded");
    await writeIn(ws, "memo.md", "# Memo\n");
    const notes = err(
      await c.call("finished_step", { outputs: { "memo.md": "memo.md" }, notes: big }),
    );
    assert.deepEqual(
      [notes.code, (notes.details as { reason: string; field: string }).field],
      ["INVALID_ARGUMENTS", "notes"],
    );
    assert.equal((notes.details as { reason: string }).reason, "too_large");
    const outputs = err(
      await c.call("finished_step", { outputs: { "memo.md": big.slice(0, 70_000) } }),
    );
    assert.deepEqual(outputs.details, {
      reason: "too_large",
      field: "outputs",
      bytes: 70_014,
      maxBytes: 65_536,
    });
    const client = createClient({ url: `file:${db}` });
    try {
      const runs = await client.execute("SELECT goal FROM runs");
      assert.deepEqual(runs.rows.map((r) => r.goal), ["memo"], "nothing stored");
      const outs = await client.execute("SELECT count(*) AS n FROM outputs");
      assert.equal(Number(outs.rows[0]!.n), 0);
    } finally {
      client.close();
    }
  });
});
