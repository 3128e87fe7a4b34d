/**
 * Review passes beyond one server, over real MCP clients and the real command line: `waymark
 * review` prints the same tasks (and honours passes), passes show in the viewer, travel in a
 * session bundle, and are shared through one store by clones on other machines, on libSQL and
 * on PostgreSQL.
 */
import assert from "node:assert/strict";
import { ok, tempHome } from "../helpers/server.ts";
import { connectDeepwork } from "../helpers/deepwork.ts";
import { git } from "../helpers/git_repo.ts";
import { runCli } from "../helpers/maintenance.ts";
import { freshPostgresUrl, postgresBin } from "../helpers/postgres.ts";
import { changedRepo, type Task, withRepo } from "../helpers/review_repo.ts";
import { openWaymark } from "../../mod.ts";
import { createViewerApp } from "../../web/mod.ts";

const HOST = "127.0.0.1:4321";

Deno.test("waymark review prints the same tasks for CI and hooks: --base-ref, --files, a list on stdin, passes honoured", async () => {
  await withRepo(await changedRepo(), async ({ connect, dir, home }) => {
    const c = await connect();
    const mcp = ok(await c.call("get_review_instructions", {}));
    const first = (mcp.tasks as Task[])[0]!;
    ok(await c.call("mark_review_as_passed", { review_id: first.review_id }));
    await c.close();
    const cli = (args: string[], stdin?: string) =>
      runCli(["review", "--workspace", dir, ...args], { home, stdin });
    const json = await cli(["--json"]);
    assert.equal(json.code, 0, json.err);
    const answer = JSON.parse(json.out);
    assert.deepEqual(
      answer.tasks.map((t: Task) => t.review_id),
      (mcp.tasks as Task[]).slice(1).map((t) => t.review_id),
    );
    assert.deepEqual(answer.already_passed, [first.review_id]);
    const text = await cli([]);
    assert.match(text.out, /^5 review task\(s\) for 5 changed file\(s\)/);
    assert.match(text.out, /=== task 1 of 5: [^\n]+ ===\nreview_id: [^\n]+\nsubagent_type: /);
    // --base-ref HEAD: the branch's commit is left out, the working tree's changes stay
    const sinceHead = JSON.parse((await cli(["--json", "--base-ref", "HEAD"])).out);
    assert.ok(!sinceHead.changed_files.includes("src/app.py"));
    assert.ok(sinceHead.changed_files.includes("src/util.py"));
    const unknownRef = await cli(["--base-ref", "no-such-branch"]);
    assert.equal(unknownRef.code, 1);
    assert.match(unknownRef.err, /base ref "no-such-branch" is no commit here/);
    const fromStdin = JSON.parse((await cli(["--json", "--files", "-"], "src/stable.py\n")).out);
    assert.deepEqual(fromStdin.changed_files, ["src/stable.py"]);
    assert.deepEqual(fromStdin.tasks.map((t: Task) => t.rule_name), [
      "python_style",
      "together",
      "local_rule",
    ]);
    const named = JSON.parse((await cli(["--json", "--files", "docs/style.md"])).out);
    assert.match(named.message, /no rule matches/);
  });
});

Deno.test("passes show in the viewer and travel in a bundle: the importing home does not hand them out again", async () => {
  const other = await tempHome();
  try {
    await withRepo(await changedRepo(), async ({ connect, dir, home }) => {
      const c = await connect();
      const tasks = ok(await c.call("get_review_instructions", {})).tasks as Task[];
      const passedIds = tasks.slice(0, 2).map((t) => t.review_id);
      for (const id of passedIds) ok(await c.call("mark_review_as_passed", { review_id: id }));
      await c.close();

      const waymark = await openWaymark({ home });
      let sid = "";
      try {
        const rows = await waymark.store.db.selectFrom("review_passes")
          .select(["session_id", "review_id", "files", "principal"]).execute();
        assert.deepEqual(rows.map((r) => r.review_id).sort(), [...passedIds].sort());
        assert.ok(rows.every((r) => r.principal === null));
        sid = `ses_${rows[0]!.session_id}`;
        const viewer = createViewerApp({ db: waymark.store.db, allowedHosts: () => [HOST] });
        const res = await viewer.app.request(`/sessions/${sid}`, { headers: { host: HOST } });
        assert.equal(res.status, 200);
        const page = await res.text();
        assert.match(page, /Review passes/);
        for (const t of tasks.slice(0, 2)) {
          assert.ok(page.includes(t.review_id));
          assert.ok(page.includes(t.files[0]!));
        }
        assert.ok(page.includes(`Review passes: ${dir}`));
      } finally {
        await waymark.close();
      }

      // doctor holds the reviews session to the rules every session obeys, projections rebuilt
      const doctor = await runCli(["doctor", "--json"], { home });
      assert.equal(doctor.code, 0, doctor.out);
      const file = `${other.home}/passes.json`;
      const exported = await runCli(["sessions", "export", sid, "-o", file], { home });
      assert.equal(exported.code, 0, exported.err);
      const imported = await runCli(["import", file], { home: other.home });
      assert.equal(imported.code, 0, imported.err);
      const there = await connectDeepwork(other.home, dir, { extraArgs: ["--no-quality-gate"] });
      try {
        const got = ok(await there.call("get_review_instructions", {}));
        assert.deepEqual([...got.already_passed].sort(), [...passedIds].sort());
        assert.equal(got.tasks.length, tasks.length - 2);
      } finally {
        await there.close();
      }
    });
  } finally {
    await other.cleanup();
  }
});

for (const dialect of ["libsql", "postgres"] as const) {
  Deno.test({
    name:
      `${dialect}: a pass is shared through one store: another machine's clone of the same content does not hand it out again`,
    ignore: dialect === "postgres" && postgresBin() === null,
    fn: async () => {
      const a = await tempHome();
      const b = await tempHome();
      const dbUrl = dialect === "postgres" ? await freshPostgresUrl() : `file:${a.home}/team.db`;
      const origin = await changedRepo();
      await git(origin.dir, "add", "-A");
      await git(origin.dir, "commit", "-q", "-m", "feature work");
      const cloneB = `${b.home}/clone`;
      await git(b.home, "clone", "-q", "-b", "feature", origin.dir, cloneB);
      await git(cloneB, "branch", "-q", "main", "origin/main");
      const serve = (home: string, dir: string) =>
        connectDeepwork(home, dir, { extraArgs: ["--no-quality-gate", "--db", dbUrl] });
      const onA = await serve(a.home, origin.dir);
      const onB = await serve(b.home, cloneB);
      try {
        const tasksA = ok(await onA.call("get_review_instructions", {})).tasks as Task[];
        const tasksB = ok(await onB.call("get_review_instructions", {})).tasks as Task[];
        assert.deepEqual(tasksB.map((t) => t.review_id), tasksA.map((t) => t.review_id));
        ok(await onA.call("mark_review_as_passed", { review_id: tasksA[0]!.review_id }));
        const afterB = ok(await onB.call("get_review_instructions", {}));
        assert.deepEqual(afterB.already_passed, [tasksA[0]!.review_id]);
        assert.equal(
          ok(await onB.call("mark_review_as_passed", { review_id: tasksA[0]!.review_id })).status,
          "already_passed",
        );
      } finally {
        await onA.close();
        await onB.close();
        await origin.cleanup();
        await a.cleanup();
        await b.cleanup();
      }
    },
  });
}
