/**
 * The DeepWork profile over MCP, with the v1 (stdio) and v2 clients, through job files written for
 * these tests in both formats: discovery and load errors, single- and multi-workflow jobs,
 * file, files and string outputs, every output validation error, json_schema, nested
 * workflows three deep with an abort in the middle, go_to_step as a fork, replays, and the
 * session_id and agent_id semantics.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createClient } from "@libsql/client";
import { err, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { connectDeepwork, jobWorkspace, writeIn } from "../helpers/deepwork.ts";

const NO_GATE = ["--no-quality-gate"];

async function withServer(
  version: "v1" | "v2",
  body: (c: TestClient, at: { ws: string; db: string }) => Promise<void>,
  extraArgs: string[] = NO_GATE,
): Promise<void> {
  const home = await tempHome();
  const ws = await jobWorkspace();
  const c = await connectDeepwork(home.home, ws.dir, { client: version, extraArgs });
  try {
    await body(c, { ws: ws.dir, db: home.dbFile });
  } finally {
    await c.close();
    await ws.cleanup();
    await home.cleanup();
  }
}

async function query(db: string, sql: string, args: unknown[] = []) {
  const client = createClient({ url: `file:${db}` });
  try {
    return (await client.execute({ sql, args: args as never })).rows;
  } finally {
    client.close();
  }
}

/** What each client line proves on one DeepWork server (the second leaves the stack empty). */
const LINE_CASES: [string, (c: TestClient) => Promise<void>][] = [
  [
    "the profile lists exactly DeepWork's eleven tools, and get_workflows both formats and load errors",
    async (c) => {
      const tools = (await c.listTools()).tools.map((t) => t.name);
      assert.deepEqual(tools, [
        "get_workflows",
        "start_workflow",
        "finished_step",
        "abort_workflow",
        "go_to_step",
        "get_review_instructions",
        "get_configured_reviews",
        "mark_review_as_passed",
        "register_session_job",
        "get_session_job",
        "get_named_schemas",
      ]);
      const listed = ok(await c.call("get_workflows", {}));
      const names = listed.jobs.map((j: { name: string }) => j.name);
      assert.deepEqual(names, ["empty", "nest", "release_notes", "research", "tidy", "waymark"]);
      const rn = listed.jobs.find((j: { name: string }) => j.name === "release_notes");
      assert.deepEqual(rn, {
        name: "release_notes",
        summary: "Turn merged changes into release notes",
        workflows: [
          { name: "full", summary: "Gather, draft for both audiences at once, publish" },
          { name: "quick", summary: "Gather and publish" },
        ],
      });
      const errors = listed.errors as { job_name: string; job_dir: string; error: string }[];
      assert.deepEqual(errors.map((e) => e.job_name), ["broken", "missing_instr"]);
      assert.match(errors[0]!.error, /YAML syntax error/);
      assert.match(errors[0]!.job_dir, /\.deepwork\/jobs\/broken$/);
      assert.match(errors[1]!.error, /instruction file.*steps\/nowhere\.md/);
    },
  ],
  ["start_workflow picks the job's workflow or says which names exist", async (c) => {
    const unknownJob = err(
      await c.call("start_workflow", { goal: "g", job_name: "nope", workflow_name: "x" }),
    );
    assert.equal(unknownJob.code, "WORKFLOW_NOT_FOUND");
    assert.match(unknownJob.message, /Job `nope` not found\. Available jobs: empty, nest/);
    const unknownWf = err(
      await c.call("start_workflow", {
        goal: "g",
        job_name: "release_notes",
        workflow_name: "x",
      }),
    );
    assert.match(unknownWf.message, /Available workflows: full, quick/);
    const noSteps = err(
      await c.call("start_workflow", { goal: "g", job_name: "empty", workflow_name: "nothing" }),
    );
    assert.match(noSteps.message, /has no steps/);
    const broken = err(
      await c.call("start_workflow", { goal: "g", job_name: "broken", workflow_name: "x" }),
    );
    assert.match(broken.message, /failed to load/);
    // one workflow: auto-selected whatever the name
    const started = ok(
      await c.call("start_workflow", {
        goal: "tidy up",
        job_name: "tidy",
        workflow_name: "whatever",
      }),
    );
    assert.equal(started.begin_step.step_id, "note");
    assert.deepEqual(started.stack.map((s: { workflow: string }) => s.workflow), ["tidy/only"]);
    assert.deepEqual(started.begin_step.step_expected_outputs, [
      {
        name: "summary_text",
        type: "string",
        description: "A sentence",
        required: true,
        syntax_for_finished_step_tool: "string value",
      },
      {
        name: "log",
        type: "file_path",
        description: "A log file",
        required: false,
        syntax_for_finished_step_tool: "filepath or array of filepaths",
      },
    ]);
    // a string output is text, not a file
    const done = ok(
      await c.call("finished_step", { outputs: { summary_text: "Tidied the desk." } }),
    );
    assert.equal(done.status, "workflow_complete");
    assert.deepEqual(done.all_outputs, { summary_text: "Tidied the desk." });
    assert.deepEqual(done.stack, []);
    const none = err(await c.call("finished_step", { outputs: {} }));
    assert.equal(none.code, "NO_ACTIVE_WORKFLOW");
  }],
];

for (const version of ["v1", "v2"] as const) {
  // one server per line, not per case: the first case only reads (for v1, one process start)
  Deno.test(`${version}: the DeepWork tools and start_workflow's choice of workflow`, async (t) => {
    await withServer(version, async (c) => {
      for (const [name, run] of LINE_CASES) await t.step(name, () => run(c));
    });
  });
}

Deno.test("every output validation error, in DeepWork's words", async () => {
  await withServer("v2", async (c, { ws }) => {
    ok(
      await c.call("start_workflow", {
        goal: "g",
        job_name: "release_notes",
        workflow_name: "full",
      }),
    );
    const fails = async (outputs: Record<string, unknown>) => {
      const e = err(await c.call("finished_step", { outputs }));
      assert.equal(e.code, "OUTPUT_INVALID");
      return e.message;
    };
    assert.match(
      await fails({ "changes.md": "c.md", bogus: "x", also: "y" }),
      /Unknown output name\(s\) `also`, `bogus` for step `gather`\. Valid output names: `changes\.md`\./,
    );
    assert.match(await fails({}), /Missing required output\(s\) `changes\.md`/);
    assert.match(
      await fails({ "changes.md": ["a", "b"] }),
      /declared `type: file`.*single file path.*got a list\. Type mismatch/,
    );
    assert.match(
      await fails({ "changes.md": "c.md" }),
      /file `c\.md` does not exist.*relative to the project root/,
    );
    assert.match(await fails({ "changes.md": "../outside.md" }), /outside the project root/);
    assert.match(await fails({ "changes.md": "/etc/hostname" }), /outside the project root/);
    await Deno.symlink("/etc/hostname", `${ws}/link.md`);
    assert.match(await fails({ "changes.md": "link.md" }), /outside the project root/);
    await Deno.mkdir(`${ws}/adir`);
    assert.match(await fails({ "changes.md": "adir" }), /is not a regular file/);
    await writeIn(ws, "c.md", "- a change\n");
    const next = ok(await c.call("finished_step", { outputs: { "changes.md": "c.md" } }));
    assert.equal(next.begin_step.step_id, "draft_user");
    // the concurrent group: both steps' outputs, the files type
    assert.match(next.begin_step.step_instructions, /## Concurrent steps/);
    assert.match(next.begin_step.step_instructions, /Task tool/);
    assert.deepEqual(
      next.begin_step.step_expected_outputs.map((o: { name: string }) => o.name),
      ["user_notes", "dev_notes", "extras"],
    );
    await writeIn(ws, "u.md", "users\n");
    assert.match(
      await fails({ user_notes: "u.md", dev_notes: "d.md" }),
      /`dev_notes` is declared `type: files` and takes a list of file paths.*got a string\. Type mismatch/,
    );
    assert.match(
      await fails({ user_notes: "u.md", dev_notes: ["d.md", 3] }),
      /every element must be a file path string; element 1 is a number/,
    );
    assert.match(
      await fails({ user_notes: "u.md", dev_notes: ["dev/a.md"] }),
      /`dev\/a\.md` does not exist/,
    );
  });
});

Deno.test("file, files and string outputs are recorded with size and SHA-256; an identical retry replays without reading files", async () => {
  await withServer("v2", async (c, { ws, db }) => {
    ok(
      await c.call("start_workflow", {
        goal: "notes 1.2",
        job_name: "release_notes",
        workflow_name: "full",
      }),
    );
    await writeIn(ws, "changes.md", "- fix parser\n");
    ok(
      await c.call("finished_step", { outputs: { "changes.md": "changes.md" }, notes: "gathered" }),
    );
    await writeIn(ws, "user.md", "Parser fixed.\n");
    await writeIn(ws, "dev/parser.md", "Parser: off-by-one.\n");
    await writeIn(ws, "dev/lexer.md", "Lexer: unchanged.\n");
    const args = {
      outputs: { user_notes: "user.md", dev_notes: ["dev/parser.md", "dev/lexer.md"] },
      work_summary: "drafted both",
    };
    const first = await c.call("finished_step", args);
    assert.equal(ok(first).begin_step.step_id, "publish");
    // the files are gone: a retry must not look at them, and returns the same bytes
    await Deno.remove(`${ws}/dev`, { recursive: true });
    await Deno.remove(`${ws}/user.md`);
    const retry = await c.call("finished_step", args);
    assert.deepEqual(retry.structuredContent, first.structuredContent);
    assert.equal(retry.content[0]!.text, first.content[0]!.text);
    const rows = await query(
      db,
      "SELECT artifacts, notes_markdown FROM outputs WHERE step_id = 'draft_user'",
    );
    assert.equal(rows.length, 1, "one advance, not two");
    assert.equal(rows[0]!.notes_markdown, "drafted both");
    const [artifact] = JSON.parse(String(rows[0]!.artifacts));
    const sha = (t: string) => createHash("sha256").update(t).digest("hex");
    assert.deepEqual(artifact, {
      kind: "wr.job_outputs",
      outputs: args.outputs,
      files: [
        { output: "user_notes", path: "user.md", size: 14, sha256: sha("Parser fixed.\n") },
        {
          output: "dev_notes",
          path: "dev/parser.md",
          size: 20,
          sha256: sha("Parser: off-by-one.\n"),
        },
        { output: "dev_notes", path: "dev/lexer.md", size: 18, sha256: sha("Lexer: unchanged.\n") },
      ],
    });
    await writeIn(ws, "release.md", "# 1.2\n");
    const done = ok(await c.call("finished_step", { outputs: { "release.md": "release.md" } }));
    assert.equal(done.status, "workflow_complete");
    assert.deepEqual(done.all_outputs, {
      "changes.md": "changes.md",
      user_notes: "user.md",
      dev_notes: ["dev/parser.md", "dev/lexer.md"],
      "release.md": "release.md",
    });
    // and the completing call replays too, though the run left the stack
    const again = ok(await c.call("finished_step", { outputs: { "release.md": "release.md" } }));
    assert.deepEqual(again, done);
    const runs = await query(db, "SELECT status FROM runs");
    assert.deepEqual(runs.map((r) => r.status), ["complete"]);
  });
});

Deno.test("json_schema on a file argument, a nested sub-workflow, and the workflow-map format", async () => {
  await withServer("v1", async (c, { ws }) => {
    const started = ok(
      await c.call("start_workflow", {
        goal: "research tides",
        job_name: "research",
        workflow_name: "deep",
        inputs: { topic: "tides" },
      }),
    );
    const first = started.begin_step;
    assert.equal(first.step_id, "find_sources");
    assert.match(first.step_instructions, /Search for sources on tides/);
    assert.match(first.step_instructions, /Prefer primary sources/);
    assert.equal(first.common_job_info, "Work in the docs/ folder.");
    await writeIn(ws, "docs/sources.yml", "sources: []\n");
    const bad = ok(await c.call("finished_step", { outputs: { sources: "docs/sources.yml" } }));
    assert.equal(bad.status, "needs_work");
    assert.match(bad.feedback, /must match its json_schema: `sources`: .*(minItems|fewer|items)/i);
    await writeIn(ws, "docs/sources.json", '{"sources": [{"title": "no url"}]}');
    const bad2 = ok(await c.call("finished_step", { outputs: { sources: "docs/sources.json" } }));
    assert.match(bad2.feedback, /`sources\.0`: .*url/);
    await writeIn(ws, "docs/sources.yml", "sources:\n  - url: https://example.org/tides\n");
    const outline = ok(await c.call("finished_step", { outputs: { sources: "docs/sources.yml" } }));
    assert.equal(outline.begin_step.step_id, "make_outline");
    assert.match(
      outline.begin_step.step_instructions,
      /start_workflow with job_name `research` and workflow_name `outline`/,
    );
    const nested = ok(
      await c.call("start_workflow", {
        goal: "outline",
        job_name: "research",
        workflow_name: "outline",
      }),
    );
    assert.notEqual(nested.begin_step.session_id, first.session_id, "each workflow its own id");
    assert.deepEqual(
      nested.stack.map((s: { workflow: string; step: string }) => `${s.workflow}@${s.step}`),
      [
        "research/deep@make_outline",
        "research/outline@draft_outline",
      ],
    );
    const back = ok(await c.call("finished_step", { outputs: { outline: "1. Moon 2. Sun" } }));
    assert.equal(back.status, "workflow_complete");
    assert.match(back.summary, /Back in `research\/deep` at step `make_outline`/);
    assert.deepEqual(back.stack.map((s: { step: string }) => s.step), ["make_outline"]);
    const report = ok(await c.call("finished_step", { outputs: {} }));
    assert.equal(report.begin_step.step_id, "write_report");
    assert.deepEqual(report.begin_step.step_reviews, [{
      run_each: "report",
      quality_criteria: {},
      additional_review_guidance: "The report answers the topic and cites at least one source.",
      strategy: "individual",
    }]);
    await writeIn(ws, "docs/report.md", "# Tides\n");
    const done = ok(await c.call("finished_step", { outputs: { report: "docs/report.md" } }));
    assert.equal(done.status, "workflow_complete");
    assert.equal(done.post_workflow_instructions, "Tell the user where the report is.");
  });
});

Deno.test("three workflows deep, an abort in the middle, and the run statuses it leaves", async () => {
  await withServer("v2", async (c, { ws, db }) => {
    const none = err(await c.call("abort_workflow", { explanation: "nothing to abort" }));
    assert.equal(none.code, "NO_ACTIVE_WORKFLOW");
    ok(await c.call("start_workflow", { goal: "outer", job_name: "nest", workflow_name: "outer" }));
    ok(
      await c.call("start_workflow", { goal: "middle", job_name: "nest", workflow_name: "middle" }),
    );
    const three = ok(
      await c.call("start_workflow", { goal: "inner", job_name: "nest", workflow_name: "inner" }),
    );
    assert.deepEqual(
      three.stack.map((s: { workflow: string; step: string }) => `${s.workflow}@${s.step}`),
      [
        "nest/outer@outer_start",
        "nest/middle@middle_start",
        "nest/inner@inner_only",
      ],
    );
    await writeIn(ws, "mark.txt", "x");
    const innerDone = ok(await c.call("finished_step", { outputs: { mark: "mark.txt" } }));
    assert.equal(innerDone.status, "workflow_complete");
    assert.deepEqual(innerDone.stack.map((s: { step: string }) => s.step), [
      "outer_start",
      "middle_start",
    ]);
    const aborted = ok(await c.call("abort_workflow", { explanation: "the middle is not needed" }));
    assert.deepEqual(aborted, {
      aborted_workflow: "nest/middle",
      aborted_step: "middle_start",
      explanation: "the middle is not needed",
      stack: [{ workflow: "nest/outer", step: "outer_start", run_id: three.stack[0].run_id }],
      resumed_workflow: "nest/outer",
      resumed_step: "outer_start",
    });
    const next = ok(await c.call("finished_step", { outputs: {} }));
    assert.equal(next.begin_step.step_id, "outer_end");
    const done = ok(await c.call("finished_step", { outputs: { mark: "mark.txt" } }));
    assert.equal(done.status, "workflow_complete");
    const runs = await query(
      db,
      `SELECT r.goal, r.status, l.parent_run_id, p.goal AS parent_goal FROM runs r
       JOIN run_links l ON l.run_id = r.run_id LEFT JOIN runs p ON p.run_id = l.parent_run_id
       ORDER BY l.created_seq`,
    );
    assert.deepEqual(runs.map((r) => [r.goal, r.status, r.parent_goal]), [
      ["outer", "complete", null],
      ["middle", "aborted", "outer"],
      ["inner", "complete", "middle"],
    ]);
    const sessions = await query(db, "SELECT count(*) AS n FROM sessions");
    assert.equal(Number(sessions[0]!.n), 1, "nested runs share the session");
    const abortEvent = await query(db, "SELECT payload FROM events WHERE kind = 'run_aborted'");
    assert.equal(
      JSON.parse(String(abortEvent[0]!.payload)).explanation,
      "the middle is not needed",
    );
  });
});

Deno.test("go_to_step forks back to an earlier step; the old branch and its outputs stay", async () => {
  await withServer("v2", async (c, { ws, db }) => {
    ok(
      await c.call("start_workflow", {
        goal: "quick",
        job_name: "release_notes",
        workflow_name: "quick",
      }),
    );
    await writeIn(ws, "changes.md", "- first try\n");
    ok(await c.call("finished_step", { outputs: { "changes.md": "changes.md" }, notes: "first" }));
    const unknown = err(await c.call("go_to_step", { step_id: "nope" }));
    assert.equal(unknown.code, "STEP_NOT_FOUND");
    assert.match(unknown.message, /Steps: gather, publish/);
    const here = ok(await c.call("go_to_step", { step_id: "publish" }));
    assert.deepEqual(here.invalidated_steps, []);
    const back = ok(await c.call("go_to_step", { step_id: "gather" }));
    assert.equal(back.begin_step.step_id, "gather");
    assert.deepEqual(back.invalidated_steps, ["gather"]);
    assert.deepEqual(back.stack.map((s: { step: string }) => s.step), ["gather"]);
    const ahead = err(await c.call("go_to_step", { step_id: "publish" }));
    assert.match(ahead.message, /not behind the current step `gather`/);
    await writeIn(ws, "changes.md", "- second try\n");
    ok(await c.call("finished_step", { outputs: { "changes.md": "changes.md" }, notes: "second" }));
    const notes = await query(
      db,
      `SELECT o.notes_markdown FROM outputs o JOIN nodes n USING (run_id, node_id)
       WHERE o.step_id = 'gather' AND n.node_kind = 'step' ORDER BY o.created_seq`,
    );
    assert.deepEqual(notes.map((n) => n.notes_markdown), ["first", "second"]);
    const root = await query(
      db,
      "SELECT node_kind FROM nodes WHERE parent_id = (SELECT node_id FROM nodes WHERE parent_id IS NULL) ORDER BY created_seq",
    );
    assert.deepEqual(root.map((r) => r.node_kind), ["step", "checkpoint"], "a fork at the root");
  });
});

Deno.test("session_id picks a session; agent_id keeps a sub-agent's own stack", async () => {
  await withServer("v2", async (c, { ws }) => {
    const main = ok(
      await c.call("start_workflow", {
        goal: "main",
        job_name: "release_notes",
        workflow_name: "quick",
      }),
    );
    const sid = main.begin_step.session_id;
    const sub = ok(
      await c.call("start_workflow", {
        goal: "helper",
        job_name: "tidy",
        workflow_name: "only",
        agent_id: "helper-1",
      }),
    );
    assert.notEqual(sub.begin_step.session_id, sid);
    assert.deepEqual(sub.stack.map((s: { workflow: string }) => s.workflow), ["tidy/only"]);
    const unknown = err(
      await c.call("finished_step", { outputs: {}, session_id: "ses_00000000000000ff" }),
    );
    assert.equal(unknown.code, "NO_ACTIVE_WORKFLOW");
    const subDone = ok(
      await c.call("finished_step", { outputs: { summary_text: "done" }, agent_id: "helper-1" }),
    );
    assert.equal(subDone.status, "workflow_complete");
    await writeIn(ws, "changes.md", "- x\n");
    const mainNext = ok(
      await c.call("finished_step", { outputs: { "changes.md": "changes.md" }, session_id: sid }),
    );
    assert.equal(mainNext.begin_step.step_id, "publish");
    assert.deepEqual(mainNext.stack.map((s: { workflow: string }) => s.workflow), [
      "release_notes/quick",
    ]);
  });
});

Deno.test("identical calls: a retry (same notes, or outputs that do not fit the next step) replays; otherwise a new call", async () => {
  await withServer("v2", async (c) => {
    ok(await c.call("start_workflow", { goal: "m", job_name: "nest", workflow_name: "middle" }));
    const first = ok(await c.call("finished_step", { outputs: {}, notes: "started" }));
    assert.equal(first.begin_step.step_id, "middle_end");
    const retry = ok(await c.call("finished_step", { outputs: {}, notes: "started" }));
    assert.deepEqual(retry, first, "same notes: the recorded answer");
    ok(await c.call("go_to_step", { step_id: "middle_start" }));
    const bare = ok(await c.call("finished_step", { outputs: {} }));
    assert.equal(bare.begin_step.step_id, "middle_end");
    // no notes, and `{}` fits middle_end as well: a new call, which finishes the run
    const done = ok(await c.call("finished_step", { outputs: {} }));
    assert.equal(done.status, "workflow_complete");
  });
});
