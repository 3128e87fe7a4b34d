/**
 * Issue 36 end to end, through a real MCP client over stdio on a real git repository: snapshots
 * at start, acknowledgement and checkpoint leave the user's HEAD, index, stash and status as
 * they were; a rewind (advance twice with edits, back to the first node) is told the files
 * differ, `restore_workspace` brings the first node's files back with ignored files untouched,
 * and its `undo` brings the later state back; a caller in another workspace is refused.
 * @module
 */
import assert from "node:assert/strict";
import { git, gitRepo } from "../helpers/git_repo.ts";
import { connect, dbUrlOf, ok, tempHome } from "../helpers/server.ts";
import { openTestDb } from "../helpers/db.ts";
import { plainWorkflow } from "../helpers/workflows.ts";
import { runCli } from "../helpers/maintenance.ts";

/** What the user sees of their repository; a snapshot must not change it. */
async function userState(dir: string): Promise<string> {
  const index = await Deno.readFile(`${dir}/.git/index`);
  return JSON.stringify([
    await git(dir, "rev-parse", "HEAD"),
    await git(dir, "symbolic-ref", "HEAD"),
    index.join(","),
    await git(dir, "stash", "list"),
    await git(dir, "--no-optional-locks", "status", "--porcelain", "-uall"),
  ]);
}

/** Test servers snapshot only when asked (`childEnv`). */
const SNAPSHOTS_ON = { WAYMARK_SNAPSHOTS: "1" };

const read = (dir: string, path: string) => Deno.readTextFile(`${dir}/${path}`).catch(() => null);

Deno.test("rewind: the answer says the files differ, restore brings them back, undo returns", async () => {
  const home = await tempHome();
  const repo = await gitRepo({ "a.txt": "v0\n", ".gitignore": "*.log\n" });
  await Deno.mkdir(`${home.home}/workflows`, { recursive: true });
  await Deno.writeTextFile(`${home.home}/workflows/rewind.json`, plainWorkflow("user.rewind", 4));
  await Deno.writeTextFile(`${repo.dir}/x.log`, "ignored 1\n");
  const c = await connect(home.home, { cwd: repo.dir, env: SNAPSHOTS_ON });
  try {
    let user = await userState(repo.dir);
    const start = ok(await c.call("start_workflow", { workflowId: "user.rewind" }));
    assert.equal(await userState(repo.dir), user);

    await Deno.writeTextFile(`${repo.dir}/a.txt`, "v1\n");
    await Deno.writeTextFile(`${repo.dir}/b.txt`, "made in step 1\n");
    user = await userState(repo.dir);
    const first = ok(
      await c.call("continue_workflow", {
        stateToken: start.stateToken,
        ackToken: start.ackToken,
        output: { notesMarkdown: "step 1: a to v1, b made" },
      }),
    );
    assert.equal(await userState(repo.dir), user);

    await Deno.writeTextFile(`${repo.dir}/a.txt`, "v2\n");
    await Deno.writeTextFile(`${repo.dir}/c.txt`, "made in step 2\n");
    await Deno.writeTextFile(`${repo.dir}/x.log`, "ignored 2\n");
    user = await userState(repo.dir);
    const second = ok(
      await c.call("continue_workflow", {
        stateToken: first.stateToken,
        ackToken: first.ackToken,
        output: { notesMarkdown: "step 2: a to v2, c made" },
      }),
    );
    // a replay returns the recorded answer and takes no snapshot
    const refs = await git(repo.dir, "for-each-ref", "refs/waymark/");
    const replayed = ok(
      await c.call("continue_workflow", {
        stateToken: first.stateToken,
        ackToken: first.ackToken,
        output: { notesMarkdown: "step 2: a to v2, c made" },
      }),
    );
    assert.equal(replayed.stateToken, second.stateToken);
    assert.equal(await git(repo.dir, "for-each-ref", "refs/waymark/"), refs);
    const checkpoint = ok(
      await c.call("checkpoint_workflow", {
        stateToken: second.stateToken,
        checkpointToken: second.checkpointToken,
        output: { notesMarkdown: "a checkpoint" },
      }),
    );
    assert.ok(checkpoint.checkpoint.nodeId);
    assert.equal(await userState(repo.dir), user);

    // back to the first node: the run rewinds, and the answer says the files did not
    const back = ok(await c.call("continue_workflow", { stateToken: first.stateToken }));
    assert.deepEqual(back.workspaceDiffers.files, 2);
    assert.equal(back.workspaceDiffers.call.name, "restore_workspace");
    const dry = ok(
      await c.call("restore_workspace", { ...back.workspaceDiffers.call.arguments, dryRun: true }),
    );
    assert.deepEqual([dry.written, dry.deleted], [["a.txt"], ["c.txt"]]);
    assert.equal(await read(repo.dir, "a.txt"), "v2\n");

    const restored = ok(await c.call("restore_workspace", back.workspaceDiffers.call.arguments));
    assert.equal(await read(repo.dir, "a.txt"), "v1\n");
    assert.equal(await read(repo.dir, "b.txt"), "made in step 1\n");
    assert.equal(await read(repo.dir, "c.txt"), null);
    assert.equal(await read(repo.dir, "x.log"), "ignored 2\n");
    const again = ok(await c.call("continue_workflow", { stateToken: first.stateToken }));
    assert.equal(again.workspaceDiffers, undefined);

    ok(await c.call("restore_workspace", restored.undo.arguments));
    assert.equal(await read(repo.dir, "a.txt"), "v2\n");
    assert.equal(await read(repo.dir, "c.txt"), "made in step 2\n");
    assert.equal(await read(repo.dir, "x.log"), "ignored 2\n");

    // the same from the command line, in the workspace
    const cli = (...args: string[]) =>
      runCli(["restore", ...args], { home: home.home, cwd: repo.dir });
    const dryCli = await cli(first.stateToken, "--dry-run", "--json");
    assert.equal(dryCli.code, 0, dryCli.err);
    assert.deepEqual(JSON.parse(dryCli.out).written, ["a.txt"]);
    assert.equal(await read(repo.dir, "a.txt"), "v2\n");
    const realCli = await cli(first.stateToken, "--json");
    assert.equal(realCli.code, 0, realCli.err);
    assert.equal(await read(repo.dir, "c.txt"), null);
    const undoCli = await cli(first.stateToken, "--snapshot", JSON.parse(realCli.out).before);
    assert.equal(undoCli.code, 0, undoCli.err);
    assert.equal(await read(repo.dir, "c.txt"), "made in step 2\n");
    // an acknowledgement that forks from the first node says the files differ from it too
    const fork = ok(
      await c.call("continue_workflow", {
        stateToken: again.stateToken,
        ackToken: again.ackToken,
        output: { notesMarkdown: "step 2 again, on the later files" },
      }),
    );
    assert.ok(fork.forked);
    assert.deepEqual(fork.workspaceDiffers.call.arguments, { stateToken: again.stateToken });
    assert.equal(fork.workspaceDiffers.files, 2);
    const elsewhere = await runCli(["restore", first.stateToken, "--json"], { home: home.home });
    assert.equal(elsewhere.code, 1);
    assert.equal(JSON.parse(elsewhere.out).error.details.reason, "workspace_mismatch");

    const db = await openTestDb(dbUrlOf(home.home));
    try {
      const rows = await db.rows(
        "SELECT payload FROM node_events WHERE kind = 'snapshot_recorded' ORDER BY seq",
      );
      assert.equal(rows.length, 5); // start, two acknowledgements, the checkpoint, the fork
      const events = rows.map((r) => JSON.parse(r.payload));
      assert.equal(events[0].changes, null);
      assert.deepEqual(
        events[1].changes.files.map((f: { path: string; status: string }) =>
          `${f.status}:${f.path}`
        ),
        ["modified:a.txt", "added:b.txt"],
      );
      assert.equal(events[1].snapshot.branch, "main");
    } finally {
      await db.close();
    }
    // a bundle carries the snapshots, and the session rules accept them on import
    const other = await tempHome();
    try {
      const sid = start.session.sessionId;
      const file = `${home.home}/bundle.json`;
      const out = await runCli(["sessions", "export", sid, "-o", file], { home: home.home });
      assert.equal(out.code, 0, out.err);
      const bundle = JSON.parse(await Deno.readTextFile(file));
      const kinds = bundle.events.map((e: { kind: string }) => e.kind);
      assert.equal(kinds.filter((k: string) => k === "snapshot_recorded").length, 5);
      const imported = await runCli(["import", file], { home: other.home });
      assert.equal(imported.code, 0, imported.err);
    } finally {
      await other.cleanup();
    }
  } finally {
    await c.close();
    await repo.cleanup();
    await home.cleanup();
  }
});

Deno.test("restore from another workspace is refused and changes nothing", async () => {
  const home = await tempHome();
  const repo = await gitRepo({ "a.txt": "v0\n" });
  const other = await gitRepo({ "z.txt": "z\n" });
  await Deno.mkdir(`${home.home}/workflows`, { recursive: true });
  await Deno.writeTextFile(`${home.home}/workflows/rewind.json`, plainWorkflow("user.rewind", 2));
  const here = await connect(home.home, { cwd: repo.dir, env: SNAPSHOTS_ON });
  const there = await connect(home.home, { cwd: other.dir, env: SNAPSHOTS_ON });
  try {
    const start = ok(await here.call("start_workflow", { workflowId: "user.rewind" }));
    await Deno.writeTextFile(`${repo.dir}/a.txt`, "v1\n");
    const before = [await userState(repo.dir), await userState(other.dir)];
    const refused = await there.call("restore_workspace", { stateToken: start.stateToken });
    assert.equal(refused.isError, true);
    const error = (refused.structuredContent as { error: Record<string, unknown> }).error;
    assert.equal(error.code, "RESTORE_REFUSED");
    assert.equal((error.details as Record<string, unknown>).reason, "workspace_mismatch");
    assert.deepEqual([await userState(repo.dir), await userState(other.dir)], before);
    assert.equal(await read(repo.dir, "a.txt"), "v1\n");
    // a snapshot id is a commit id, never anything git could read as an option
    const odd = await here.call("restore_workspace", {
      stateToken: start.stateToken,
      snapshot: "--output=/tmp/x",
    });
    assert.equal(odd.isError, true);
    const oddError = (odd.structuredContent as { error: Record<string, unknown> }).error;
    assert.equal(oddError.code, "INVALID_ARGUMENTS");
    assert.equal(await read(repo.dir, "a.txt"), "v1\n");
  } finally {
    await here.close();
    await there.close();
    await repo.cleanup();
    await other.cleanup();
    await home.cleanup();
  }
});
