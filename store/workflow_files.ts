/**
 * Workflow sources on disk (user, project, extra directories) plus the bundled files, loaded
 * through the engine's pure loader: files are parsed once per file version, and compiled together
 * (so a `templateCall` finds routines in any source) only when some file changed, so a call
 * costs a directory listing and a stat per file, not a parse.
 * @module
 */
import { readdirSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  compileAll,
  type LoadedSet,
  type LoadedWorkflow,
  type ParsedSource,
  parseSourceFile,
  resolveCatalog,
  type SourceFile,
  type SourceKind,
  type WorkflowLoadError,
  type WorkflowSource,
} from "../engine/mod.ts";

/** A directory of workflow files and its source kind. */
export interface SourceDir {
  /** Source kind (decides precedence and whether `wr.*` is allowed). */
  source: Exclude<SourceKind, "bundled">;
  /** The directory. */
  dir: string;
}

type Loaded = ParsedSource;

// Listing and stat-ing run on every call (the drift check needs the files' current state);
// the synchronous calls cost microseconds where their async forms cost a scheduler hop each.
function listDir({ source, dir }: SourceDir): { file: string; version: string }[] | Loaded {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    return {
      ok: false,
      error: {
        file: dir,
        issues: [{ path: "", message: `cannot read directory: ${String(error)}` }],
      },
    };
  }
  return names.filter((n) => /\.jsonc?$/.test(n) && !n.endsWith(".schema.json")).sort().map(
    (name) => {
      const file = join(dir, name);
      try {
        const info = statSync(file);
        return { file, version: `${source}:${info.mtimeMs}:${info.size}` };
      } catch {
        return { file, version: `${source}:missing` };
      }
    },
  );
}

/** Workflows loaded elsewhere (DeepWork jobs), merged into the catalog under its precedence. */
export type ExtraWorkflows = () => Promise<
  { workflows: LoadedWorkflow[]; errors: WorkflowLoadError[] }
>;

/**
 * Creates a workflow source over bundled files and directories, in precedence order, plus
 * `extra` workflows (DeepWork jobs as `<job>.<workflow>`).
 */
export function createWorkflowSource(
  bundled: readonly SourceFile[],
  dirs: readonly SourceDir[],
  extra?: ExtraWorkflows,
): WorkflowSource {
  const cache = new Map<string, { version: string; loaded: Loaded }>();
  let bundledLoaded: Promise<Loaded[]> | null = null;
  let last: { key: string; set: LoadedSet } | null = null;

  async function loadFile(
    source: SourceDir["source"],
    file: string,
    version: string,
  ): Promise<Loaded> {
    const hit = cache.get(file);
    if (hit && hit.version === version) return hit.loaded;
    let loaded: Loaded;
    try {
      loaded = parseSourceFile({ source, file, text: await readFile(file, "utf8") });
    } catch (error) {
      loaded = {
        ok: false,
        error: { file, issues: [{ path: "", message: `cannot read file: ${String(error)}` }] },
      };
    }
    cache.set(file, { version, loaded });
    return loaded;
  }

  return {
    async load(): Promise<LoadedSet> {
      const listings = dirs.map((d) => ({ dir: d, listing: listDir(d) }));
      const more = extra ? await extra() : { workflows: [], errors: [] };
      const key = JSON.stringify([
        listings.map((l) => l.listing),
        more.workflows.map((w) => `${w.id}:${w.hash}:${w.file}`),
        more.errors,
      ]);
      if (last && last.key === key) return last.set;
      bundledLoaded ??= Promise.resolve(bundled.map((f) => parseSourceFile(f)));
      const all: Loaded[] = [...await bundledLoaded];
      for (const { dir, listing } of listings) {
        if (!Array.isArray(listing)) all.push(listing);
        else for (const f of listing) all.push(await loadFile(dir.source, f.file, f.version));
      }
      const workflows: LoadedWorkflow[] = [];
      const errors: WorkflowLoadError[] = [];
      for (const item of await compileAll(all)) {
        if (item.ok) workflows.push(item.workflow);
        else errors.push(item.error);
      }
      workflows.push(...more.workflows);
      errors.push(...more.errors);
      last = { key, set: resolveCatalog(workflows, errors) };
      return last.set;
    },
  };
}
