/**
 * A git workspace whose user allowlisted its verification commands, and a drive through its
 * workflow over MCP that checks every verification on the way (shared by the verification
 * tests over stdio and in the browser).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ok, tempHome, type TestClient } from "./server.ts";
import { placeOf } from "./answers.ts";

const CHECK = ["deno", "run", "--quiet", "--allow-read=.", "--allow-write=.", "check.ts"];

const WORKFLOW = {
  id: "project.verified",
  name: "Verified",
  description: "Steps whose checks the server runs.",
  version: "1.0.0",
  steps: [
    {
      id: "build",
      title: "Build",
      prompt: "Make the check pass.",
      verify: { run: CHECK, prompt: "The project's check." },
    },
    {
      id: "lint",
      title: "Lint",
      prompt: "Lint it.",
      verification: { command: "deno lint --quiet 'not allowed.ts'" },
    },
    {
      id: "slow",
      title: "Slow",
      prompt: "Wait for it.",
      verify: { run: ["deno", "run", "--quiet", "slow.ts"], timeoutSeconds: 1 },
    },
    { id: "done", title: "Done", prompt: "Finish." },
  ],
};

const CHECK_TS = `
const runs = await Deno.readTextFile("runs.log").catch(() => "");
await Deno.writeTextFile("runs.log", runs + "ran\\n");
const status = (await Deno.readTextFile("status.txt")).trim();
if (status !== "ok") {
  console.log("checking the status file");
  console.log("FAIL: status is " + status);
  Deno.exit(3);
}
console.log("all good");
`;

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

/** A git workspace with the workflow and its scripts, committed; the user's config allowing them. */
export async function verifiedWorkspace(): Promise<{
  home: string;
  workspace: string;
  head: string;
  cleanup(): Promise<void>;
}> {
  const { home, cleanup } = await tempHome();
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-ws-" }));
  await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(
    join(workspace, ".waymark", "workflows", "verified.json"),
    JSON.stringify(WORKFLOW),
  );
  await Deno.writeTextFile(join(workspace, "check.ts"), CHECK_TS);
  await Deno.writeTextFile(join(workspace, "status.txt"), "broken\n");
  await Deno.writeTextFile(
    join(workspace, "slow.ts"),
    "await new Promise((r) => setTimeout(r, 60_000));\n",
  );
  await Deno.writeTextFile(join(workspace, ".gitignore"), "runs.log\n");
  await git(workspace, "init", "-q");
  await git(workspace, "add", ".");
  await git(workspace, "commit", "-qm", "start");
  const head = await git(workspace, "rev-parse", "HEAD");
  await Deno.writeTextFile(
    join(home, "config.json"),
    JSON.stringify({
      verification: {
        workspaces: {
          [workspace]: {
            allow: ["deno run --quiet --allow-read=. --allow-write=. check.ts", "deno run *"],
            timeoutSeconds: 30,
            outputBytes: 2048,
            env: ["PATH", "HOME", "DENO_DIR"],
          },
        },
      },
    }),
  );
  return {
    home,
    workspace,
    head,
    cleanup: async () => {
      await cleanup();
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
    },
  };
}

/** How many times the check ran (its counter file's lines). */
export async function runs(workspace: string): Promise<number> {
  const text = await Deno.readTextFile(join(workspace, "runs.log")).catch(() => "");
  return text.split("\n").filter(Boolean).length;
}

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

async function ack(client: TestClient, from: Json, notes: string): Promise<Json> {
  return ok(
    await client.call("continue_workflow", {
      stateToken: from.stateToken,
      ackToken: from.ackToken,
      output: { notesMarkdown: notes },
    }),
  );
}

/** Where {@linkcode driveVerified} left its evidence. */
export interface Drove {
  /** `ses_…`. */
  sessionId: string;
  /** `run_…`. */
  runId: string;
  /** The blocked attempt whose check failed. */
  failedNodeId: string;
  /** The step node the passing check advanced to. */
  passedNodeId: string;
  /** The step node the disallowed command advanced to. */
  skippedNodeId: string;
}

/** Drives the workflow to its end over MCP, checking each verification. */
export async function driveVerified(
  client: TestClient,
  at: { workspace: string; head: string },
): Promise<Drove> {
  const { workspace, head } = at;
  const started = ok(await client.call("start_workflow", { workflowId: "project.verified" }));
  assert.match(
    started.pending.prompt,
    /## Verification\n`deno run --quiet --allow-read=\. --allow-write=\. check\.ts` must pass/,
  );

  // the check fails: blocked, with the end of its output as the reason
  const failed = await ack(client, started, "Built it.");
  assert.equal(failed.kind, "blocked");
  assert.equal(await runs(workspace), 1);
  assert.equal(failed.blockers[0].code, "VERIFICATION_FAILED");
  assert.match(failed.blockers[0].message, /exited with 3: .*FAIL: status is broken/s);
  assert.match(failed.blockers[0].suggestedFix, /acknowledge again/);
  const evidence = failed.verification;
  assert.equal(evidence.verdict, "failed");
  assert.equal(evidence.exitCode, 3);
  assert.deepEqual(evidence.command, ["deno", ...CHECK.slice(1)]);
  assert.match(evidence.stdoutTail, /FAIL: status is broken/);
  assert.equal(evidence.gitHead, head);
  assert.equal(evidence.gitDirty, false, "runs.log is ignored: the tree is clean");
  assert.equal(evidence.timedOut, false);
  assert.ok(evidence.durationMs >= 0);

  // a replay answers the recorded verdict and runs nothing
  const again = await ack(client, started, "Built it.");
  assert.deepEqual(again, failed);
  assert.equal(await runs(workspace), 1, "a replay never reruns the command");
  const text = (await client.call("continue_workflow", {
    stateToken: started.stateToken,
    ackToken: started.ackToken,
    output: { notesMarkdown: "Built it." },
  })).content[0]!.text;
  assert.match(text, /BLOCKED[\s\S]*\[VERIFICATION_FAILED\]/);
  assert.match(
    text,
    /Verification: waymark ran `deno run [^`]*check\.ts`: failed \(exit 3, [\d.]+ s, HEAD [0-9a-f]{12}\)\./,
  );
  assert.equal(await runs(workspace), 1);

  // fixed: the new ack token runs it again, and it passes
  await Deno.writeTextFile(join(workspace, "status.txt"), "ok\n");
  const passed = await ack(client, failed, "Fixed the status.");
  assert.equal(passed.kind, "ok");
  assert.equal(passed.pending.stepId, "lint");
  assert.equal(passed.verification.verdict, "passed");
  assert.equal(passed.verification.exitCode, 0);
  assert.equal(passed.verification.gitDirty, true, "status.txt changed since the commit");
  assert.equal(await runs(workspace), 2);
  assert.deepEqual(await ack(client, failed, "Fixed the status."), passed);
  assert.equal(await runs(workspace), 2, "a replay of the passing ack reruns nothing either");

  // not allowed: a warning naming the command and the config, the step advances on prose
  assert.match(passed.pending.prompt, /`deno lint --quiet 'not allowed\.ts'`/);
  const linted = await ack(client, passed, "Linted by hand: clean.");
  assert.equal(linted.kind, "ok");
  assert.equal(linted.pending.stepId, "slow");
  const notice = linted.warnings.find((w: Json) => w.code === "VERIFICATION_NOT_ALLOWED");
  assert.ok(notice, JSON.stringify(linted.warnings));
  assert.match(notice.message, /no command pattern the user allowed.*config\.json/);
  assert.equal(linted.verification.verdict, "not_allowed");

  // a command past its timeout is killed, and blocks
  const t0 = performance.now();
  const slow = await ack(client, linted, "Waited.");
  assert.ok(performance.now() - t0 < 20_000, "killed at its timeout, not after 60 s");
  assert.equal(slow.kind, "blocked");
  assert.equal(slow.verification.verdict, "timed_out");
  assert.equal(slow.verification.timedOut, true);
  assert.equal(slow.verification.timeoutSeconds, 1);
  assert.match(slow.blockers[0].message, /timed out after 1 s/);
  await Deno.writeTextFile(join(workspace, "slow.ts"), "console.log('quick now');\n");
  const quick = await ack(client, slow, "Made it quick.");
  assert.equal(quick.kind, "ok");
  assert.equal(quick.pending.stepId, "done");
  assert.equal(quick.verification.verdict, "passed");

  // a recap says what each step's verification came to
  const rehydrated = await client.call("continue_workflow", { stateToken: quick.stateToken });
  const recap = ok(rehydrated).recap.entries.map((e: Json) => [e.stepId, e.verification]);
  assert.deepEqual(recap.map(([step, v]: Json[]) => [step, v?.verdict]), [
    ["slow", "passed"],
    ["lint", "not_allowed"],
    ["build", "passed"],
  ]);
  assert.equal(recap[2][1].gitHead, head);
  assert.match(
    rehydrated.content[0]!.text,
    /\[build\] Fixed the status\.\n  Verification: `deno run [^`]*check\.ts` passed at [0-9a-f]{12} \(dirty\)/,
  );
  return {
    sessionId: started.session.sessionId,
    runId: placeOf(started).runId,
    failedNodeId: failed.blockedAttempt.nodeId,
    passedNodeId: placeOf(passed).nodeId,
    skippedNodeId: placeOf(linted).nodeId,
  };
}
