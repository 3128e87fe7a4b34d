/**
 * Overlay files (`*.overlay.json[c]` in the workflow folders) over a workflow source: each is
 * resolved against the workflows the source loads (`engine/authoring/overlay.ts`) into a
 * workflow of its own id, listed, found and pinned as any other. A folder without overlays costs
 * one directory read per call and changes nothing; a broken overlay is a load error, listed and
 * not thrown, and leaves every other workflow as it was.
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { WorkflowSource } from "../../engine/model/ports.ts";
import type { WorkflowSummary } from "../../engine/answers/responses.ts";
import { summarize } from "../../engine/use_cases/list_workflows.ts";
import {
  type OverlayBase,
  type ParsedOverlay,
  parseOverlayText,
  resolveOverlays,
} from "../../engine/authoring/overlay.ts";
import {
  LazyRoutines,
  type LoadedSet,
  type LoadedWorkflow,
  parseSourceFile,
  resolveCatalog,
  type SourceFile,
  type Warning,
} from "../../engine/workflow/catalog.ts";
import { isOverlayName } from "../../engine/workflow/overlay_schema.ts";
import type { WorkflowFile } from "../../engine/workflow/schema.ts";
import type { WorkflowLoadError } from "../../engine/workflow/parse.ts";
import { checkWorkflowId, onlyBundledMayDefine } from "../../engine/workflow/workflow_ids.ts";
import type { SourceDir } from "./states.ts";

interface OverlayFileState {
  dir: SourceDir;
  file: string;
  version: string;
}

/**
 * How long the folders' lists of overlay files are reused: a drift check on every acknowledgement
 * asks for the workflow, and a stat of each folder costs more than the rest of that lookup. An
 * overlay added is seen within this time; an edit to one already listed at once (each listed
 * overlay is stat'ed on every call).
 */
export const OVERLAY_LISTING_REUSE_MS = 1000;

/** A folder's version: its own stat changes when a file is added, removed or renamed. */
function dirVersion(dir: string): string {
  if (!existsSync(dir)) return "missing"; // a failing stat builds an error: ~50 times the cost
  try {
    const s = statSync(dir);
    return `${s.mtimeMs}:${s.ctimeMs}:${s.ino}`;
  } catch {
    return "missing";
  }
}

/**
 * Lists the overlay files of `dirs` with their versions. A folder's list is checked again at
 * most every {@linkcode OVERLAY_LISTING_REUSE_MS}, and read again only when the folder's own
 * version changed.
 */
function overlayLister(dirs: readonly SourceDir[]): () => OverlayFileState[] {
  const names = new Map<string, { version: string; names: string[] }>();
  let checkedAt = -Infinity;
  const namesIn = (dir: string, recheck: boolean): string[] => {
    const kept = names.get(dir);
    if (kept && !recheck) return kept.names;
    const version = dirVersion(dir);
    if (kept?.version === version) return kept.names;
    let found: string[] = [];
    try {
      found = existsSync(dir) ? readdirSync(dir).filter(isOverlayName).sort() : [];
    } catch {
      found = [];
    }
    names.set(dir, { version, names: found });
    return found;
  };
  return () => {
    const recheck = performance.now() - checkedAt >= OVERLAY_LISTING_REUSE_MS;
    if (recheck) checkedAt = performance.now();
    const out: OverlayFileState[] = [];
    for (const dir of dirs) {
      for (const name of namesIn(dir.dir, recheck)) {
        const file = join(dir.dir, name);
        try {
          const s = statSync(file);
          out.push({ dir, file, version: `${s.mtimeMs}:${s.size}:${s.ino}` });
        } catch {
          continue; // removed since the listing
        }
      }
    }
    return out;
  };
}

/** The warning an overlay carries when its base changed since it was written. */
export function baseChangedWarning(workflow: LoadedWorkflow): Warning | null {
  const l = workflow.layers;
  if (!l?.writtenAgainst) return null;
  const base = l.layers.at(-2)?.workflowId ?? "its base";
  return {
    code: "OVERLAY_BASE_CHANGED",
    message:
      `\`${workflow.id}\` was written against ${l.writtenAgainst} of \`${base}\`, which is now ${l.baseHash}: check that its changes still fit, then set overlay.baseHash to the new hash`,
  };
}

/** Parses a loaded workflow's own file again (the file form overlays are applied to). */
function fileOf(
  workflow: LoadedWorkflow,
  bundled: readonly SourceFile[],
): WorkflowFile | null {
  const text = bundled.find((b) => b.file === workflow.file)?.text ??
    (() => {
      try {
        return readFileSync(workflow.file, "utf8");
      } catch {
        return null;
      }
    })();
  if (text === null) return null;
  const parsed = parseSourceFile({ source: workflow.source, file: workflow.file, text });
  return parsed.ok ? parsed.file : null;
}

/** Resolves the overlays over `set`: the set with the combined workflows and their errors. */
async function layered(
  set: LoadedSet,
  files: readonly OverlayFileState[],
  bundled: readonly SourceFile[],
): Promise<LoadedSet> {
  const parsed: ParsedOverlay[] = [];
  const sources = new Map<string, SourceDir["source"]>();
  const errors: WorkflowLoadError[] = [];
  for (const f of files) {
    const text = (() => {
      try {
        return readFileSync(f.file, "utf8");
      } catch {
        return null;
      }
    })();
    if (text === null) continue;
    const p = parseOverlayText(text, f.file);
    if (!p.ok) errors.push(p.error);
    else if (onlyBundledMayDefine(p.parsed.overlay.id)) {
      errors.push({
        file: `${f.file}:1`,
        issues: [{
          path: "id",
          message: "the `waymark.` namespace is reserved for bundled workflows",
        }],
      });
    } else {
      parsed.push(p.parsed);
      sources.set(f.file, f.dir.source);
    }
  }
  const byId = new Map(set.workflows.map((w) => [w.id, w]));
  const baseOf = (id: string): OverlayBase | null => {
    const w = byId.get(id);
    const file = w && fileOf(w, bundled);
    return w && file ? { file, hash: w.hash, path: w.file } : null;
  };
  const routines = new LazyRoutines(() => {
    const out = new Map<string, WorkflowFile>();
    for (const w of set.workflows) {
      const file = w.kind === "routine" ? fileOf(w, bundled) : null;
      if (file) out.set(w.id, file);
    }
    return out;
  });
  const loaded: LoadedWorkflow[] = [];
  for (const r of await resolveOverlays(parsed, { baseOf, routines })) {
    if (!r.ok) {
      errors.push(r.error);
      continue;
    }
    const idCheck = checkWorkflowId(r.compiled.id);
    const workflow: LoadedWorkflow = {
      id: r.compiled.id,
      idStatus: idCheck.status === "legacy" ? "legacy" : "namespaced",
      kind: r.compiled.kind,
      source: sources.get(r.path) ?? "extra",
      file: r.path,
      compiled: r.compiled,
      hash: r.hash,
      warnings: [],
      layers: r.layers,
    };
    const changed = baseChangedWarning(workflow);
    if (changed) workflow.warnings.push(changed);
    loaded.push(workflow);
  }
  return resolveCatalog([...set.workflows, ...loaded], [...set.errors, ...errors]);
}

/** A workflow source with the overlays in `dirs` layered over what `inner` loads. */
export function withOverlays(
  inner: WorkflowSource,
  options: { dirs: readonly SourceDir[]; bundled: readonly SourceFile[] },
): WorkflowSource {
  let last: { key: string; of: LoadedSet; set: LoadedSet } | null = null;
  const listOverlays = overlayLister(options.dirs);
  const load = async (): Promise<LoadedSet> => {
    const files = listOverlays();
    const set = await inner.load();
    if (files.length === 0) return set;
    const key = JSON.stringify(files);
    if (last?.key !== key || last.of !== set) {
      last = { key, of: set, set: await layered(set, files, options.bundled) };
    }
    return last.set;
  };
  const source: WorkflowSource = { load };
  source.find = async (workflowId: string) => {
    // no overlay may define a `waymark.*` id: those never look at overlays
    const plain = onlyBundledMayDefine(workflowId) || listOverlays().length === 0;
    if (plain && inner.find) return await inner.find(workflowId);
    return (await load()).workflows.find((w) => w.id === workflowId) ?? null;
  };
  source.summaries = async (): Promise<
    { workflows: WorkflowSummary[]; errors: WorkflowLoadError[] }
  > => {
    if (listOverlays().length === 0 && inner.summaries) return await inner.summaries();
    const set = await load();
    return { workflows: set.workflows.map(summarize), errors: set.errors };
  };
  return source;
}
