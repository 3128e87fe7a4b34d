/**
 * Sessions that survive: a run found again by `resume_session` in a new process after the old
 * one was killed; two real git workspaces told apart by ranking (roots given by the client,
 * refetched on `roots/list_changed`, and the cwd fallback); recaps cut at their byte budget
 * with the marker in text and data; the checkpoint-only session behind its flag.
 * @module
 */
import assert from "node:assert/strict";
import { openTestDb } from "../helpers/db.ts";
import { connect, connectRich, ok, type RichClient, tempHome } from "../helpers/server.ts";
import { gated } from "../helpers/workflows.ts";
import { placeOf } from "../helpers/answers.ts";
import { serveAsProcesses } from "../helpers/in_process.ts";

/** The servers here are processes: that is what these tests are about. */
serveAsProcesses();

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=waymark", "-c", "user.email=w@example.invalid", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}

/** A temporary git repository on `branch` with one commit; returns its path and HEAD. */
async function gitRepo(branch: string): Promise<{ dir: string; head: string }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: `waymark-repo-${branch}-` }));
  await git(dir, "init", "-q", "-b", branch);
  await Deno.writeTextFile(`${dir}/README.md`, `# ${branch}\n`);
  await git(dir, "add", "README.md");
  await git(dir, "commit", "-q", "-m", "first");
  return { dir, head: await git(dir, "rev-parse", "HEAD") };
}

function fileUri(dir: string): string {
  return new URL(`file://${dir}/`).href;
}

/** Walks a run to completion from a step response. */
async function finish(client: RichClient, from: Json): Promise<Json> {
  let at = from;
  for (let i = 0; i < 50 && !at.isComplete; i++) {
    at = ok(
      await client.call("continue_workflow", {
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        output: { notesMarkdown: `Finished ${at.pending.stepId}.`, ...gated(at.pending) },
      }),
    );
    assert.equal(at.kind, "ok", JSON.stringify(at.blockers));
  }
  return at;
}

Deno.test("a run started in a killed process is found by a word from its notes in a new process and finished", async () => {
  const home = await tempHome();
  const repo = await gitRepo("main");
  let first: RichClient | undefined;
  let second: RichClient | undefined;
  try {
    first = await connectRich(home.home, { roots: [{ uri: fileUri(repo.dir) }] });
    const started = ok(
      await first.call("start_workflow", {
        workflowId: "waymark.bug_investigation",
        goal: "Checkout timeouts",
      }),
    );
    const advanced = ok(
      await first.call("continue_workflow", {
        stateToken: started.stateToken,
        ackToken: started.ackToken,
        output: { notesMarkdown: "Reproduced it: the quokka cache evicts sessions under load." },
      }),
    );
    // the server dies mid-run, as when a chat window is closed
    Deno.kill(first.pid!, "SIGKILL");
    await first.close().catch(() => {});
    first = undefined;

    second = await connectRich(home.home, { roots: [{ uri: fileUri(repo.dir) }] });
    const found = ok(await second.call("resume_session", { query: "quokka" }));
    assert.equal(found.candidates.length, 1);
    const c = found.candidates[0];
    assert.equal(c.runId, placeOf(started).runId);
    assert.equal(c.sessionId, started.session.sessionId);
    assert.equal(c.match, "tip_notes");
    assert.match(c.snippet, /quokka/);
    assert.equal(c.tip.nodeId, placeOf(advanced).nodeId);
    assert.equal(c.tip.pendingStepId, advanced.pending.stepId);
    assert.ok(c.workspace.sameWorkspace && c.workspace.sameBranch && c.workspace.sameHead);
    // state tokens name the node; the attempt tokens are fresh
    assert.equal(c.tip.stateToken, advanced.stateToken);
    assert.notEqual(c.tip.ackToken, advanced.ackToken);
    assert.notEqual(c.tip.checkpointToken, advanced.checkpointToken);
    const text = (await second.call("resume_session", { query: "quokka" })).content[0]!.text;
    assert.match(text, /Checkout timeouts/);
    assert.match(text, /continue_workflow with only the chosen stateToken/);

    // rehydrate at the tip: the pending step, a recap with the notes, writing nothing
    const rehydrated = ok(await second.call("continue_workflow", { stateToken: c.tip.stateToken }));
    assert.equal(rehydrated.pending.stepId, advanced.pending.stepId);
    assert.match(rehydrated.recap.entries[0].notesMarkdown, /quokka/);
    const done = await finish(second, rehydrated);
    assert.equal(done.isComplete, true);
    assert.equal(done.pending, null);
    const again = ok(await second.call("resume_session", { query: "quokka" }));
    assert.equal(again.candidates[0].status, "complete");
    assert.equal(again.candidates[0].tip.isComplete, true);
  } finally {
    await first?.close().catch(() => {});
    await second?.close();
    await home.cleanup();
    await Deno.remove(repo.dir, { recursive: true });
  }
});

Deno.test("two git workspaces on different branches are told apart by ranking; roots are refetched on list_changed", async () => {
  const home = await tempHome();
  const a = await gitRepo("feature-a");
  const b = await gitRepo("feature-b");
  let client: RichClient | undefined;
  let fallback: RichClient | undefined;
  try {
    client = await connectRich(home.home, { roots: [{ uri: fileUri(a.dir), name: "a" }] });
    const notes = "Refactored the parser; next: the lexer tests.";
    const runA = ok(
      await client.call("start_workflow", {
        workflowId: "waymark.code_review",
        goal: "Parser work",
      }),
    );
    ok(
      await client.call("continue_workflow", {
        stateToken: runA.stateToken,
        ackToken: runA.ackToken,
        output: { notesMarkdown: notes },
      }),
    );
    await client.setRoots([{ uri: fileUri(b.dir), name: "b" }]);
    // no wait: the notification marks the roots stale, so the next call sees the new ones
    const runB = ok(
      await client.call("start_workflow", {
        workflowId: "waymark.code_review",
        goal: "Parser work",
      }),
    );
    ok(
      await client.call("continue_workflow", {
        stateToken: runB.stateToken,
        ackToken: runB.ackToken,
        output: { notesMarkdown: notes },
      }),
    );

    // from workspace B, B's run ranks first; the same words match both
    const fromB = ok(await client.call("resume_session", { query: "parser lexer" }));
    assert.equal(fromB.candidates.length, 2);
    assert.equal(fromB.candidates[0].runId, placeOf(runB).runId);
    assert.deepEqual(
      [fromB.workspace.workspace, fromB.workspace.gitBranch, fromB.workspace.gitHeadSha],
      [b.dir, "feature-b", b.head],
    );
    assert.deepEqual(fromB.candidates[0].workspace, {
      workspace: b.dir,
      gitBranch: "feature-b",
      gitHeadSha: b.head,
      sameWorkspace: true,
      sameBranch: true,
      sameHead: true,
    });
    assert.equal(fromB.candidates[1].runId, placeOf(runA).runId);
    assert.equal(fromB.candidates[1].workspace.sameWorkspace, false);
    assert.equal(fromB.candidates[1].workspace.gitBranch, "feature-a");

    await client.setRoots([{ uri: fileUri(a.dir) }]);
    const fromA = ok(await client.call("resume_session", { query: "parser" }));
    assert.equal(fromA.candidates[0].runId, placeOf(runA).runId);
    assert.equal(fromA.candidates[0].workspace.gitBranch, "feature-a");
    // ranking is deterministic: the same call gives the same order
    const fromA2 = ok(await client.call("resume_session", { query: "parser" }));
    assert.deepEqual(
      fromA2.candidates.map((c: Json) => c.runId),
      fromA.candidates.map((c: Json) => c.runId),
    );
    // no query: recent runs, still workspace first
    const recent = ok(await client.call("resume_session", {}));
    assert.deepEqual(recent.searched, ["recent"]);
    assert.equal(recent.candidates[0].runId, placeOf(runA).runId);

    // a root outside any git repository is not an error: no branch, no HEAD
    const plain = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-plain-" }));
    await client.setRoots([{ uri: fileUri(plain) }]);
    const outside = ok(await client.call("resume_session", { query: "parser" }));
    assert.deepEqual(outside.workspace, { workspace: plain, gitBranch: null, gitHeadSha: null });
    assert.equal(outside.candidates.length, 2);
    await Deno.remove(plain);

    // observations are events and a projection
    const db = await openTestDb(home.dbUrl);
    try {
      const rows = await db.rows(
        "SELECT run_id, workspace, git_branch, git_head_sha FROM observations ORDER BY seq",
      );
      assert.deepEqual(rows.map((r) => r.git_branch), ["feature-a", "feature-b"]);
      assert.deepEqual(rows.map((r) => r.git_head_sha), [a.head, b.head]);
      const events = await db.number(
        "SELECT count(*) AS n FROM events WHERE kind = 'observation_recorded'",
      );
      assert.equal(events, 2, "advancing in an unchanged workspace records nothing new");
    } finally {
      await db.close();
    }

    // a client without roots: the server's working directory is the workspace
    fallback = await connectRich(home.home, { cwd: b.dir });
    const cwd = ok(await fallback.call("resume_session", { query: "parser" }));
    assert.equal(cwd.workspace.workspace, b.dir);
    assert.equal(cwd.candidates[0].runId, placeOf(runB).runId);
  } finally {
    await client?.close();
    await fallback?.close();
    await home.cleanup();
    await Deno.remove(a.dir, { recursive: true });
    await Deno.remove(b.dir, { recursive: true });
  }
});

/** A project workflow of `n` plain steps, in a temp folder passed with --workflows-dir. */
async function longWorkflowDir(n: number): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "waymark-wf-" });
  await Deno.writeTextFile(
    `${dir}/long.json`,
    JSON.stringify({
      id: "test.long",
      name: "Long",
      description: "Many steps.",
      version: "1.0.0",
      steps: Array.from({ length: n }, (_, i) => ({
        id: `s${i + 1}`,
        title: `Step ${i + 1}`,
        prompt: `Do step ${i + 1}.`,
      })),
    }),
  );
  return dir;
}

Deno.test("recaps are cut at their byte budget, most recent first, with the marker in text and data", async () => {
  const home = await tempHome();
  const dir = await longWorkflowDir(14);
  let client: RichClient | undefined;
  try {
    client = await connectRich(home.home, { extraArgs: ["--workflows-dir", dir] });
    let at = ok(await client.call("start_workflow", { workflowId: "test.long" }));
    const states: Json[] = [at];
    for (let i = 1; i <= 10; i++) {
      at = ok(
        await client.call("continue_workflow", {
          stateToken: at.stateToken,
          ackToken: at.ackToken,
          output: { notesMarkdown: `note ${String(i).padStart(2, "0")} ${"x".repeat(990)}` },
        }),
      );
      states.push(at);
    }
    const result = await client.call("continue_workflow", { stateToken: at.stateToken });
    const recap = ok(result).recap;
    // 10 notes of 998 bytes against 4096: the 4 most recent fit
    assert.equal(recap.budgetBytes, 4096);
    assert.equal(recap.entries.length, 4);
    assert.deepEqual(
      recap.entries.map((e: Json) => e.notesMarkdown.slice(0, 7)),
      ["note 10", "note 09", "note 08", "note 07"],
    );
    assert.equal(recap.truncated, true);
    assert.equal(recap.omitted, 6);
    assert.equal(recap.omittedExact, true);
    assert.equal(recap.policy, "most_recent_first");
    assert.equal(recap.usedBytes, 4 * 998);
    assert.ok(
      result.content[0]!.text.includes(
        "[recap truncated: policy most_recent_first kept the 4 most recent entries (3992 of 4096 bytes); 6 earlier entries omitted]",
      ),
    );

    // a short recap is whole and unmarked
    const early = ok(await client.call("continue_workflow", { stateToken: states[2]!.stateToken }));
    assert.equal(early.forked.existingBranches.length, 1, "states[2] is not a tip");
    assert.equal(early.tip.nodeId, placeOf(at).nodeId);
    // the downstream recap of the preferred branch: 8 notes below the fork point, cut too
    const down = early.forked.downstreamRecap;
    assert.equal(down.truncated, true);
    assert.equal(down.entries[0].notesMarkdown.slice(0, 7), "note 10");
    assert.equal(down.omitted, 8 - down.entries.length);
    // advancing from the old node forks, with the children's summaries and the bounded recap
    const forked = ok(
      await client.call("continue_workflow", {
        stateToken: early.stateToken,
        ackToken: early.ackToken,
        output: { notesMarkdown: "a different path" },
      }),
    );
    assert.equal(forked.forked.existingBranches.length, 1);
    assert.equal(forked.forked.preferredTipNodeId, placeOf(at).nodeId);
    assert.equal(forked.forked.downstreamRecap.entries.length, 4);
    assert.equal(forked.forked.downstreamRecap.truncated, true);
    const start = ok(await client.call("continue_workflow", { stateToken: states[1]!.stateToken }));
    assert.ok(start.recap, "a rehydrate always carries a recap");
    const short = ok(await client.call("continue_workflow", { stateToken: forked.stateToken }));
    assert.equal(short.recap.truncated, false);
    assert.equal(short.recap.omitted, 0);
    assert.deepEqual(
      short.recap.entries.map((e: Json) => e.notesMarkdown.slice(0, 7)),
      ["a diffe", "note 02", "note 01"],
    );
  } finally {
    await client?.close();
    await home.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("start_session is listed only behind its flag; its notes are found by resume_session", async () => {
  const home = await tempHome();
  // the v1 SDK client, as older MCP clients speak it, validates results against outputSchema
  const plain = await connect(home.home, { client: "v1" });
  try {
    const names = (await plain.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("resume_session"));
    assert.ok(!names.includes("start_session"));
    const run = ok(await plain.call("start_workflow", { workflowId: "waymark.code_review" }));
    const listed = ok(await plain.call("resume_session", {}));
    assert.equal(listed.candidates[0].runId, placeOf(run).runId);
  } finally {
    await plain.close();
  }
  const flagged = await connectRich(home.home, { env: { WAYMARK_ENABLE_START_SESSION: "1" } });
  try {
    assert.ok((await flagged.listTools()).tools.some((t) => t.name === "start_session"));
    const session = ok(
      await flagged.call("start_session", { title: "Pairing on flamingo metrics" }),
    );
    assert.equal(session.workflow.id, "waymark.session");
    assert.equal(session.warnings, undefined, "none: left out");
    ok(
      await flagged.call("checkpoint_workflow", {
        stateToken: session.stateToken,
        checkpointToken: session.checkpointToken,
        output: { notesMarkdown: "Dashboards moved to the ocelot cluster." },
      }),
    );
    const byNotes = ok(await flagged.call("resume_session", { query: "ocelot" }));
    assert.equal(byNotes.candidates.length, 1);
    assert.equal(byNotes.candidates[0].sessionId, session.session.sessionId);
    assert.equal(byNotes.candidates[0].sessionKind, "notes");
    const byTitle = ok(await flagged.call("resume_session", { query: "flamingo" }));
    assert.equal(byTitle.candidates[0].match, "title");
    const byId = ok(await flagged.call("resume_session", { query: session.session.sessionId }));
    assert.equal(byId.candidates[0].match, "id");
  } finally {
    await flagged.close();
    await home.cleanup();
  }
});
