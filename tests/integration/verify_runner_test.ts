/**
 * The verification runner on real processes: only the listed environment reaches the command,
 * the output kept is the end of each stream within the cap (and says so), a folder that leaves
 * the workspace through a symlink is refused before anything runs, a missing program is an
 * error rather than a throw, and git HEAD and dirtiness are `null` outside a repository.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { evidenceOf, type VerificationRequest } from "../../engine/verification/policy.ts";
import { runVerification } from "../../tools/context/verify_runner.ts";

const DENO = Deno.execPath();

function request(workspace: string, argv: string[], extra: Partial<VerificationRequest> = {}) {
  return { workspace, cwd: null, argv, timeoutMs: 30_000, outputBytes: 1024, env: [], ...extra };
}

Deno.test("the runner passes only the listed environment, keeps each stream's end, confines the folder", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-runner-" }));
  const workspace = join(root, "ws");
  const outside = join(root, "outside");
  await Deno.mkdir(join(workspace, "sub"), { recursive: true });
  await Deno.mkdir(outside);
  await Deno.symlink(outside, join(workspace, "escape"));
  await Deno.writeTextFile(
    join(workspace, "sub", "env.ts"),
    `console.log("ok"); console.error("x".repeat(5000) + "END");`,
  );
  try {
    // PATH is in this process's environment (as a secret would be) and not listed
    assert.ok(Deno.env.get("PATH"));
    const listed = await runVerification(request(workspace, ["/usr/bin/env"], { env: ["HOME"] }));
    assert.equal(listed.exitCode, 0, listed.error ?? listed.stderrTail);
    const names = listed.stdoutTail.trim().split("\n").map((l) => l.split("=")[0]);
    assert.deepEqual(names, ["HOME"], "only the listed variables: no PATH, no secret");
    const env = await runVerification(
      request(workspace, [DENO, "run", "--quiet", "env.ts"], {
        cwd: "sub",
        env: ["HOME", "DENO_DIR"],
        outputBytes: 2048,
      }),
    );
    assert.equal(env.exitCode, 0, env.stderrTail);
    assert.ok(env.stderrTail.endsWith("END\n"));
    assert.equal(new TextEncoder().encode(env.stderrTail).length, 2048);
    assert.equal(env.outputBytes.stderr, 5004);
    assert.equal(env.gitHead, null);
    assert.equal(env.gitDirty, null, "not a git repository");
    const evidence = evidenceOf(request(workspace, ["x"]), env);
    assert.equal(evidence.truncated, true);

    const escaped = await runVerification(
      request(workspace, [DENO, "--version"], { cwd: "escape" }),
    );
    assert.match(escaped.error ?? "", /resolves outside the workspace/);
    assert.equal(escaped.exitCode, null);

    const missing = await runVerification(request(workspace, ["no-such-program-waymark"]));
    assert.match(missing.error ?? "", /ENOENT/);
    assert.equal(evidenceOf(request(workspace, ["x"]), missing).verdict, "error");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
