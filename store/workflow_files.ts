/**
 * Workflow sources on disk (user, project, extra directories) plus the bundled files, loaded
 * through the engine's pure loader and cached by file version, so a call costs a directory
 * read and a stat per file, not a parse.
 * @module
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  type LoadedSet,
  type LoadedWorkflow,
  loadWorkflowFile,
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

type Loaded = { ok: true; workflow: LoadedWorkflow } | { ok: false; error: WorkflowLoadError };

/** Creates a workflow source over bundled files and directories, in precedence order. */
export function createWorkflowSource(
  bundled: readonly SourceFile[],
  dirs: readonly SourceDir[],
): WorkflowSource {
  const cache = new Map<string, { version: string; loaded: Loaded }>();
  let bundledLoaded: Promise<Loaded[]> | null = null;

  async function loadDir({ source, dir }: SourceDir): Promise<Loaded[]> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ENOENT" || code === "ENOTDIR") return [];
      return [{
        ok: false,
        error: {
          file: dir,
          issues: [{ path: "", message: `cannot read directory: ${String(error)}` }],
        },
      }];
    }
    const files = names.filter((n) => /\.jsonc?$/.test(n) && !n.endsWith(".schema.json")).sort();
    return Promise.all(files.map(async (name): Promise<Loaded> => {
      const file = join(dir, name);
      try {
        const info = await stat(file);
        const version = `${source}:${info.mtimeMs}:${info.size}`;
        const hit = cache.get(file);
        if (hit && hit.version === version) return hit.loaded;
        const loaded = await loadWorkflowFile({ source, file, text: await readFile(file, "utf8") });
        cache.set(file, { version, loaded });
        return loaded;
      } catch (error) {
        return {
          ok: false,
          error: { file, issues: [{ path: "", message: `cannot read file: ${String(error)}` }] },
        };
      }
    }));
  }

  return {
    async load(): Promise<LoadedSet> {
      bundledLoaded ??= Promise.all(bundled.map((f) => loadWorkflowFile(f)));
      const all = [...await bundledLoaded, ...(await Promise.all(dirs.map(loadDir))).flat()];
      const workflows: LoadedWorkflow[] = [];
      const errors: WorkflowLoadError[] = [];
      for (const item of all) {
        if (item.ok) workflows.push(item.workflow);
        else errors.push(item.error);
      }
      return resolveCatalog(workflows, errors);
    },
  };
}
