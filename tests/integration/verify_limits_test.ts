/**
 * Verification leaves nothing behind and takes turns: a check that starts a background helper
 * and exits 0 has its helper ended with it once the step advances; twenty agents acknowledging
 * verified steps at once run at most the configured number of commands at a time (the commands
 * themselves log their start and end), all twenty complete, and a waiting agent is told through
 * a progress notification.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { connectRich, ok, tempHome } from "../helpers/server.ts";

const AT_ONCE = 3;

const WORKFLOW = {
  id: "project.checked",
  name: "Checked",
  description: "One step whose check the server runs.",
  version: "1",
  steps: [
    { id: "check", title: "Check", prompt: "Make it pass.", verify: { run: ["sh", "check.sh"] } },
    {
      id: "helper",
      title: "Helper",
      prompt: "Start a helper.",
      verify: { run: ["sh", "helper.sh"] },
    },
    { id: "done", title: "Done", prompt: "Finish." },
  ],
};

// each run logs its start and end around a short sleep, appending one line at a time
const CHECK_SH = `echo "start $$" >> turns.log\nsleep 0.4\necho "end $$" >> turns.log\n`;
// a helper left in the background, detached from the pipes, and the check exits 0 at once
const HELPER_SH = `sleep 300 >/dev/null 2>&1 &\necho $! > helper.pid\nexit 0\n`;

async function workspace() {
  const { home, cleanup } = await tempHome();
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-turns-" }));
  await Deno.mkdir(join(ws, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(join(ws, ".waymark", "workflows", "c.json"), JSON.stringify(WORKFLOW));
  await Deno.writeTextFile(join(ws, "check.sh"), CHECK_SH);
  await Deno.writeTextFile(join(ws, "helper.sh"), HELPER_SH);
  await Deno.writeTextFile(
    join(home, "config.json"),
    JSON.stringify({
      verification: {
        maxConcurrent: AT_ONCE,
        workspaces: { [ws]: { allow: ["sh check.sh", "sh helper.sh"], env: ["PATH"] } },
      },
    }),
  );
  return {
    home,
    ws,
    cleanup: async () => {
      await cleanup();
      await Deno.remove(ws, { recursive: true }).catch(() => {});
    },
  };
}

/** The acknowledgement of the step `at` answered. */
// deno-lint-ignore no-explicit-any
function ack(at: Record<string, any>) {
  return { stateToken: at.stateToken, ackToken: at.ackToken, output: { notesMarkdown: "Done." } };
}

/** A process's state letter (`R`, `S`, `Z`, ...), or `null` when it is gone. */
async function state(pid: number): Promise<string | null> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => null);
  return stat === null ? null : stat.slice(stat.lastIndexOf(")") + 2)[0]!;
}

/** Whether a process runs (a zombie waiting to be reaped does not). */
async function running(pid: number): Promise<boolean> {
  const now = await state(pid);
  return now !== null && now !== "Z";
}

/**
 * Whether a process still runs a second after: a process killed is gone once the kernel next
 * schedules it, which on a busy machine is not at once.
 */
async function survives(pid: number): Promise<boolean> {
  for (let i = 0; i < 20 && await running(pid); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return await running(pid);
}

Deno.test("a check's background helper is ended with it when the step advances", async () => {
  const t = await workspace();
  const client = await connectRich(t.home, { cwd: t.ws });
  let helper = 0;
  try {
    const started = ok(await client.call("start_workflow", { workflowId: "project.checked" }));
    const checked = ok(await client.call("continue_workflow", ack(started)));
    assert.equal(checked.pending.stepId, "helper");
    const advanced = ok(await client.call("continue_workflow", ack(checked)));
    assert.equal(advanced.verification.verdict, "passed");
    assert.equal(advanced.pending.stepId, "done");
    helper = Number((await Deno.readTextFile(join(t.ws, "helper.pid"))).trim());
    assert.ok(helper > 0);
    assert.equal(
      await survives(helper),
      false,
      `helper ${helper} outlived its check (state ${await state(helper)})`,
    );
  } finally {
    if (helper > 0 && await running(helper)) Deno.kill(helper, "SIGKILL");
    await client.close();
    await t.cleanup();
  }
});

Deno.test("twenty verified acknowledgements at once run at most the configured number of commands at a time, and all complete", async () => {
  const t = await workspace();
  const client = await connectRich(t.home, { cwd: t.ws });
  try {
    const starts: Record<string, unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      starts.push(ok(await client.call("start_workflow", { workflowId: "project.checked" })));
    }
    const told: { progress: number; message?: string }[] = [];
    const answers = await Promise.all([
      ...starts.slice(1).map((s) => client.call("continue_workflow", ack(s))),
      // the last to ask waits behind the others, and hears so
      new Promise<void>((r) => setTimeout(r, 100)).then(() =>
        client.callWithProgress("continue_workflow", ack(starts[0]), (p) => told.push(p))
      ),
    ]);
    for (const a of answers) {
      const done = ok(a);
      assert.equal(done.verification.verdict, "passed");
      assert.equal(done.pending.stepId, "helper");
    }
    const lines = (await Deno.readTextFile(join(t.ws, "turns.log"))).trim().split("\n");
    assert.equal(lines.filter((l) => l.startsWith("start")).length, 20);
    assert.equal(lines.filter((l) => l.startsWith("end")).length, 20);
    let now = 0;
    let most = 0;
    for (const line of lines) {
      now += line.startsWith("start") ? 1 : -1;
      most = Math.max(most, now);
    }
    assert.equal(most, AT_ONCE, `at most ${AT_ONCE} at once, and the limit was used: ${lines}`);
    assert.ok(told.length >= 1, "the waiting agent was told");
    assert.match(told[0]!.message ?? "", new RegExp(`at most ${AT_ONCE} at once`));
  } finally {
    await client.close();
    await t.cleanup();
  }
});
