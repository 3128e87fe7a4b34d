/**
 * DeepWork job folders on disk: `<workspace>/.deepwork/jobs/<job>/job.yml`, then configured
 * folders and `DEEPWORK_ADDITIONAL_JOBS_FOLDERS` (each holding job folders). A job is parsed
 * and compiled by the engine from the texts read here, and kept until its `job.yml` or an
 * instruction file changes, so listing costs a directory read and a few stats. A broken job
 * is an error in the list, never a failure of the call.
 * @module
 */
import { readdirSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import {
  type JobLoadError,
  type JobSource,
  type LoadedJob,
  loadJob,
  resolveJobs,
} from "../../../engine/deepwork/job_catalog.ts";
import { instructionFiles } from "../../../engine/deepwork/job.ts";
import { declaredJobName, parseJobYaml } from "../../../engine/deepwork/parse.ts";
import { sessionJobsFolder, sessionKeyProblem } from "../../../engine/deepwork/session_jobs.ts";
import type { SourceKind } from "../../../engine/model/vocabulary.ts";

/** Where jobs are found besides the workspace. */
export interface JobSourceOptions {
  /** Folders of job folders, in precedence order (after the workspace's). */
  dirs: readonly string[];
}

type Loaded = { ok: true; job: LoadedJob } | { ok: false; error: JobLoadError };

function stamp(path: string): string {
  try {
    const info = statSync(path);
    return `${info.mtimeMs}:${info.size}`;
  } catch {
    return "missing";
  }
}

function jobFolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name)).filter((d) => stamp(join(d, "job.yml")) !== "missing").sort();
  } catch {
    return [];
  }
}

async function readJob(dir: string, source: SourceKind): Promise<Loaded> {
  const fallbackName = basename(dir);
  let text: string;
  try {
    text = await readFile(join(dir, "job.yml"), "utf8");
  } catch (error) {
    return {
      ok: false,
      error: { jobName: fallbackName, jobDir: dir, error: `cannot read job.yml: ${error}` },
    };
  }
  const parsed = await parseJobYaml(text);
  if (!parsed.ok) {
    return {
      ok: false,
      error: {
        jobName: (await declaredJobName(text)) ?? fallbackName,
        jobDir: dir,
        error: parsed.error.message,
      },
    };
  }
  const instructions = new Map<string, string | null>();
  for (const file of instructionFiles(parsed.job)) {
    const path = resolve(dir, file);
    const inside = path.startsWith(`${resolve(dir)}/`);
    instructions.set(file, inside ? await readFile(path, "utf8").catch(() => null) : null);
  }
  return await loadJob(parsed.job, { dir, source, instructions });
}

/** A job source over the workspace's `.deepwork/jobs` and the configured folders. */
export function createJobSource(options: JobSourceOptions): JobSource {
  const cache = new Map<string, { version: string; loaded: Loaded }>();
  async function load(dir: string, source: SourceKind): Promise<Loaded> {
    const hit = cache.get(dir);
    const head = stamp(join(dir, "job.yml"));
    const version = (files: readonly string[]) =>
      [head, ...files.map((f) => stamp(resolve(dir, f)))].join("|");
    if (hit && hit.version === version(hitFiles(hit.loaded))) return hit.loaded;
    const loaded = await readJob(dir, source);
    // a broken job is read again next time: the file that fixes it may not be in its version
    if (loaded.ok) cache.set(dir, { version: version(hitFiles(loaded)), loaded });
    return loaded;
  }
  return {
    async load(workspace, at = {}) {
      const session = at.session && !sessionKeyProblem(at.session) ? at.session : null;
      const roots: [string, SourceKind][] = [
        ...(workspace && session
          ? [[join(workspace, sessionJobsFolder(session)), "project"] as [string, SourceKind]]
          : []),
        ...(workspace
          ? [[join(workspace, ".deepwork", "jobs"), "project"] as [string, SourceKind]]
          : []),
        ...options.dirs.map((d): [string, SourceKind] => [resolve(d), "extra"]),
      ];
      const jobs: LoadedJob[] = [];
      const errors: JobLoadError[] = [];
      for (const [root, source] of roots) {
        for (const dir of jobFolders(root)) {
          const loaded = await load(dir, source);
          if (loaded.ok) jobs.push(loaded.job);
          else errors.push(loaded.error);
        }
      }
      return resolveJobs(jobs, errors);
    },
  };
}

/** The instruction files a loaded job read (for its cache version). */
function hitFiles(loaded: Loaded): string[] {
  if (!loaded.ok) return [];
  return [...loaded.job.instructionFiles];
}

/**
 * The folders a colon-separated environment variable names (`DEEPWORK_ADDITIONAL_JOBS_FOLDERS`,
 * `DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS`); empty parts skipped.
 */
export function additionalJobFolders(value: string | undefined): string[] {
  return (value ?? "").split(":").map((p) => p.trim()).filter((p) => p !== "");
}
