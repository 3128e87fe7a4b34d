/**
 * `workflows try` on every file of the WorkRail corpus, as docs/authoring.md reports it: which
 * files have problems and of which kinds (the rest are clean), so the docs cannot drift from what
 * the command finds. Nothing in the corpus is written.
 * @module
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { tryTarget } from "../../cli/workflow_try.ts";
import { CORPUS_DIR } from "../helpers/corpus.ts";

/** The files docs/authoring.md lists, with the kinds of problem found in each. */
const FOUND: Record<string, string[]> = {
  "document-creation-workflow.json": ["unset_placeholder"],
  "examples/loops/simple-batch.json": ["unset_placeholder"],
  "examples/loops/simple-search.json": ["unset_placeholder"],
  "examples/routine-injection-example.json": ["load_error"],
  "internal/wr.gate-eval-generic.json": ["unset_placeholder"],
  "routines/reviewer-family.json": ["unset_placeholder"],
};

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory && e.name !== "spec") out.push(...files(path));
    else if (e.isFile && e.name.endsWith(".json")) out.push(path);
  }
  return out.sort();
}

Deno.test({
  name: "workflows try on the WorkRail corpus finds what docs/authoring.md says, and only that",
  ignore: CORPUS_DIR === null,
  async fn() {
    const home = await Deno.makeTempDir({ prefix: "waymark-corpus-try-" });
    try {
      const found: Record<string, string[]> = {};
      const all = files(CORPUS_DIR!);
      assert.equal(all.length, 48);
      for (const file of all) {
        const report = await tryTarget(file, { home, workspace: home });
        assert.ok(report, file);
        if (report.ok) continue;
        found[relative(CORPUS_DIR!, file)] = [...new Set(report.problems.map((p) => p.kind))];
      }
      assert.deepEqual(found, FOUND);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});
