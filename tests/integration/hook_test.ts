/**
 * `waymark hook session-start`, as a host's hook runs it: the real command in its own process,
 * the hook's JSON on stdin, against a real libSQL file holding runs made by the real engine.
 * Open runs of the workspace (none, one, many: most recent first, at most three), complete,
 * delegated-elsewhere and other-folder runs left out, a token that really rehydrates, the store
 * left byte for byte as it was, and every error path printing nothing on stdout, one line on
 * stderr, and exiting 0.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openWaymark, type Waymark } from "../../mod.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { MAIN } from "../helpers/server.ts";
import { type Ran, runWithInput } from "../helpers/process.ts";
import { writeProjectWorkflow } from "../helpers/workflows.ts";
import { keepSession } from "../helpers/answers.ts";
import { PARENT_ID, writeDelegationWorkflows } from "../helpers/delegation.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** Runs `waymark hook <args>` with `input` on stdin. */
function runHook(
  args: string[],
  options: { home: string; input?: string; cwd?: string; env?: Record<string, string> },
): Promise<Ran> {
  return runWithInput(Deno.execPath(), [
    "run",
    "-A",
    "--quiet",
    MAIN,
    "hook",
    ...args,
    "--home",
    options.home,
  ], {
    cwd: options.cwd,
    env: { WAYMARK_DB_URL: "", ...options.env },
    stdin: options.input,
  });
}

/** The hook's JSON input as Claude Code sends it. */
function claudeInput(cwd: string, source = "startup"): string {
  return JSON.stringify({
    session_id: crypto.randomUUID(),
    transcript_path: "/nowhere/transcript.jsonl",
    cwd,
    hook_event_name: "SessionStart",
    source,
  });
}

/** A fresh home and a workspace folder (a git repository with a subfolder). */
async function setting(): Promise<{ home: string; workspace: string; cleanup(): Promise<void> }> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-hook-" }));
  const workspace = join(root, "project");
  await Deno.mkdir(join(workspace, ".git"), { recursive: true });
  await Deno.mkdir(join(workspace, "sub"));
  await writeProjectWorkflow(workspace, { id: "project.two", steps: 2 });
  await writeProjectWorkflow(workspace, { id: "project.five", steps: 5 });
  return {
    home: join(root, "home"),
    workspace,
    cleanup: () => Deno.remove(root, { recursive: true }),
  };
}

/** Starts a run recorded in `workspace` (as the MCP adapter records its caller's folder). */
async function start(
  waymark: Waymark,
  at: { workspace: string; workflowId: string; goal: string },
): Promise<Json> {
  const result = await startWorkflow(waymark.deps, {
    workflowId: at.workflowId,
    goal: at.goal,
  }, { workspace: { workspace: at.workspace, gitBranch: "main", gitHeadSha: null } });
  assert.ok(result.ok, JSON.stringify(result));
  // distinct update times, so "most recent first" has one answer
  await new Promise((wake) => setTimeout(wake, 15));
  return result.value as Json;
}

async function advance(waymark: Waymark, from: Json): Promise<Json> {
  const result = await continueWorkflow(waymark.deps, {
    stateToken: from.stateToken,
    ackToken: from.ackToken,
    output: { notesMarkdown: `Did ${from.pending.stepId}.` },
  });
  assert.ok(result.ok, JSON.stringify(result));
  await new Promise((wake) => setTimeout(wake, 15));
  return keepSession(result.value as Json & { stateToken: string }, from);
}

async function digest(path: string): Promise<string> {
  const bytes = await Deno.readFile(path).catch(() => new Uint8Array());
  return Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))).join(",");
}

Deno.test("no database, or no open run in this workspace: nothing at all", async () => {
  const at = await setting();
  try {
    const none = await runHook(["session-start"], {
      home: at.home,
      input: claudeInput(at.workspace),
    });
    assert.deepEqual(none, { code: 0, stdout: "", stderr: "" });
    assert.equal(await Deno.stat(at.home).catch(() => null), null, "the hook created the home");

    const waymark = await openWaymark({ home: at.home, workspace: at.workspace });
    try {
      const elsewhere = await start(waymark, {
        workspace: "/somewhere/else",
        workflowId: "project.two",
        goal: "not here",
      });
      const done = await advance(
        waymark,
        await advance(
          waymark,
          await start(waymark, {
            workspace: at.workspace,
            workflowId: "project.two",
            goal: "finished already",
          }),
        ),
      );
      assert.equal(done.isComplete, true);
      assert.equal(elsewhere.isComplete, false);
    } finally {
      await waymark.close();
    }
    const quiet = await runHook(["session-start"], {
      home: at.home,
      input: claudeInput(at.workspace),
    });
    assert.deepEqual(quiet, { code: 0, stdout: "", stderr: "" });
  } finally {
    await at.cleanup();
  }
});

Deno.test("one open run: workflow, pending step and a stateToken that rehydrates it", async () => {
  const at = await setting();
  const waymark = await openWaymark({ home: at.home, workspace: at.workspace });
  try {
    const first = await start(waymark, {
      workspace: at.workspace,
      workflowId: "project.five",
      goal: "Checkout\ntimes out\u001b[2J under load",
    });
    const second = await advance(waymark, first);
    for (const source of ["startup", "resume", "clear", "compact"]) {
      // from the repository's subfolder too: the runs of the folders up to its root
      const cwd = source === "clear" ? join(at.workspace, "sub") : at.workspace;
      const out = await runHook(["session-start"], {
        home: at.home,
        input: claudeInput(cwd, source),
      });
      assert.equal(out.code, 0);
      assert.equal(out.stderr, "");
      assert.match(out.stdout, /^waymark: an open workflow run in this workspace\. /);
      assert.ok(
        out.stdout.includes(
          `${second.session.runId} project.five "Checkout times out [2J under load"`,
        ),
        out.stdout,
      );
      assert.ok(out.stdout.includes(`pending: step \`s02\` "Step 2"`), out.stdout);
      const token = /continue_workflow \{"stateToken": "(st1_[A-Za-z0-9_-]+)"\}/.exec(out.stdout)
        ?.[1];
      assert.ok(token, out.stdout);
      const rehydrated = await continueWorkflow(waymark.deps, { stateToken: token });
      assert.ok(rehydrated.ok, JSON.stringify(rehydrated));
      assert.equal((rehydrated.value as Json).pending.stepId, "s02");
      assert.equal((rehydrated.value as Json).session.runId, second.session.runId);
    }
  } finally {
    await waymark.close();
    await at.cleanup();
  }
});

Deno.test("many open runs: the three most recent first, and a pointer to the rest", async () => {
  const at = await setting();
  const waymark = await openWaymark({ home: at.home, workspace: at.workspace });
  const runIds: string[] = [];
  try {
    for (const goal of ["oldest", "older", "middle", "newer"]) {
      const started = await start(waymark, {
        workspace: at.workspace,
        workflowId: "project.two",
        goal,
      });
      runIds.push(started.session.runId);
    }
    // advancing the oldest makes it the most recently changed
    const oldest = await startWorkflow(
      waymark.deps,
      { workflowId: "project.five", goal: "newest" },
      {
        workspace: { workspace: at.workspace, gitBranch: null, gitHeadSha: null },
      },
    );
    assert.ok(oldest.ok);
    await new Promise((wake) => setTimeout(wake, 15));
    await advance(waymark, oldest.value as Json);
    runIds.push((oldest.value as Json).session.runId);
  } finally {
    await waymark.close();
  }
  try {
    const db = join(at.home, "waymark.db");
    const before = [await digest(db), await digest(`${db}-wal`)];
    const out = await runHook(["session-start"], {
      home: at.home,
      input: claudeInput(at.workspace),
    });
    assert.equal(out.code, 0);
    assert.equal(out.stderr, "");
    const listed = [...out.stdout.matchAll(/^\d\. (run_[0-9a-f]+) /gm)].map((m) => m[1]);
    assert.deepEqual(listed, [runIds[4], runIds[3], runIds[2]]);
    assert.match(out.stdout, /^waymark: open workflow runs in this workspace, most recent first\./);
    assert.match(out.stdout, /pending: step `s02` "Step 2"/);
    assert.match(out.stdout, /\nMore open runs: resume_session \{\} lists them\.\n$/);
    assert.deepEqual([await digest(db), await digest(`${db}-wal`)], before, "the store changed");

    // without a keyring the runs are still named, with the resume_session call for each
    await Deno.remove(join(at.home, "keys.json"));
    const keyless = await runHook(["session-start"], {
      home: at.home,
      input: claudeInput(at.workspace),
    });
    assert.equal(keyless.stderr, "");
    assert.equal(keyless.stdout.includes('stateToken": "st1_'), false);
    assert.ok(keyless.stdout.includes(`resume_session {"query": "${runIds[4]}"}`), keyless.stdout);
  } finally {
    await at.cleanup();
  }
});

Deno.test("a parallel step's child runs are left out: their parent is listed, and its answer lists them", async () => {
  const at = await setting();
  await writeDelegationWorkflows(at.workspace);
  const waymark = await openWaymark({ home: at.home, workspace: at.workspace });
  const here = { workspace: { workspace: at.workspace, gitBranch: null, gitHeadSha: null } };
  let parentRunId: string;
  try {
    const started = await start(waymark, {
      workspace: at.workspace,
      workflowId: PARENT_ID,
      goal: "fan out",
    });
    parentRunId = started.session.runId;
    const parallel = await continueWorkflow(waymark.deps, {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      context: { area: "billing", hasUi: false },
      output: { notesMarkdown: "Area: billing." },
    }, here);
    assert.ok(parallel.ok, JSON.stringify(parallel));
    const [first] = (parallel.value as Json).delegations;
    // a subagent takes the child up and advances it from this same folder
    const child = await startWorkflow(waymark.deps, { delegationToken: first.delegationToken });
    assert.ok(child.ok, JSON.stringify(child));
    await new Promise((wake) => setTimeout(wake, 15));
    const read = await continueWorkflow(waymark.deps, {
      stateToken: (child.value as Json).stateToken,
      ackToken: (child.value as Json).ackToken,
      output: { notesMarkdown: "Read it." },
    }, here);
    assert.ok(read.ok && !read.value.isComplete, JSON.stringify(read));
  } finally {
    await waymark.close();
  }
  try {
    const out = await runHook(["session-start"], {
      home: at.home,
      input: claudeInput(at.workspace),
    });
    assert.equal(out.stderr, "");
    const listed = [...out.stdout.matchAll(/^\d\. (run_[0-9a-f]+) /gm)].map((m) => m[1]);
    assert.deepEqual(listed, [parentRunId]);
    assert.match(out.stdout, /pending: step `reviews` "Parallel reviews"/);
  } finally {
    await at.cleanup();
  }
});

Deno.test("every error prints nothing on stdout, one line on stderr, and exits 0", async () => {
  const at = await setting();
  const waymark = await openWaymark({ home: at.home, workspace: at.workspace });
  try {
    await start(waymark, { workspace: at.workspace, workflowId: "project.two", goal: "open" });
  } finally {
    await waymark.close();
  }
  const oneLine = (run: Ran, pattern: RegExp) => {
    assert.equal(run.code, 0);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, pattern);
    assert.equal(run.stderr.trimEnd().split("\n").length, 1, run.stderr);
  };
  try {
    const input = claudeInput(at.workspace);
    oneLine(
      await runHook(["session-start"], { home: at.home, input: "{not json" }),
      /^waymark hook session-start: .*JSON/,
    );
    oneLine(
      await runHook(["session-start"], { home: at.home, input: '{"cwd": 7}' }),
      /not a JSON object with a string cwd/,
    );
    oneLine(
      await runHook(["bedtime"], { home: at.home, input }),
      /^waymark hook: expected one event \(session-start\)/,
    );
    oneLine(
      await runHook(["session-start"], {
        home: at.home,
        input,
        env: { WAYMARK_DB_URL: "postgres://u:secret@db.invalid/w" },
      }),
      /reads only a database file, not postgres:\/\/u:\*\*\*@db\.invalid\/w/,
    );
    await Deno.writeTextFile(join(at.home, "keys.json"), '{"version": 1}');
    oneLine(await runHook(["session-start"], { home: at.home, input }), /is not a waymark keyring/);
    await Deno.writeTextFile(join(at.home, "waymark.db"), "this is not a database, just text");
    await Deno.remove(join(at.home, "waymark.db-wal")).catch(() => {});
    await Deno.remove(join(at.home, "waymark.db-shm")).catch(() => {});
    oneLine(
      await runHook(["session-start"], { home: at.home, input }),
      /^waymark hook session-start: /,
    );
  } finally {
    await at.cleanup();
  }
});
