/**
 * The DeepWork profile's review rules over a real MCP client against a real git
 * repository made here: a branch with a commit, staged, unstaged, untracked, ignored and
 * deleted files; every strategy; nested `.deepreview` files; reference-file caps; given files;
 * broken rule files named by line; the pass cache across a restart and after an edit; ids that
 * could leave the project refused.
 */
import assert from "node:assert/strict";
import { err, ok } from "../helpers/server.ts";
import { writeIn } from "../helpers/deepwork.ts";
import { git, gitRepo } from "../helpers/git_repo.ts";
import { byRule, changedRepo, ROOT_RULES, type Task, withRepo } from "../helpers/review_repo.ts";

Deno.test("changed files come from git: branch commits, staged, unstaged, untracked; never ignored or deleted", async () => {
  await withRepo(await changedRepo(), async ({ connect, dir }) => {
    const c = await connect();
    const got = ok(await c.call("get_review_instructions", {}));
    assert.deepEqual(got.changed_files, [
      "src/app.py",
      "src/new.py",
      "src/staged.py",
      "src/util.py",
      "src/vendor/lib.py",
    ]);
    assert.equal(got.base, (await git(dir, "merge-base", "HEAD", "main")).trim());
    assert.deepEqual(got.errors, []);
    const tasks = got.tasks as Task[];
    // individual: one task per matching file, the excluded vendor file left out
    assert.deepEqual(byRule(tasks, "python_style").map((t) => t.files), [
      ["src/app.py"],
      ["src/new.py"],
      ["src/staged.py"],
      ["src/util.py"],
    ]);
    // matches_together: one task for src/*.py, with the unchanged match and every changed file
    const [together] = byRule(tasks, "together");
    assert.deepEqual(together!.files, ["src/app.py", "src/new.py", "src/staged.py", "src/util.py"]);
    assert.equal(together!.subagent_type, "code-reviewer");
    assert.match(together!.prompt, /Check the modules agree on names\./);
    assert.match(together!.prompt, /## Every changed file[\s\S]*`src\/vendor\/lib\.py`/);
    assert.match(together!.prompt, /did not change[\s\S]*`src\/stable\.py`/);
    assert.equal(together!.defining_file, ".deepreview:13");
    // all_changed_files from the nested file: globs relative to src/, every changed file handed over
    const [local] = byRule(tasks, "local_rule");
    assert.deepEqual(local!.files, got.changed_files);
    assert.equal(local!.defining_file, "src/.deepreview:1");
    assert.equal(tasks.length, 6);
    const style = byRule(tasks, "python_style")[0]!;
    assert.equal(style.subagent_type, "general-purpose");
    assert.match(style.prompt, /### `docs\/style\.md`: House style\n\n```+\nUse snake_case\./);
    assert.match(style.prompt, /\[missing: `docs\/missing\.md` could not be read/);
    assert.match(style.prompt, new RegExp(`## After review[\\s\\S]*${style.review_id}`));
    for (const t of tasks) assert.match(t.review_id, /^[A-Za-z0-9_-]+--[0-9a-f]{24}$/);
    // the same state gives the same ids
    const again = ok(await c.call("get_review_instructions", {}));
    assert.deepEqual(
      (again.tasks as Task[]).map((t) => t.review_id),
      tasks.map((t) => t.review_id),
    );
  });
});

Deno.test("given files replace detection; configured reviews are listed and filtered", async () => {
  await withRepo(await changedRepo(), async ({ connect, dir }) => {
    const c = await connect();
    const given = ok(await c.call("get_review_instructions", { files: [`${dir}/src/stable.py`] }));
    assert.deepEqual(given.changed_files, ["src/stable.py"]);
    assert.deepEqual((given.tasks as Task[]).map((t) => t.rule_name), [
      "python_style",
      "together",
      "local_rule",
    ]);
    const outside = err(await c.call("get_review_instructions", { files: ["../x.py"] }));
    assert.equal(outside.code, "INVALID_ARGUMENTS");
    const none = ok(await c.call("get_review_instructions", { files: ["docs/style.md"] }));
    assert.deepEqual(none.tasks, []);
    assert.match(none.message, /^Nothing to review: no rule matches the 1 changed file/);
    const all = ok(await c.call("get_configured_reviews", {}));
    assert.deepEqual(
      all.reviews.map((r: { name: string; defining_file: string }) => [r.name, r.defining_file]),
      [
        ["python_style", ".deepreview:2"],
        ["together", ".deepreview:13"],
        ["local_rule", "src/.deepreview:1"],
        ["schema-deepreview", "bundled:deepreview"],
        ["schema-named_schema", "bundled:named_schema"],
      ],
    );
    const names = async (files: string[]) =>
      ok(await c.call("get_configured_reviews", { only_rules_matching_files: files })).reviews
        .map((r: { name: string }) => r.name);
    assert.deepEqual(await names(["lib/x.py"]), ["python_style"]);
    assert.deepEqual(await names(["src/vendor/x.py"]), []);
    assert.deepEqual(await names(["README.md", "src/x.py"]), [
      "python_style",
      "together",
      "local_rule",
    ]);
    assert.deepEqual(await names(["a/.deepreview"]), ["schema-deepreview"]);
  });
});

Deno.test("a broken rule file is named by file and line; its other rules and other files still apply", async () => {
  const repo = await gitRepo({ ".deepreview": ROOT_RULES, "a.py": "A = 1\n" });
  // the root file's \`together\` names an instructions file this project lacks
  await writeIn(
    repo.dir,
    "bad/.deepreview",
    [
      "fine:",
      '  description: "ok"',
      '  match: {include: ["*.py"]}',
      "  review: {strategy: individual, instructions: x}",
      "broken:",
      '  description: "no strategy"',
      "  match:",
      '    include: ["*.py"]',
      "  review:",
      "    strategy: sometimes",
      "    instructions: x",
      "",
    ].join("\n"),
  );
  await writeIn(repo.dir, "bad/b.py", "B = 1\n");
  await writeIn(repo.dir, "worse/.deepreview", "a: [unclosed\n");
  await withRepo(repo, async ({ connect }) => {
    const c = await connect();
    const got = ok(await c.call("get_review_instructions", {}));
    const errors = got.errors as { file: string; line: number; message: string }[];
    assert.deepEqual(errors.map((e) => `${e.file}:${e.line}`), [
      ".deepreview:19",
      "bad/.deepreview:10",
      "worse/.deepreview:2",
    ]);
    assert.match(
      errors[0]!.message,
      /rule `together`: instructions file "docs\/together\.md" cannot be read/,
    );
    errors.shift();
    assert.equal(errors[0]!.file, "bad/.deepreview");
    assert.equal(errors[0]!.line, 10);
    assert.match(errors[0]!.message, /rule `broken`: `review.strategy`/);
    assert.equal(errors[1]!.file, "worse/.deepreview");
    assert.match(errors[1]!.message, /YAML syntax error/);
    assert.match(got.message, /3 problem\(s\) in rule files/);
    const rules = (got.tasks as Task[]).map((t) => `${t.rule_name}:${t.files.join(",")}`);
    assert.ok(rules.includes("fine:bad/b.py"));
    assert.ok(rules.includes("python_style:bad/b.py"));
    assert.ok(rules.includes("schema-deepreview:bad/.deepreview"));
  });
});

Deno.test("reference files: at most 20 and 256 KB per task, the rest named, the one past the budget cut", async () => {
  const refs = Array.from({ length: 23 }, (_, i) => `refs/r${String(i).padStart(2, "0")}.md`);
  const files: Record<string, string> = { "a.txt": "a\n" };
  for (const [i, r] of refs.entries()) files[r] = i === 1 ? "x".repeat(300 * 1024) : `ref ${i}\n`;
  files[".deepreview"] = [
    "capped:",
    '  description: "many references"',
    '  match: {include: ["*.txt"]}',
    "  review:",
    "    strategy: individual",
    "    instructions: check",
    "    reference_files:",
    ...refs.map((r) => `      - {path: "${r}"}`),
  ].join("\n");
  const repo = await gitRepo(files);
  await writeIn(repo.dir, "a.txt", "changed\n");
  await withRepo(repo, async ({ connect }) => {
    const c = await connect();
    const [task] = ok(await c.call("get_review_instructions", {})).tasks as Task[];
    const prompt = task!.prompt;
    assert.match(prompt, /ref 0\n/);
    assert.match(prompt, /\[cut: \d+ of 307200 bytes shown; reference files share 262144 bytes/);
    // the budget is spent by the cut file: every later one is named as left out
    assert.ok(!prompt.includes("ref 2\n"));
    assert.match(
      prompt,
      /Left out \(past 20 files or 262144 bytes[^\n]*`refs\/r02\.md`[^\n]*`refs\/r22\.md`/,
    );
    assert.ok(new TextEncoder().encode(prompt).length < 270 * 1024);
  });
  const many = await gitRepo({
    ...Object.fromEntries(refs.map((r, i) => [r, `ref ${i}\n`])),
    "a.txt": "a\n",
    ".deepreview": files[".deepreview"]!,
  });
  await writeIn(many.dir, "a.txt", "changed\n");
  await withRepo(many, async ({ connect }) => {
    const c = await connect();
    const [task] = ok(await c.call("get_review_instructions", {})).tasks as Task[];
    assert.match(task!.prompt, /ref 19\n/);
    assert.ok(!task!.prompt.includes("ref 20\n"));
    assert.match(task!.prompt, /Left out[^\n]*`refs\/r20\.md`, `refs\/r21\.md`, `refs\/r22\.md`/);
  });
});

Deno.test("a pass is an event: kept across a restart, lost by an edit; ids that could leave the project are refused", async () => {
  await withRepo(await changedRepo(), async ({ connect, dir }) => {
    const first = await connect();
    const tasks = ok(await first.call("get_review_instructions", {})).tasks as Task[];
    const app = tasks.find((t) => t.rule_name === "python_style" && t.files[0] === "src/app.py")!;
    const passed = ok(await first.call("mark_review_as_passed", { review_id: app.review_id }));
    assert.equal(passed.status, "passed");
    assert.deepEqual(passed.files, ["src/app.py"]);
    const twice = ok(await first.call("mark_review_as_passed", { review_id: app.review_id }));
    assert.equal(twice.status, "already_passed");
    await first.close();

    const second = await connect();
    const after = ok(await second.call("get_review_instructions", {}));
    assert.deepEqual(after.already_passed, [app.review_id]);
    assert.equal(after.tasks.length, tasks.length - 1);
    assert.ok(!(after.tasks as Task[]).some((t) => t.review_id === app.review_id));
    // a pass in a new process needs no earlier get_review_instructions there
    const util = tasks.find((t) => t.rule_name === "python_style" && t.files[0] === "src/util.py")!;
    await second.close();
    const third = await connect();
    assert.equal(
      ok(await third.call("mark_review_as_passed", { review_id: util.review_id })).status,
      "passed",
    );

    await writeIn(dir, "src/app.py", "def main():\n    return 3\n");
    const edited = ok(await third.call("get_review_instructions", {}));
    const again = (edited.tasks as Task[]).find((t) =>
      t.rule_name === "python_style" && t.files[0] === "src/app.py"
    )!;
    assert.notEqual(again.review_id, app.review_id);
    assert.deepEqual(edited.already_passed, [util.review_id]);
    // the old id names content that is gone
    assert.equal(
      err(await third.call("mark_review_as_passed", { review_id: app.review_id })).code,
      "REVIEW_NOT_FOUND",
    );
    for (const bad of ["../../etc/passwd", "python_style--../../x", "/abs/path", "a\\b"]) {
      const refused = err(await third.call("mark_review_as_passed", { review_id: bad }));
      assert.equal(refused.code, "INVALID_ARGUMENTS");
      assert.match(refused.message, /could reach outside the project/);
    }
    const empty = err(await third.call("mark_review_as_passed", { review_id: "" }));
    assert.match(empty.message, /review_id is empty/);
    const unknown = err(
      await third.call("mark_review_as_passed", { review_id: `python_style--${"0".repeat(24)}` }),
    );
    assert.equal(unknown.code, "REVIEW_NOT_FOUND");
  });
});

Deno.test("outside git, changes cannot be told but given files can be reviewed", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-nogit-" }));
  await writeIn(dir, ".deepreview", ROOT_RULES);
  await writeIn(dir, "docs/together.md", "t\n");
  await writeIn(dir, "src/a.py", "A = 1\n");
  await withRepo(
    { dir, cleanup: () => Deno.remove(dir, { recursive: true }) },
    async ({ connect }) => {
      const c = await connect();
      const refused = err(await c.call("get_review_instructions", {}));
      assert.equal(refused.code, "CHANGES_UNAVAILABLE");
      assert.match(refused.message, /not inside a git work tree.*Pass `files`/);
      const given = ok(await c.call("get_review_instructions", { files: ["src/a.py"] }));
      assert.deepEqual((given.tasks as Task[]).map((t) => t.rule_name), [
        "python_style",
        "together",
      ]);
    },
  );
});

Deno.test("a git worktree is its own workspace: its changes, not its parent repository's", async () => {
  const repo = await gitRepo({ ".deepreview": ROOT_RULES.split("together:")[0]!, "a.py": "A\n" });
  const wt = `${repo.dir}-wt`;
  await git(repo.dir, "worktree", "add", "-q", "-b", "side", wt);
  await writeIn(repo.dir, "main_only.py", "M = 1\n");
  await writeIn(wt, "side_only.py", "S = 1\n");
  await writeIn(wt, "a.py", "A = 2\n");
  await withRepo({
    dir: wt,
    cleanup: async () => {
      await Deno.remove(wt, { recursive: true });
      await repo.cleanup();
    },
  }, async ({ connect }) => {
    const c = await connect();
    const got = ok(await c.call("get_review_instructions", {}));
    assert.deepEqual(got.changed_files, ["a.py", "side_only.py"]);
    assert.deepEqual((got.tasks as Task[]).map((t) => t.files[0]), ["a.py", "side_only.py"]);
  });
});
