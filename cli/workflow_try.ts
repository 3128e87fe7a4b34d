/**
 * `waymark workflows try FILE|ID [--json] [--watch]`: the workflow walked in memory over its
 * paths by the scripted agent (`engine/authoring/`), nothing opened or written but the files
 * read; `--watch` runs it again whenever the file is saved.
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { resolvePaths, type WaymarkOptions } from "../open.ts";
import { jobsAsWorkflows } from "../engine/deepwork/job_catalog.ts";
import { createJobSource } from "../tools/profiles/deepwork/job_folders.ts";
import { createWorkflowSource } from "../store/workflow_files/mod.ts";
import {
  failedTry,
  renderTryReport,
  type TryReport,
  tryWorkflow,
} from "../engine/authoring/mod.ts";
import { declaredId, type LoadedSet } from "../engine/workflow/catalog.ts";
import { stepCount } from "../engine/workflow/interpreter.ts";
import { formatLoadError } from "../engine/workflow/parse.ts";
import type { CompiledWorkflow } from "../engine/workflow/compiled.ts";
import { BUNDLED_WORKFLOWS } from "../workflows/mod.ts";
import { isOverlayName } from "../engine/workflow/overlay_schema.ts";
import { baseChangedWarning } from "../store/workflow_files/overlays.ts";
import type { CommandInput } from "./host.ts";
import { json, loadNearby, nearbyDelegates } from "./workflow_nearby.ts";
import { printErr, printOut } from "./terminal.ts";

async function isFile(path: string): Promise<boolean> {
  return await stat(path).then((s) => s.isFile(), () => false);
}

/** Tries a workflow file, with the routines and delegates beside it (as `validate` sees them). */
async function tryFile(file: string): Promise<TryReport> {
  const { text, nearby, loaded } = await loadNearby(file);
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

/**
 * Every workflow `serve` would list, DeepWork jobs included (read only, no database), with an
 * overlay file's folder.
 */
async function loadAll(options: WaymarkOptions, overlayFile?: string): Promise<LoadedSet> {
  const dirs = resolvePaths(options).workflowDirs;
  const folder = overlayFile ? dirname(resolve(overlayFile)) : null;
  const extra = folder && !dirs.some((d) => resolve(d.dir) === folder)
    ? [{ source: "extra" as const, dir: folder }]
    : [];
  const paths = resolvePaths(options);
  const jobs = createJobSource({ dirs: paths.jobDirs });
  return await createWorkflowSource(BUNDLED_WORKFLOWS, [...dirs, ...extra], {
    extra: async () => jobsAsWorkflows(await jobs.load(paths.workspace)),
  }).load();
}

/** The load error of an overlay file, when it did not load. */
function overlayError(set: LoadedSet, overlayFile: string): string | null {
  const failed = set.errors.find((e) => e.file.startsWith(resolve(overlayFile)));
  return failed ? formatLoadError(failed) : null;
}

/** Tries a workflow by id, from every source `serve` would list (read only, no database). */
async function tryId(
  id: string,
  options: WaymarkOptions,
  overlayFile?: string,
): Promise<TryReport | null> {
  const set = await loadAll(options, overlayFile);
  const byId = new Map<string, CompiledWorkflow>(
    set.workflows.map((w) => [w.id, w.compiled]),
  );
  const workflow = set.workflows.find((w) => w.id === id);
  if (!workflow) {
    const message = overlayFile ? overlayError(set, overlayFile) : null;
    return message ? failedTry(id, [{ kind: "load_error", workflowId: id, message }]) : null;
  }
  const changed = baseChangedWarning(workflow);
  return tryWorkflow(workflow.compiled, {
    resolve: (child) => byId.get(child) ?? null,
    workflowHash: workflow.hash,
    known: changed ? [{ kind: "base_changed", workflowId: id, message: changed.message }] : [],
  });
}

/**
 * `workflows validate` of an overlay file: resolved over the workflows `serve` would list, its
 * combined id, step count and hash, or its load error; 1 when it does not load.
 */
export async function validateOverlay(
  file: string,
  options: WaymarkOptions,
): Promise<{ code: number; out: string; err: string }> {
  const set = await loadAll(options, file);
  const error = overlayError(set, file);
  const id = declaredId(await readFile(file, "utf8"));
  const workflow = set.workflows.find((w) => w.id === id && w.layers);
  if (error || !workflow) {
    return { code: 1, out: "", err: `${error ?? `${file}: did not load`}\n` };
  }
  const warnings = workflow.warnings.map((w) => `warning [${w.code}]: ${w.message}\n`).join("");
  const layers = workflow.layers!.layers.map((l) => l.workflowId).join(" < ");
  return {
    code: 0,
    out: `${file}: ok (${workflow.id}, overlay ${layers}, ${
      stepCount(workflow.compiled)
    } steps, ${workflow.hash})\n${warnings}`,
    err: "",
  };
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
  // watching before the first run: a save while it runs is not missed
  const watcher = Deno.watchFs(dirname(path));
  let last = await runOnce(file, input);
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
