/**
 * `deno task compile` builds the binary from the bundle where Deno's runtime stub can be had, and
 * says in one line, with no stack trace, that it cannot be downloaded where it cannot. The
 * download goes through a proxy that refuses every connection, so a machine with internet takes
 * the second path too unless the stub is already in Deno's cache (then the binary is checked).
 * The bundle is built, and its npm packages cached (with what Deno's task runner caches before
 * any task), before the proxy is set: only the stub's download meets it, whatever Deno's cache
 * held when the test began (a fresh machine has no esbuild for `deno bundle` and no packages).
 * With nothing cached at all, `scripts/compile.ts` fails in one line too, naming what the bundle
 * needs and could not fetch.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bundle } from "../../scripts/bundle.ts";
import { ROOT } from "../helpers/server.ts";

/** Runs `deno <args>` in the checkout, asserting it succeeds. */
async function deno(args: string[]): Promise<void> {
  const ran = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(ran.success, new TextDecoder().decode(ran.stderr));
}

/**
 * The inline bundle `deno task compile` would build, with its npm packages in Deno's cache, and
 * what Deno's task runner caches before it runs any task: every npm package the lockfile names,
 * the tests' too (denoland/deno#30887; `deno run -A scripts/compile.ts`, the second test, needs
 * only the bundle's).
 */
async function prebuiltBundle(dir: string): Promise<string> {
  const file = join(dir, "waymark.js");
  await bundle(file, "inline");
  await deno(["cache", "--quiet", file]);
  await deno(["install", "--quiet"]);
  return file;
}

Deno.test("deno task compile: a binary that says `binary`, or one clear line and exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-compile-" });
  const refused = "http://127.0.0.1:9"; // the discard port: nothing listens
  try {
    const binary = join(dir, "waymark");
    const prebuilt = await prebuiltBundle(dir);
    const task = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "compile", "--output", binary, "--bundle", prebuilt],
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

Deno.test("compile on an empty cache behind a refusing proxy: one line naming what it could not fetch", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-compile-" });
  const refused = "http://127.0.0.1:9";
  try {
    // `deno run`, not `deno task`: the task runner would first install the bundle's packages
    const task = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "scripts/compile.ts", "--output", join(dir, "waymark")],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
      env: {
        NO_COLOR: "1",
        DENO_DIR: join(dir, "deno"),
        HTTPS_PROXY: refused,
        HTTP_PROXY: refused,
        NO_PROXY: "",
      },
    }).output();
    const stderr = new TextDecoder().decode(task.stderr);
    assert.equal(task.code, 1, stderr);
    const lines = stderr.split("\n").filter((l) => l.trim() !== "");
    assert.equal(lines.length, 1, `one line, got:\n${stderr}`);
    assert.match(lines[0]!, /^compile: cannot fetch npm package \S+ \(https:\/\/\S+\): /);
    assert.doesNotMatch(stderr, /\bat |Stack backtrace|Caused by/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
