/**
 * The review pipeline's pure parts: globs relative to a rule's folder, project paths that never
 * leave the root, review ids that change with content and nothing else, and the strategies.
 */
import assert from "node:assert/strict";
import { globMatcher, globProblem } from "../../engine/review/glob.ts";
import { projectPath, relativeTo } from "../../engine/review/paths.ts";
import { groupByStrategy, REVIEW_ID, reviewId } from "../../engine/review/plan.ts";
import { reviewIdProblem } from "../../engine/review/reviews.ts";
import { cutUtf8 } from "../../engine/review/prompt.ts";

Deno.test("globs: * and ? stay in a segment, ** spans any number, braces and classes pick", () => {
  const m = (glob: string, path: string) => globMatcher([glob])(path);
  assert.ok(m("*.py", "a.py"));
  assert.ok(!m("*.py", "src/a.py"));
  assert.ok(m("**/*.py", "a.py"));
  assert.ok(m("**/*.py", "src/deep/a.py"));
  assert.ok(m("tests/**", "tests/x/y.ts"));
  assert.ok(!m("tests/**", "src/tests/y.ts"));
  assert.ok(m("src/**/test_*.py", "src/test_a.py"));
  assert.ok(m("src/**/test_*.py", "src/a/b/test_a.py"));
  assert.ok(m("*.{ts,tsx}", "a.tsx"));
  assert.ok(!m("*.{ts,tsx}", "a.js"));
  assert.ok(m("file?.md", "file1.md"));
  assert.ok(!m("file?.md", "file/.md"));
  assert.ok(m("[ab].txt", "b.txt"));
  assert.ok(!m("[!ab].txt", "b.txt"));
  assert.ok(!m("a.py", "aXpy"), "a dot is a dot");
  assert.ok(m("./docs/*.md", "docs/x.md"));
  assert.ok(!globMatcher([])("a"));
  assert.match(globProblem("../x")!, /leave its folder/);
  assert.match(globProblem("{a,b")!, /without its `}`/);
  assert.match(globProblem("")!, /empty/);
  assert.equal(globProblem("src/**/*.{ts,js}"), null);
});

Deno.test("project paths never leave the root; a rule's folder scopes its globs", () => {
  assert.equal(projectPath("src", "../docs/a.md"), "docs/a.md");
  assert.equal(projectPath("src", "./a/../b.md"), "src/b.md");
  assert.equal(projectPath("src", "../../etc/passwd"), null);
  assert.equal(projectPath("", "/etc/passwd"), null);
  assert.equal(projectPath("", "."), null);
  assert.equal(relativeTo("src", "src/a/b.py"), "a/b.py");
  assert.equal(relativeTo("src", "srcx/b.py"), null);
  assert.equal(relativeTo("", "b.py"), "b.py");
});

Deno.test("review ids: the same rule, files and contents give the same id; any change another", async () => {
  const rule = { name: "style", definedIn: "src/.deepreview" };
  const files = [{ path: "src/a.py", sha256: "a".repeat(64) }];
  const id = await reviewId(rule, files);
  assert.match(id, REVIEW_ID);
  assert.equal(await reviewId(rule, files), id);
  assert.notEqual(await reviewId(rule, [{ ...files[0]!, sha256: "b".repeat(64) }]), id);
  assert.notEqual(await reviewId(rule, [{ ...files[0]!, path: "src/b.py" }]), id);
  assert.notEqual(await reviewId({ ...rule, definedIn: ".deepreview" }, files), id);
  assert.equal(reviewIdProblem(id), null);
  assert.match(reviewIdProblem("")!, /empty/);
  assert.match(reviewIdProblem("../x")!, /outside the project/);
  assert.match(reviewIdProblem("style--xyz")!, /is not a review id/);
});

Deno.test("strategies: one group per file, one for all matches, or every changed file once any matches", () => {
  const at = { matched: ["a", "b"], changed: ["a", "b", "c"] };
  assert.deepEqual(groupByStrategy("individual", at), [["a"], ["b"]]);
  assert.deepEqual(groupByStrategy("matches_together", at), [["a", "b"]]);
  assert.deepEqual(groupByStrategy("all_changed_files", at), [["a", "b", "c"]]);
  assert.deepEqual(groupByStrategy("all_changed_files", { matched: [], changed: ["c"] }), []);
});

Deno.test("text is cut to a byte budget without splitting a character", () => {
  assert.equal(cutUtf8("héllo", 2), "h");
  assert.equal(cutUtf8("héllo", 3), "hé");
  assert.equal(cutUtf8("abc", 10), "abc");
});
