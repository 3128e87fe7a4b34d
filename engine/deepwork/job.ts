/**
 * A DeepWork job, normalised: both `job.yml` formats (the step list and the workflow map) read
 * into this one model, which `compile.ts` turns into waymark's compiled workflows. Only plain
 * data; instruction files are named here and read by the adapter that loads jobs.
 * @module
 */
import type { JobOutputType, ReviewStrategy } from "../model/vocabulary.ts";

/** An output a step must (or may) produce. */
export interface JobOutputSpec {
  /** The key agents use in `finished_step.outputs`. */
  name: string;
  /** What value it takes: a path, a list of paths, either, or inline text. */
  type: JobOutputType;
  /** What it is. */
  description: string;
  /** Whether `finished_step` refuses a submission without it. */
  required: boolean;
  /** A JSON Schema the file's content (YAML or JSON) must match. */
  jsonSchema?: Record<string, unknown>;
}

/** A quality review of a step's outputs. */
export interface JobReviewSpec {
  /** `step` (everything the step produced, together) or an output's name (each of its files). */
  runEach: string;
  /** Criteria by name: what a passing output satisfies. */
  criteria: Record<string, string>;
  /** More guidance for the reviewer. */
  guidance?: string;
  /** For an output's review: each file alone, or all its files together. */
  strategy?: Exclude<ReviewStrategy, "all_changed_files">;
}

/** Something a step reads: a value from the user or a file an earlier step wrote. */
export interface JobInputSpec {
  /** The input's name (for a file input, the file). */
  name: string;
  /** What it is. */
  description?: string;
  /** The step whose output it is, for a file input. */
  fromStep?: string;
  /** Whether the step needs it. */
  required?: boolean;
}

/** Where a step's instructions come from. */
export type JobInstructions = { text: string } | { file: string };

/** One step. */
export interface JobStepSpec {
  /** Step id, unique within its workflow. */
  id: string;
  /** Human name. */
  name: string;
  /** What the step is for. */
  description?: string;
  /** Instructions, inline or as a file relative to the job folder. */
  instructions: JobInstructions;
  /** What it reads. */
  inputs: JobInputSpec[];
  /** What it produces. */
  outputs: JobOutputSpec[];
  /** Steps it depends on (informational: the workflow's order runs them first). */
  dependencies: string[];
  /** Its quality reviews. */
  reviews: JobReviewSpec[];
  /** Hook names declared on it (parsed, reported, not run). */
  hooks: string[];
  /** Requirements on how the work is done, shown with the instructions. */
  processRequirements: string[];
  /** A nested workflow this step runs instead of instructions. */
  subWorkflow?: { job?: string; workflow: string };
}

/** One workflow of a job: its entries in order, each one step or a concurrent group. */
export interface JobWorkflowSpec {
  /** Workflow name. */
  name: string;
  /** What it does. */
  summary: string;
  /** Entries in order; an entry of several steps runs them concurrently. */
  entries: JobStepSpec[][];
  /** Shared context for every step of this workflow (over the job's). */
  commonJobInfo?: string;
  /** Shown when the workflow completes. */
  postWorkflowInstructions?: string;
}

/** A job, from either format. */
export interface JobSpec {
  /** Job name (its folder's name by convention). */
  name: string;
  /** The author's version. */
  version: string;
  /** What the job does. */
  summary: string;
  /** Shared context given to every step. */
  commonJobInfo: string;
  /** Which `job.yml` format it was written in. */
  format: "step_list" | "workflow_map";
  /** Its workflows. */
  workflows: JobWorkflowSpec[];
}

/** The syntax `finished_step` expects for an output of each type. */
export const OUTPUT_SYNTAX: Record<JobOutputType, string> = {
  file: "filepath",
  files: "array of filepaths for all individual files",
  file_path: "filepath or array of filepaths",
  string: "string value",
};

/** Every instruction file a job names (relative to its folder), sorted, once each. */
export function instructionFiles(job: JobSpec): string[] {
  const files = new Set<string>();
  for (const w of job.workflows) {
    for (const entry of w.entries) {
      for (const step of entry) if ("file" in step.instructions) files.add(step.instructions.file);
    }
  }
  return [...files].sort();
}
