/**
 * Session jobs and named schemas on the DeepWork profile, over a real MCP client: a job
 * registered for one session is found by start_workflow in that session only, checked like any
 * job, replaced by registering again; named schemas from the project, a configured folder and
 * the bundled set, each a review rule whose JSON Schema is checked per file.
 */
import assert from "node:assert/strict";
import { err, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { connectDeepwork, writeIn } from "../helpers/deepwork.ts";
import { git, gitRepo } from "../helpers/git_repo.ts";

async function withWorkspace(
  files: Record<string, string>,
  body: (c: TestClient, dir: string) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const home = await tempHome();
  const repo = await gitRepo(files);
  const c = await connectDeepwork(home.home, repo.dir, {
    extraArgs: ["--no-quality-gate"],
    ...(Object.keys(env).length > 0 ? { env } : {}),
  });
  try {
    await body(c, repo.dir);
  } finally {
    await c.close();
    await repo.cleanup();
    await home.cleanup();
  }
}

const jobYaml = (summary: string) =>
  `name: scratch
summary: ${summary}
workflows:
  run:
    summary: Do the one thing
    steps:
      - name: act
        instructions: Write down what you did.
        outputs:
          report: {required: true}
step_arguments:
  - name: report
    description: What was done
    type: string
`;

Deno.test("a session job is found by start_workflow in its session only, and registering again replaces it", async () => {
  await withWorkspace({ "a.txt": "a\n" }, async (c, dir) => {
    const registered = ok(
      await c.call("register_session_job", {
        job_name: "scratch",
        job_definition_yaml: jobYaml("First version"),
        session_id: "host-session-1",
      }),
    );
    assert.equal(registered.status, "registered");
    assert.equal(registered.job_name, "scratch");
    assert.equal(registered.job_dir, `${dir}/.deepwork/tmp/session_jobs/host-session-1/scratch`);
    // not visible without the session, nor in another one
    const start = { goal: "g", job_name: "scratch", workflow_name: "run" };
    assert.equal(err(await c.call("start_workflow", start)).code, "WORKFLOW_NOT_FOUND");
    assert.equal(
      err(await c.call("start_workflow", { ...start, session_id: "host-session-2" })).code,
      "WORKFLOW_NOT_FOUND",
    );
    assert.equal(
      err(await c.call("get_session_job", { job_name: "scratch", session_id: "host-session-2" }))
        .code,
      "WORKFLOW_NOT_FOUND",
    );
    ok(
      await c.call("register_session_job", {
        job_name: "scratch",
        job_definition_yaml: jobYaml("Second version"),
        session_id: "host-session-1",
      }),
    );
    const read = ok(
      await c.call("get_session_job", { job_name: "scratch", session_id: "host-session-1" }),
    );
    assert.match(read.job_definition_yaml, /summary: Second version/);
    const started = ok(await c.call("start_workflow", { ...start, session_id: "host-session-1" }));
    assert.equal(started.begin_step.step_id, "act");
    assert.match(started.begin_step.step_instructions, /Write down what you did\./);
    const done = ok(await c.call("finished_step", { outputs: { report: "did it" } }));
    assert.equal(done.status, "workflow_complete");
    assert.deepEqual(done.warnings ?? [], []);
  });
});

Deno.test("a session job is checked like any job; bad names and session ids are refused", async () => {
  await withWorkspace({ "a.txt": "a\n" }, async (c) => {
    const call = (args: Record<string, unknown>) =>
      c.call("register_session_job", {
        job_name: "scratch",
        job_definition_yaml: jobYaml("x"),
        session_id: "s1",
        ...args,
      });
    for (const job_name of ["Scratch", "1job", "a-b", "", "../x"]) {
      const refused = err(await call({ job_name }));
      assert.equal(refused.code, "INVALID_ARGUMENTS");
    }
    assert.match(err(await call({ job_name: "bad-name" })).message, /\^\[a-z\]\[a-z0-9_\]\*\$/);
    for (const session_id of ["../up", "a/b", ".hidden", ""]) {
      assert.equal(err(await call({ session_id })).code, "INVALID_ARGUMENTS");
    }
    const broken = err(await call({ job_definition_yaml: "name: scratch\nsummary: [oops\n" }));
    assert.equal(broken.code, "INVALID_ARGUMENTS");
    assert.match(broken.message, /not a valid job: YAML syntax error/);
    const misnamed = err(
      await call({ job_definition_yaml: jobYaml("x").replace("scratch", "other") }),
    );
    assert.match(misnamed.message, /names the job `other`, not `scratch`/);
    const shapeless = err(
      await call({ job_definition_yaml: "name: scratch\nsummary: s\nworkflows: 5\n" }),
    );
    assert.equal(shapeless.code, "INVALID_ARGUMENTS");
    assert.match(shapeless.message, /workflows/);
    const withFile = err(
      await call({
        job_definition_yaml: jobYaml("x").replace(
          "instructions: Write down what you did.",
          "instructions_file: steps/act.md",
        ),
      }),
    );
    assert.match(withFile.message, /not a valid job/);
  });
});

Deno.test("named schemas come from the project, a configured folder and the bundled set, and review the files they match", async () => {
  const extra = await Deno.makeTempDir({ prefix: "waymark-schemas-" });
  await writeIn(extra, "notes_file/schema.yml", 'summary: Team notes\nmatchers: ["notes/*.md"]\n');
  await writeIn(extra, "config_file/schema.yml", 'summary: Shadowed\nmatchers: ["x"]\n');
  const files = {
    ".deepwork/schemas/config_file/schema.yml": [
      "summary: Service configuration",
      'matchers: ["config/*.json"]',
      "instructions: Secrets never appear in configuration.",
      "reference_files:",
      "  - {path: guide.md, description: How configuration is written}",
      "",
    ].join("\n"),
    ".deepwork/schemas/config_file/schema.json": JSON.stringify({
      type: "object",
      required: ["name"],
      properties: { name: { type: "string" }, port: { type: "integer" } },
    }),
    ".deepwork/schemas/config_file/guide.md": "Name every service.\n",
    ".deepwork/schemas/Bad/schema.yml": "summary: s\nmatchers: [x]\n",
  };
  try {
    await withWorkspace(files, async (c, dir) => {
      await writeIn(dir, "config/good.json", '{"name": "api", "port": 80}');
      await writeIn(dir, "config/bad.json", '{"port": "eighty"}');
      const listed = ok(await c.call("get_named_schemas", {}));
      assert.deepEqual(
        listed.schemas.map((s: { name: string; source: string }) => `${s.source}:${s.name}`),
        ["project:config_file", "extra:notes_file", "bundled:deepreview", "bundled:named_schema"],
      );
      const config = listed.schemas[0];
      assert.deepEqual(config.matchers, ["config/*.json"]);
      assert.equal(config.summary, "Service configuration");
      assert.equal(config.has_json_schema, true);
      const problems = listed.errors.map((e: { file: string; message: string }) => e.message);
      assert.ok(problems.some((m: string) => /schema name `Bad`/.test(m)));
      assert.ok(problems.some((m: string) => /`config_file` is already defined/.test(m)));

      const tasks = ok(await c.call("get_review_instructions", {})).tasks as {
        rule_name: string;
        files: string[];
        prompt: string;
      }[];
      assert.deepEqual(tasks.map((t) => `${t.rule_name}:${t.files}`), [
        "schema-config_file:config/bad.json",
        "schema-config_file:config/good.json",
      ]);
      assert.match(tasks[0]!.prompt, /`config\/bad\.json`: .*name/);
      assert.match(tasks[0]!.prompt, /`config\/bad\.json`: [^\n]*port/);
      assert.match(tasks[1]!.prompt, /`config\/good\.json`: matches the schema/);
      assert.match(tasks[1]!.prompt, /Secrets never appear/);
      assert.match(tasks[1]!.prompt, /How configuration is written\n\n`+\nName every service\./);

      // the bundled schema reviews rule files themselves, against the rule format
      await writeIn(dir, "src/.deepreview", "r:\n  description: d\n  match: {include: []}\n");
      await git(dir, "add", "-A");
      const review = (ok(await c.call("get_review_instructions", {})).tasks as typeof tasks)
        .find((t) => t.rule_name === "schema-deepreview")!;
      assert.deepEqual(review.files, ["src/.deepreview"]);
      assert.match(review.prompt, /`src\/\.deepreview`: [^\n]*(review|include)/);
    }, { DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS: extra });
  } finally {
    await Deno.remove(extra, { recursive: true });
  }
});
