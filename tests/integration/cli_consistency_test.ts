/**
 * The command line reads the same for files, ids and flags: `--json` prints JSON wherever it is
 * taken, a missing file is said plainly, a mistyped flag gets our own message with the nearest
 * flag, a run's id names its session, and a home that is a file is said so by every command.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../helpers/maintenance.ts";
import { connect, ok, tempHome } from "../helpers/server.ts";

/** Whether every quote and backtick in `text` is closed. */
function balanced(text: string): boolean {
  return ["`", "'", '"'].every((q) => text.split(q).length % 2 === 1);
}

Deno.test("workflows list and inspect --json print JSON", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const list = await runCli(["workflows", "list", "--json"], { home });
    assert.equal(list.code, 0, list.err);
    const ids = JSON.parse(list.out).workflows.map((w: { id: string }) => w.id);
    assert.ok(ids.some((id: string) => id.endsWith(".bug_investigation")), list.out.slice(0, 200));
    const one = await runCli(["workflows", "inspect", "wr.bug_investigation", "--json"], { home });
    assert.equal(one.code, 0, one.err);
    assert.match(JSON.parse(one.out).workflow.id, /\.bug_investigation$/);
  } finally {
    await cleanup();
  }
});

Deno.test("workflows validate on a missing file says so plainly", async () => {
  const missing = join(await Deno.makeTempDir(), "nope.json");
  const ran = await runCli(["workflows", "validate", missing]);
  assert.equal(ran.code, 1);
  assert.equal(ran.err, `${missing}: cannot read it: no such file (check the path)\n`);
});

Deno.test("a mistyped flag is named with the nearest one the command takes; another command's flag is refused", async () => {
  const typo = await runCli(["serve", "--viewr"]);
  assert.equal(typo.code, 2);
  assert.match(typo.err, /^unknown flag --viewr for `waymark serve`; did you mean --viewer\?/);
  assert.ok(balanced(typo.err), typo.err);
  const far = await runCli(["workflows", "list", "--jsno"]);
  assert.match(far.err, /did you mean --json\?/);
  const other = await runCli(["gc", "--viewer"]);
  assert.equal(other.code, 2);
  assert.match(other.err, /^`waymark gc` does not take --viewer/);
  assert.ok(balanced(other.err), other.err);
});

Deno.test("sessions show and export take a run's id and act on its session", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const client = await connect(home);
    const started = ok(await client.call("start_workflow", { workflowId: "wr.bug_investigation" }));
    await client.close();
    const { sessionId, runId } = started.session;
    assert.match(runId, /^run_/);
    const shown = await runCli(["sessions", "show", runId, "--json"], { home });
    assert.equal(shown.code, 0, shown.err);
    assert.equal(JSON.parse(shown.out).session.sessionId, sessionId);
    const exported = await runCli(["sessions", "export", runId], { home });
    assert.equal(exported.code, 0, exported.err);
    assert.match(exported.err, new RegExp(`exported ${sessionId}`));
    const unknown = await runCli(["sessions", "show", "run_00000000000000ff"], { home });
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /no session run_00000000000000ff here/);
  } finally {
    await cleanup();
  }
});

Deno.test("a home that is a file is said so by doctor and every other command", async () => {
  const dir = await Deno.makeTempDir();
  const file = join(dir, "home");
  await Deno.writeTextFile(file, "");
  try {
    for (
      const args of [
        ["doctor"],
        ["keys", "rotate"],
        ["sessions", "list"],
        ["gc", "--older-than", "1d"],
        // loaded without the commands, it checks the home all the same
        ["setup", "--client", "cursor", "--print"],
      ]
    ) {
      const ran = await runCli([...args, "--home", file]);
      assert.equal(ran.code, 1, args.join(" "));
      assert.match(ran.err, new RegExp(`home ${file} is a file, not a folder`), args.join(" "));
      assert.doesNotMatch(ran.err, /does not exist|fatal|ENOTDIR/, args.join(" "));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
