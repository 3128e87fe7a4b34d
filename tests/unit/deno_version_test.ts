/**
 * The Deno version waymark is built, tested and released with is chosen in one place, `.dvmrc`
 * (read by `.ci/run` and `.ci/conformance.sh`; the format Deno version managers read). What
 * cannot read it, the release workflow's `DENO_VERSION` and the commands the docs show, are
 * copies, and this test fails while one differs. A record of what a past run used (a bench
 * run's machine in `docs/performance.md`) is history, not a copy, and is written otherwise.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../helpers/server.ts";

/** Where copies may be written: the docs, the README, CI and the release workflow. */
async function documents(): Promise<string[]> {
  const out = ["README.md", ".ci/run", ".ci/conformance.sh"];
  for (const dir of ["docs", ".github/workflows"]) {
    for await (const entry of Deno.readDir(join(ROOT, dir))) {
      if (entry.isFile) out.push(`${dir}/${entry.name}`);
    }
  }
  return out.sort();
}

/** Each version a text names for Deno: `deno@X.Y.Z`, `Deno X.Y.Z`, `DENO_VERSION: "X.Y.Z"`. */
function denoVersionsIn(text: string): string[] {
  const pattern =
    /\bdeno@(\d+\.\d+\.\d+)|\bDeno (\d+\.\d+\.\d+)|DENO_VERSION\W{1,4}(\d+\.\d+\.\d+)/gi;
  return [...text.matchAll(pattern)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

Deno.test("every copy of the Deno version names the one .dvmrc chooses", async () => {
  const chosen = (await Deno.readTextFile(join(ROOT, ".dvmrc"))).trim();
  assert.match(chosen, /^\d+\.\d+\.\d+$/);
  const differing: string[] = [];
  let copies = 0;
  for (const file of await documents()) {
    for (const version of denoVersionsIn(await Deno.readTextFile(join(ROOT, file)))) {
      copies++;
      if (version !== chosen) differing.push(`${file}: ${version}`);
    }
  }
  assert.deepEqual(differing, [], `.dvmrc says ${chosen}`);
  assert.ok(copies >= 10, `the copies were found (${copies})`);
});

Deno.test("the copy finder sees each way a version is written", () => {
  assert.deepEqual(
    denoVersionsIn('npx --yes deno@2.9.6 task; with Deno 2.8.0; DENO_VERSION: "2.7.1"'),
    ["2.9.6", "2.8.0", "2.7.1"],
  );
  assert.deepEqual(denoVersionsIn('DENO_VERSION="$(tr -d x < .dvmrc)"'), []);
});
