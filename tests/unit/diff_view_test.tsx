/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The viewer's diff: a unified diff parsed into files and numbered rows (jsdiff), a part that does
 * not parse (the last file of a cut diff) kept line by line, the snapshot's cut marker shown as
 * the marker, and every byte of the diff escaped in the HTML.
 * @module
 */
import assert from "node:assert/strict";
import { DiffView, parseDiff } from "../../web/parts/diff_view.tsx";

const DIFF = [
  "diff --git a/app.ts b/app.ts",
  "index 1111111..2222222 100644",
  "--- a/app.ts",
  "+++ b/app.ts",
  "@@ -1,2 +1,2 @@",
  " keep",
  "-old",
  '+<script>alert("x")</script>',
  "diff --git a/logo.png b/logo.png",
  "Binary files a/logo.png and b/logo.png differ",
  "diff --git a/cut.txt b/cut.txt",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/cut.txt",
  "@@ -0,0 +1,5 @@",
  "+one",
  "+two",
  "",
  "[diff truncated: the first 300 bytes kept; see the file list for every change]",
  "",
].join("\n");

Deno.test("a diff's files, their numbered rows, a binary file and a cut last file", () => {
  const files = parseDiff(DIFF.slice(0, DIFF.indexOf("\n[diff truncated")));
  assert.deepEqual(files.map((f) => [f.path, f.status]), [
    ["app.ts", "modified"],
    ["logo.png", "binary"],
    ["cut.txt", "unparsed"],
  ]);
  assert.deepEqual(files[0]!.rows.map((r) => [r.type, r.old, r.new, r.text]), [
    ["hunk", null, null, "@@ -1 +1 @@"],
    ["ctx", 1, 1, "keep"],
    ["del", 2, null, "old"],
    ["add", null, 2, '<script>alert("x")</script>'],
  ]);
  assert.deepEqual(files[1]!.rows, []);
  assert.deepEqual(
    files[2]!.rows.filter((r) => r.type === "add").map((r) => r.text),
    ["one", "two"],
  );
});

Deno.test("the drawn diff escapes every byte and ends with the snapshot's marker", () => {
  const html = String(<DiffView diff={DIFF} truncated />);
  assert.ok(!html.includes("<script>"), "no raw tag from the diff");
  assert.ok(html.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
  assert.match(html, /<p class="trunc diff-cut">\[diff truncated: the first 300 bytes kept;/);
  assert.equal(html.split("[diff truncated").length, 2, "the marker once, not as a file row");
});
