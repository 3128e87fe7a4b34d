/**
 * The npm package for Node >= 20: `deno task build:npm` builds `dist/`, then Node's own test
 * runner runs `tests/node/` against it (pack, install from the tarball, import by package name,
 * walk a workflow on a real libSQL file, type-check a consumer). Node's output is shown on
 * failure.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function sh(cmd: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  const result = await new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const decoder = new TextDecoder();
  return {
    ok: result.success,
    output: `${decoder.decode(result.stdout)}${decoder.decode(result.stderr)}`,
  };
}

Deno.test("npm build: Node >= 20 imports the built package and runs a workflow on a libSQL file", async () => {
  const node = await sh("node", ["--version"]).catch(() => null);
  assert.ok(node?.ok, "node is not installed (the npm package is tested on Node >= 20)");
  const major = Number(node.output.trim().replace(/^v/, "").split(".")[0]);
  assert.ok(major >= 20, `Node >= 20 needed, found ${node.output.trim()}`);

  const build = await sh(Deno.execPath(), ["run", "-A", "scripts/build_npm.ts"]);
  assert.ok(build.ok, `deno task build:npm failed:\n${build.output}`);

  const files: string[] = [];
  for await (const entry of Deno.readDir(join(ROOT, "tests", "node"))) {
    if (entry.isFile && entry.name.endsWith(".test.mjs")) files.push(`tests/node/${entry.name}`);
  }
  assert.ok(files.length > 0, "tests/node/ has tests");
  const tests = await sh("node", ["--test", ...files.sort()]);
  assert.ok(tests.ok, `node --test failed:\n${tests.output}`);
  assert.match(tests.output, /# fail 0/);
});
