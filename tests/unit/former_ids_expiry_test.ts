/**
 * waymark's former bundled ids (`wr.<name>`) are aliases of `waymark.<name>` until
 * `FORMER_IDS_UNTIL`: this test fails once waymark's version (`deno.json`, read by
 * `version.ts`) reaches that release while the alias still resolves, so the alias is removed
 * (with `docs/workflows.md`'s paragraph) rather than forgotten.
 */
import assert from "node:assert/strict";
import { FORMER_IDS_UNTIL, formerBundledAlias } from "../../engine/workflow/workflow_ids.ts";
import { VERSION } from "../../version.ts";

/** `a` compared with `b` as `major.minor.patch` (a pre-release counts as its release). */
function compareVersions(a: string, b: string): number {
  const parts = (v: string) => {
    const m = /^(\d+)\.(\d+)\.(\d+)/.exec(v);
    assert.ok(m, `${v} is not a version`);
    return [Number(m[1]), Number(m[2]), Number(m[3])];
  };
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

/** Whether the `wr.` alias should be gone at `version`, and is not. */
function overdue(version: string, aliasResolves: boolean): boolean {
  return aliasResolves && compareVersions(version, FORMER_IDS_UNTIL) >= 0;
}

Deno.test(`the wr. alias is gone by waymark ${FORMER_IDS_UNTIL}`, () => {
  const resolves = formerBundledAlias("wr.code_review") !== null;
  assert.ok(
    !overdue(VERSION, resolves),
    `waymark ${VERSION} has reached ${FORMER_IDS_UNTIL}: remove the wr. alias ` +
      "(formerBundledAlias, FORMER_IDS_UNTIL and their callers, docs/workflows.md)",
  );
});

Deno.test("the expiry check fires at the release and after it, not before", () => {
  assert.equal(overdue("0.2.9", true), false);
  assert.equal(overdue(FORMER_IDS_UNTIL, true), true);
  assert.equal(overdue("0.3.1", true), true);
  assert.equal(overdue("1.0.0", true), true);
  assert.equal(overdue("1.0.0", false), false, "gone: nothing to do");
  assert.equal(compareVersions("0.10.0", "0.9.0") > 0, true, "numeric, not textual");
});
