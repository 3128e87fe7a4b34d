/**
 * Test helpers for the WorkRail corpus (`../shared/corpus/workrail`, or `$WAYMARK_CORPUS_DIR`):
 * its files as an ordinary source, and an in-process waymark whose workflow source is the
 * corpus.
 * @module
 */
import { join, relative } from "node:path";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { EngineDeps } from "../../engine/model/ports.ts";
import {
  type LoadedSet,
  loadWorkflowFiles,
  resolveCatalog,
  type SourceFile,
} from "../../engine/workflow/catalog.ts";
import type { WorkflowLoadError } from "../../engine/workflow/parse.ts";
import type { LoadedWorkflow } from "../../engine/workflow/catalog.ts";
import { openWaymark, type Waymark } from "../../mod.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Where the corpus is, or `null` when this checkout has none beside it. CI always has it
 * (shared/ sits beside the clone), so there a missing corpus is an error, not a skip.
 */
export const CORPUS_DIR: string | null = (() => {
  const dir = Deno.env.get("WAYMARK_CORPUS_DIR") ??
    join(ROOT, "..", "shared", "corpus", "workrail");
  if (existsSync(join(dir, "spec", "workflow.schema.json"))) return dir;
  if (Deno.env.get("CI")) {
    throw new Error(
      `the WorkRail corpus is missing at ${dir}: CI must run with shared/ beside the clone`,
    );
  }
  return null;
})();

/** Every workflow file of the corpus (not its JSON Schema), relative path → text. */
export function corpusFiles(dir = CORPUS_DIR!): { rel: string; path: string; text: string }[] {
  const out: { rel: string; path: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "spec") walk(path);
      } else if (entry.name.endsWith(".json")) {
        out.push({ rel: relative(dir, path), path, text: readFileSync(path, "utf8") });
      }
    }
  };
  walk(dir);
  return out.sort((a, b) => a.rel.localeCompare(b.rel));
}

/** The corpus as source files of an ordinary source (kind `extra`), as `--workflows-dir` gives them. */
export function corpusSources(dir = CORPUS_DIR!): SourceFile[] {
  return corpusFiles(dir).map((f) => ({ source: "extra", file: `corpus:${f.rel}`, text: f.text }));
}

/** Loads the corpus as an ordinary source loads it; every result, in file order. */
export async function loadCorpus(
  dir = CORPUS_DIR!,
): Promise<{ set: LoadedSet; workflows: LoadedWorkflow[]; errors: WorkflowLoadError[] }> {
  const results = await loadWorkflowFiles(corpusSources(dir));
  const workflows = results.flatMap((r) => r.ok ? [r.workflow] : []);
  const errors = results.flatMap((r) => r.ok ? [] : [r.error]);
  return { set: resolveCatalog(workflows, errors), workflows, errors };
}

/** An in-process waymark on `:memory:` whose workflow source is the given set. */
export async function corpusWaymark(
  set: LoadedSet,
): Promise<{ waymark: Waymark; deps: EngineDeps; cleanup(): Promise<void> }> {
  const home = await Deno.makeTempDir({ prefix: "waymark-corpus-" });
  const waymark = await openWaymark({ home, dbUrl: ":memory:", workspace: home });
  const deps: EngineDeps = { ...waymark.deps, workflows: { load: () => Promise.resolve(set) } };
  return {
    waymark,
    deps,
    async cleanup() {
      await waymark.close();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}
