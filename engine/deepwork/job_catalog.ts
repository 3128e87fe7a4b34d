/**
 * Loaded jobs: each job's workflows compiled and hashed, the precedence of job folders, the
 * errors `get_workflows` lists, and the same workflows as ordinary ones (`<job>.<workflow>`)
 * for the default profile. Pure: the adapter that reads job folders hands the texts in.
 * @module
 */
import { type CompiledWorkflow, workflowHash } from "../workflow/compiled.ts";
import type { LoadedWorkflow } from "../workflow/catalog.ts";
import { BUNDLED_NAMESPACE, checkWorkflowId } from "../workflow/workflow_ids.ts";
import type { WorkflowLoadError } from "../workflow/parse.ts";
import type { SourceKind } from "../model/vocabulary.ts";
import { compileJobWorkflow } from "./compile.ts";
import { instructionFiles, type JobSpec } from "./job.ts";

/** One workflow of a loaded job. */
export interface LoadedJobWorkflow {
  /** Workflow name. */
  name: string;
  /** What it does. */
  summary: string;
  /** Its compiled form. */
  compiled: CompiledWorkflow;
  /** `workflowHash` of the compiled form. */
  hash: string;
}

/** A job ready to run. */
export interface LoadedJob {
  /** Job name. */
  name: string;
  /** What it does. */
  summary: string;
  /** Its folder. */
  dir: string;
  /** Which kind of folder it came from (the workspace's is `project`). */
  source: SourceKind;
  /** Its workflows, in file order. */
  workflows: LoadedJobWorkflow[];
  /** The instruction files it read (relative to its folder). */
  instructionFiles: string[];
  /** Each step's instruction file (relative to its folder), for steps that have one. */
  stepFiles: Record<string, string>;
}

/** A job that failed to load, as `get_workflows` lists it. */
export interface JobLoadError {
  /** The job's name (its folder's name when the file does not say). */
  jobName: string;
  /** Its folder. */
  jobDir: string;
  /** What is wrong. */
  error: string;
}

/** Every job that loaded and every one that did not. */
export interface LoadedJobs {
  /** Jobs, by precedence then name. */
  jobs: LoadedJob[];
  /** Failures, by folder. */
  errors: JobLoadError[];
}

/** Where jobs come from: the folders of a workspace, plus configured ones. */
export interface JobSource {
  /**
   * The jobs visible from a workspace folder (`null`: only configured folders); with
   * `session`, that session's jobs first (`session_jobs.ts`).
   */
  load(workspace: string | null, options?: { session?: string | null }): Promise<LoadedJobs>;
}

/** Compiles and hashes a parsed job's workflows; a missing instruction file fails the job. */
export async function loadJob(
  spec: JobSpec,
  at: { dir: string; source: SourceKind; instructions: ReadonlyMap<string, string | null> },
): Promise<{ ok: true; job: LoadedJob } | { ok: false; error: JobLoadError }> {
  const named = instructionFiles(spec);
  const missing = named.filter((f) => typeof at.instructions.get(f) !== "string");
  if (missing.length > 0) {
    return {
      ok: false,
      error: {
        jobName: spec.name,
        jobDir: at.dir,
        error: `instruction file(s) not found in the job folder: ${missing.join(", ")}`,
      },
    };
  }
  const files = new Map(
    [...at.instructions].filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  const workflows: LoadedJobWorkflow[] = [];
  for (const workflow of spec.workflows) {
    const compiled = compileJobWorkflow(spec, { workflow, files });
    workflows.push({
      name: workflow.name,
      summary: workflow.summary,
      compiled,
      hash: await workflowHash(compiled),
    });
  }
  return {
    ok: true,
    job: {
      name: spec.name,
      summary: spec.summary,
      dir: at.dir,
      source: at.source,
      workflows,
      instructionFiles: named,
      stepFiles: stepFiles(spec),
    },
  };
}

function stepFiles(spec: JobSpec): Record<string, string> {
  const out: Record<string, string> = {};
  for (const step of spec.workflows.flatMap((w) => w.entries.flat())) {
    if ("file" in step.instructions) out[step.id] = step.instructions.file;
  }
  return out;
}

/** Applies precedence (the first folder to define a job name wins; later ones are errors). */
export function resolveJobs(
  loaded: readonly LoadedJob[],
  errors: readonly JobLoadError[],
): LoadedJobs {
  const byName = new Map<string, LoadedJob>();
  const all = [...errors];
  for (const job of loaded) {
    const winner = byName.get(job.name);
    if (!winner) byName.set(job.name, job);
    else {
      all.push({
        jobName: job.name,
        jobDir: job.dir,
        error:
          `a job named \`${job.name}\` is already defined in ${winner.dir}, which takes precedence`,
      });
    }
  }
  return {
    jobs: [...byName.values()],
    errors: all.sort((a, b) => a.jobDir.localeCompare(b.jobDir)),
  };
}

function refused(job: LoadedJob, message: string): WorkflowLoadError {
  return { file: `${job.dir}/job.yml`, issues: [{ path: "name", message }] };
}

/**
 * Jobs as ordinary workflows, id `<job>.<workflow>`, for the default profile. A job named
 * `waymark` is refused like any other source claiming `waymark.*`; names that are not valid id segments are
 * reported with the rule.
 */
export function jobsAsWorkflows(
  jobs: LoadedJobs,
): { workflows: LoadedWorkflow[]; errors: WorkflowLoadError[] } {
  const workflows: LoadedWorkflow[] = [];
  const errors: WorkflowLoadError[] = jobs.errors.map((e) => ({
    file: `${e.jobDir}/job.yml`,
    issues: [{ path: "", message: e.error }],
  }));
  for (const job of jobs.jobs) {
    if (job.name === BUNDLED_NAMESPACE) {
      errors.push(refused(
        job,
        `\`${BUNDLED_NAMESPACE}\`: the \`${BUNDLED_NAMESPACE}.\` namespace is reserved for workflows bundled with waymark; rename the job`,
      ));
      continue;
    }
    for (const w of job.workflows) {
      const check = checkWorkflowId(w.compiled.id);
      if (check.status !== "namespaced") {
        errors.push(refused(
          job,
          `\`${w.compiled.id}\` is not a valid workflow id (segments are lower-case letters, digits, \`_\` and \`-\`); rename the job or workflow`,
        ));
        continue;
      }
      workflows.push({
        id: w.compiled.id,
        idStatus: "namespaced",
        kind: "workflow",
        source: job.source,
        file: `${job.dir}/job.yml`,
        compiled: w.compiled,
        hash: w.hash,
        warnings: [],
      });
    }
  }
  return { workflows, errors };
}
