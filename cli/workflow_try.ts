/**
 * `waymark workflows try FILE|ID [--json] [--watch]`: the workflow walked in memory over its
 * paths by the scripted agent (`engine/authoring/`), nothing opened or written but the files
 * read; `--watch` runs it again whenever the file is saved.
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { resolvePaths, type WaymarkOptions } from "../mod.ts";
import { createWorkflowSource } from "../store/workflow_files/mod.ts";
import {
  failedTry,
  renderTryReport,
  type TryReport,
  tryWorkflow,
} from "../engine/authoring/mod.ts";
import { declaredId, loadWorkflowFile } from "../engine/workflow/catalog.ts";
import { formatLoadError, parseWorkflowText } from "../engine/workflow/parse.ts";
import type { CompiledWorkflow } from "../engine/workflow/compiled.ts";
import { BUNDLED_WORKFLOWS } from "../workflows/mod.ts";
import { isOverlayName } from "../engine/workflow/overlay_schema.ts";
import { baseChangedWarning } from "../store/workflow_files/overlays.ts";
import type { CommandInput } from "./host.ts";
import { json, nearbyDelegates, nearbyFiles } from "./workflows.ts";
import { printErr, printOut } from "./terminal.ts";

async function isFile(path: string): Promise<boolean> {
  return await stat(path).then((s) => s.isFile(), () => false);
}

/** Tries a workflow file, with the routines and delegates beside it (as `validate` sees them). */
async function tryFile(file: string): Promise<TryReport> {
  const text = await readFile(file, "utf8");
  const shipped = BUNDLED_WORKFLOWS.some((b) => b.text === text);
  const checked = shipped ? parseWorkflowText(text, file) : null;
  const nearby = await nearbyFiles(file);
  const loaded = checked && !checked.ok ? checked : await loadWorkflowFile(
    { source: shipped ? "bundled" : "extra", file, text },
    { routines: nearby.routines },
  );
  if (!loaded.ok) {
    const message = formatLoadError(loaded.error);
    const workflowId = declaredId(text) ?? basename(file);
    return failedTry(workflowId, [{ kind: "load_error", workflowId, message }]);
  }
  const delegates = await nearbyDelegates(loaded.workflow, nearby);
  return tryWorkflow(loaded.workflow.compiled, {
    resolve: (id) => delegates.get(id)?.compiled ?? null,
    workflowHash: loaded.workflow.hash,
  });
}

/** Tries a workflow by id, from every source `serve` would list (read only, no database). */
async function tryId(
  id: string,
  options: WaymarkOptions,
  overlayFile?: string,
): Promise<TryReport | null> {
  const dirs = resolvePaths(options).workflowDirs;
  const extra = overlayFile
    ? [{ source: "extra" as const, dir: dirname(resolve(overlayFile)) }]
    : [];
  const source = createWorkflowSource(BUNDLED_WORKFLOWS, [...dirs, ...extra]);
  const set = await source.load();
  const byId = new Map<string, CompiledWorkflow>(
    set.workflows.map((w) => [w.id, w.compiled]),
  );
  const workflow = set.workflows.find((w) => w.id === id);
  if (!workflow) {
    const failed = overlayFile && set.errors.find((e) => e.file.startsWith(resolve(overlayFile)));
    if (!failed) return null;
    const message = formatLoadError(failed);
    return failedTry(id, [{ kind: "load_error", workflowId: id, message }]);
  }
  const changed = baseChangedWarning(workflow);
  return tryWorkflow(workflow.compiled, {
    resolve: (child) => byId.get(child) ?? null,
    workflowHash: workflow.hash,
    known: changed ? [{ kind: "base_changed", workflowId: id, message: changed.message }] : [],
  });
}

/**
 * The report of `workflows try` on a file (a workflow or an overlay) or an id; `null` when it is
 * neither a file nor an id any source has.
 */
export async function tryTarget(
  target: string,
  options: WaymarkOptions,
): Promise<TryReport | null> {
  if (!await isFile(target)) return await tryId(target, options);
  if (!isOverlayName(basename(target))) return await tryFile(target);
  return await tryId(declaredId(await readFile(target, "utf8")) ?? "", options, target);
}

async function runOnce(target: string, input: CommandInput): Promise<number> {
  const report = await tryTarget(target, input.options);
  if (!report) {
    printErr(
      `${target}: no such file, and no workflow with that id (waymark workflows list shows them)\n`,
    );
    return 1;
  }
  printOut(input.flags.json ? json(report) : renderTryReport(report));
  return report.ok ? 0 : 1;
}

/** Runs again whenever `file` is written (its folder is watched: editors replace files). */
async function watch(file: string, input: CommandInput): Promise<number> {
  const path = resolve(file);
  let last = await runOnce(file, input);
  const watcher = Deno.watchFs(dirname(path));
  let timer: ReturnType<typeof setTimeout> | undefined;
  for await (const event of watcher) {
    if (!event.paths.some((p) => resolve(p) === path)) continue;
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (!await isFile(file)) return;
      printOut(input.flags.json ? "" : `--- ${file} changed\n`);
      last = await runOnce(file, input);
    }, 100);
  }
  return last;
}

/** `waymark workflows try FILE|ID [--json] [--watch]`: exit 1 on any problem. */
export async function tryWorkflowCommand(input: CommandInput): Promise<number> {
  const [target] = input.args;
  if (!target) return input.usage();
  if (input.flags.watch) {
    if (!await isFile(target)) {
      printErr(`${target}: --watch needs a workflow file to watch\n`);
      return 1;
    }
    return await watch(target, input);
  }
  return await runOnce(target, input);
}
