/**
 * `deno task compile` builds the binary from the bundle where Deno's runtime stub can be had, and
 * says in one line, with no stack trace, that it cannot be downloaded where it cannot. The
 * download goes through a proxy that refuses every connection, so a machine with internet takes
 * the second path too unless the stub is already in Deno's cache (then the binary is checked).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../helpers/server.ts";

Deno.test("deno task compile: a binary that says `binary`, or one clear line and exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-compile-" });
  const refused = "http://127.0.0.1:9"; // the discard port: nothing listens
  try {
    const binary = join(dir, "waymark");
    const task = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "compile", "--output", binary],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1", HTTPS_PROXY: refused, HTTP_PROXY: refused, NO_PROXY: "" },
    }).output();
    const stderr = new TextDecoder().decode(task.stderr);
    if (task.success) {
      const version = await new Deno.Command(binary, { args: ["--version"], stdout: "piped" })
        .output();
      assert.match(new TextDecoder().decode(version.stdout), /^waymark \S+ \(binary\)\n$/);
      return;
    }
    assert.equal(task.code, 1);
    const lines = stderr.split("\n").filter((l) => l.trim() !== "");
    assert.equal(lines.length, 1, `one line, got:\n${stderr}`);
    assert.match(lines[0]!, /^compile: cannot download Deno's runtime stub \(denort /);
    assert.match(lines[0]!, /run `deno task compile` where there is internet/);
    assert.doesNotMatch(stderr, /\bat |Stack backtrace|Caused by/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
