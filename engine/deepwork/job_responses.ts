/**
 * The DeepWork profile's responses, as zod schemas with the field names its agents read
 * (snake_case, as DeepWork's agents expect them). Published as the tools' output schemas; the types
 * are inferred from them.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { LIMITS } from "../model/limits.ts";
import { JOB_OUTPUT_TYPES, JOB_STEP_STATUSES } from "../model/vocabulary.ts";

/** One output the current step must (or may) produce. */
export const expectedOutputSchema = z.object({
  name: z.string(),
  type: z.enum(JOB_OUTPUT_TYPES),
  description: z.string(),
  required: z.boolean(),
  syntax_for_finished_step_tool: z.string().describe("How to give it in finished_step.outputs."),
});

/** One quality review the step's outputs go through. */
export const stepReviewSchema = z.object({
  run_each: z.string().describe("`step`, or the output each of whose files is reviewed."),
  quality_criteria: z.record(z.string(), z.string()),
  additional_review_guidance: z.string().optional(),
  strategy: z.enum(["individual", "matches_together"]).optional(),
});

/** One workflow on the stack, bottom first. */
export const stackEntrySchema = z.object({
  workflow: z.string().describe("`job/workflow`."),
  step: z.string().nullable().describe("The step it stands at."),
  run_id: z.string(),
});

/** The step to do now. */
export const beginStepSchema = z.object({
  session_id: z.string(),
  step_id: z.string(),
  job_dir: z.string(),
  step_expected_outputs: z.array(expectedOutputSchema),
  step_reviews: z.array(stepReviewSchema),
  step_instructions: z.string(),
  common_job_info: z.string(),
  hooks_not_run: z.array(z.string()).optional().describe(
    "Hooks the step declares; waymark parses them but does not run them.",
  ),
});

/** Something the agent should know besides the answer: the job changed since the run started. */
export const jobWarningSchema = z.object({
  code: z.literal("JOB_CHANGED_ON_DISK"),
  message: z.string(),
});

const warnings = z.array(jobWarningSchema).optional().describe(
  "The workflow's job.yml or a step's instructions changed since it started: which file; the run keeps its version.",
);

/** `get_workflows`. */
export const getWorkflowsResponseSchema = z.object({
  jobs: z.array(z.object({
    name: z.string(),
    summary: z.string(),
    workflows: z.array(z.object({ name: z.string(), summary: z.string() })),
  })),
  errors: z.array(z.object({ job_name: z.string(), job_dir: z.string(), error: z.string() })),
});

/** `start_workflow`. */
export const startResponseSchema = z.object({
  begin_step: beginStepSchema,
  stack: z.array(stackEntrySchema),
});

/** `finished_step`. */
export const finishedResponseSchema = z.object({
  status: z.enum(JOB_STEP_STATUSES),
  feedback: z.string().optional().describe("needs_work: what to fix."),
  begin_step: beginStepSchema.optional().describe("next_step: the next step."),
  summary: z.string().optional().describe("workflow_complete: what finished and what is next."),
  all_outputs: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional()
    .describe("workflow_complete: every output of the run, later steps over earlier ones."),
  post_workflow_instructions: z.string().optional(),
  unhashed_files: z.array(z.object({
    output: z.string(),
    path: z.string(),
    size: z.number(),
    modified: z.string(),
  })).optional().describe(
    `Output files recorded by size and modification time instead of SHA-256: one call hashes at most ${
      LIMITS.hashedBytes / 1024 / 1024
    } MiB of files.`,
  ),
  warnings,
  stack: z.array(stackEntrySchema),
});

/** `abort_workflow`. */
export const abortResponseSchema = z.object({
  aborted_workflow: z.string(),
  aborted_step: z.string().nullable(),
  explanation: z.string(),
  stack: z.array(stackEntrySchema),
  resumed_workflow: z.string().nullable(),
  resumed_step: z.string().nullable(),
});

/** `go_to_step`. */
export const goToStepResponseSchema = z.object({
  begin_step: beginStepSchema,
  invalidated_steps: z.array(z.string()).describe(
    "Steps to do again, in order; their earlier outputs stay in the log and the viewer.",
  ),
  warnings,
  stack: z.array(stackEntrySchema),
});

/** The step to do now. */
export type BeginStep = z.infer<typeof beginStepSchema>;
/** A stack entry. */
export type StackEntry = z.infer<typeof stackEntrySchema>;
/** `get_workflows`' answer. */
export type GetWorkflowsResponse = z.infer<typeof getWorkflowsResponseSchema>;
/** `start_workflow`'s answer. */
export type JobStartResponse = z.infer<typeof startResponseSchema>;
/** `finished_step`'s answer. */
export type FinishedResponse = z.infer<typeof finishedResponseSchema>;
/** `abort_workflow`'s answer. */
export type JobAbortResponse = z.infer<typeof abortResponseSchema>;
/** `go_to_step`'s answer. */
export type GoToStepResponse = z.infer<typeof goToStepResponseSchema>;
