/**
 * The DeepWork tool profile (`serve --profile deepwork`): `get_workflows`, `start_workflow`,
 * `finished_step`, `abort_workflow` and `go_to_step`, then the tools outside the workflow
 * lifecycle (reviews, session jobs, named schemas: `deepwork_reviews.ts`), with DeepWork's parameter names and
 * response fields, over waymark's engine and store. Each call is logged to stderr with the tool
 * name and the caller's workflow stack. Thin: the use-cases live in `engine/deepwork/`.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { abortJobWorkflow } from "../../engine/deepwork/abort.ts";
import { finishStep } from "../../engine/deepwork/finish.ts";
import { goToStep } from "../../engine/deepwork/go_to_step.ts";
import type { JobPorts } from "../../engine/deepwork/ports.ts";
import {
  abortResponseSchema,
  finishedResponseSchema,
  getWorkflowsResponseSchema,
  goToStepResponseSchema,
  startResponseSchema,
} from "../../engine/deepwork/job_responses.ts";
import { getWorkflows, startJobWorkflow } from "../../engine/deepwork/start.ts";
import { LIMITS } from "../../engine/model/limits.ts";
import {
  defineTool,
  type ToolDefinition,
  type ToolProfile,
  type ToolSpec,
} from "../calls/define_tool.ts";
import { type CallAt, here, logged } from "./deepwork/call_log.ts";
import { diskFiles } from "./deepwork/files.ts";
import { gitWorkspace } from "./deepwork/git_workspace.ts";
import { namedSchemaFolders } from "./deepwork/named_schema_folders.ts";
import { deepworkExtraTools } from "./deepwork_reviews.ts";
import type { NamedSchemaSource, ReviewWorkspace } from "../../engine/review/ports.ts";
import { connectionPresence } from "./deepwork/presence.ts";
import { PROFILES, publishedSchemas } from "./registry.ts";

/** What the DeepWork profile is built from. */
export interface DeepworkProfileOptions extends Omit<JobPorts, "files" | "presence"> {
  /** Named schemas; default none but the bundled set (`deepwork/named_schema_folders.ts`). */
  schemas?: NamedSchemaSource;
  /** The workspace at a root, as the review tools read it; default through git. */
  workspace?: (root: string) => ReviewWorkspace;
  /** Output files; default the local disk. */
  files?: JobPorts["files"];
  /** Who this connection is; default a new key for it (see `deepwork/presence.ts`). */
  presence?: JobPorts["presence"];
  /** Where each call's log line goes (stderr; never stdout). */
  log?: (line: string) => void;
}

const sessionId = z.string().min(1).max(LIMITS.nameChars).optional().describe(
  "The session_id begin_step returned (one per workflow started); omit it to act on the top of your own workflow stack.",
);
const agentId = z.string().min(1).max(LIMITS.nameChars).optional().describe(
  "A sub-agent's own id: its workflows form their own stack.",
);

const startInput = z.object({
  goal: z.string().max(LIMITS.titleChars).describe("What this run is for."),
  job_name: z.string().min(1).max(LIMITS.nameChars),
  workflow_name: z.string().max(LIMITS.nameChars).describe(
    "A workflow of the job (a job with one workflow runs it whatever the name).",
  ),
  instance_id: z.string().max(LIMITS.nameChars).nullable().optional(),
  inputs: z.record(z.string(), z.unknown()).optional().describe(
    "Values for the workflow's inputs.",
  ),
  session_id: sessionId,
  agent_id: agentId,
}).strict();

const finishInput = z.object({
  outputs: z.record(z.string(), z.unknown()).describe(
    "Each output name to a file path, a list of file paths, or text, as step_expected_outputs says.",
  ),
  notes: z.string().optional().describe(
    `What you did (the newer spelling is work_summary); at most ${LIMITS.notesBytes / 1024} KiB.`,
  ),
  work_summary: z.string().optional(),
  quality_review_override_reason: z.string().min(1).max(LIMITS.explanationChars).optional()
    .describe("Skips the quality gate; recorded with the run."),
  session_id: sessionId,
  agent_id: agentId,
}).strict();

const abortInput = z.object({
  explanation: z.string().min(1).max(LIMITS.explanationChars),
  session_id: sessionId,
  agent_id: agentId,
}).strict();

const goToStepInput = z.object({
  step_id: z.string().min(1).max(LIMITS.nameChars),
  session_id: sessionId,
  agent_id: agentId,
}).strict();

const render = (value: unknown) => JSON.stringify(value, null, 2);

/** A DeepWork tool: it needs the workspace, answers JSON, and each call is logged by its name. */
function jobTool<In extends CallAt["input"], Out extends Record<string, unknown>>(
  at: ToolsAt,
  spec: Omit<ToolSpec<In, Out>, "workspace" | "render">,
): ToolDefinition {
  return defineTool<In, Out>({
    ...spec,
    workspace: "always",
    render,
    run: async (deps, input, ctx) =>
      logged(
        { tool: spec.name, log: at.log, deps, input, ctx, presence: at.ports.presence },
        await spec.run(deps, input, ctx),
      ),
  });
}

/** What the profile's tools are built on. */
interface ToolsAt {
  ports: JobPorts;
  log: DeepworkProfileOptions["log"];
}

function startTools(at: ToolsAt) {
  const { ports } = at;
  return [
    jobTool(at, {
      name: "get_workflows",
      title: "List DeepWork jobs",
      description:
        "List the jobs in `.deepwork/jobs` (and configured job folders) with their workflows: `jobs` (each with `name`, `summary`, `workflows`), and `errors` for jobs that failed to load. Read-only.",
      input: z.object({}).strict(),
      output: getWorkflowsResponseSchema,
      readOnly: true,
      idempotent: true,
      destructive: false,
      run: (_deps, _input, ctx) => getWorkflows(ports, here(ctx)),
    }),
    jobTool(at, {
      name: "start_workflow",
      title: "Start a DeepWork workflow",
      description:
        "Start `workflow_name` of `job_name` for `goal` (optional `instance_id`, `inputs`). Returns `begin_step` (the first step: `step_instructions`, `step_expected_outputs`, `step_reviews`, `session_id`) and the workflow `stack`. Starting while a workflow runs nests the new one on top of it.",
      input: startInput,
      output: startResponseSchema,
      readOnly: false,
      idempotent: false,
      destructive: false,
      run: (deps, input, ctx) =>
        startJobWorkflow({ ...deps, ...ports }, { ...input, workspace: here(ctx) }),
    }),
  ];
}

function stepTools(at: ToolsAt) {
  const { ports } = at;
  return [
    jobTool(at, {
      name: "finished_step",
      title: "Finish the current step",
      description:
        "Report the current step done: `outputs` maps each expected output to a file path, a list of file paths, or text (files relative to the project root), with optional `notes`. The answer's `status` is needs_work (fix what `feedback` says and call again), next_step (`begin_step` is the next step) or workflow_complete (`all_outputs`). Pass `quality_review_override_reason` after a self-review. Retrying an identical call returns the recorded answer.",
      input: finishInput,
      output: finishedResponseSchema,
      readOnly: false,
      idempotent: true,
      destructive: false,
      run: (deps, input, ctx) =>
        finishStep({ ...deps, ...ports }, { ...input, workspace: here(ctx) }),
    }),
    jobTool(at, {
      name: "abort_workflow",
      title: "Abort the current workflow",
      description:
        "Abandon the workflow at the top of the stack, with an `explanation`. It is recorded as aborted; the answer names the workflow work resumes in (`resumed_workflow`, `resumed_step`), if any.",
      input: abortInput,
      output: abortResponseSchema,
      readOnly: false,
      idempotent: false,
      destructive: true,
      run: (deps, input, ctx) =>
        abortJobWorkflow({ ...deps, ...ports }, { ...input, workspace: here(ctx) }),
    }),
    jobTool(at, {
      name: "go_to_step",
      title: "Go back to an earlier step",
      description:
        "Go back to an earlier step (`step_id`) of the current workflow to redo it and what follows. Nothing is lost: the earlier attempt stays on record as its own branch. Returns `begin_step` and `invalidated_steps` (the steps to do again).",
      input: goToStepInput,
      output: goToStepResponseSchema,
      readOnly: false,
      idempotent: true,
      destructive: false,
      run: (deps, input, ctx) =>
        goToStep({ ...deps, ...ports }, { ...input, workspace: here(ctx) }),
    }),
  ];
}

const INSTRUCTIONS = [
  "This server runs DeepWork jobs: multi-step workflows defined in .deepwork/jobs/<job>/job.yml.",
  "Discover: get_workflows lists jobs and their workflows.",
  "Start: start_workflow with goal, job_name and workflow_name returns begin_step, the first step.",
  "Execute: follow step_instructions and produce every output in step_expected_outputs.",
  "Checkpoint: finished_step with outputs (file paths relative to the project root, or text) and notes.",
  "Iterate: on status needs_work, fix what feedback says (have a sub-agent review when asked) and call finished_step again.",
  "Continue: on next_step, begin_step is the next step; starting another workflow meanwhile nests it, and finishing or aborting it returns to this one.",
  "Complete: workflow_complete lists all_outputs. abort_workflow abandons the current workflow; go_to_step goes back to an earlier step.",
  "Review: get_review_instructions gives review tasks for the changed files (from .deepreview rules and named schemas) to run in parallel sub-agents; mark_review_as_passed records a review that found nothing left to fix.",
  "Session jobs: register_session_job defines a job for your session, which start_workflow with that session_id finds.",
].join(" ");

/** The DeepWork profile over the given jobs, files and quality gate. */
export function deepworkProfile(options: DeepworkProfileOptions): ToolProfile {
  const ports: JobPorts = {
    jobs: options.jobs,
    files: options.files ?? diskFiles,
    gate: options.gate,
    presence: options.presence ?? connectionPresence(),
  };
  return {
    serverName: "deepwork",
    instructions: INSTRUCTIONS,
    tools: [
      ...startTools({ ports, log: options.log }),
      ...stepTools({ ports, log: options.log }),
      ...deepworkExtraTools({
        jobs: ports,
        schemas: options.schemas ?? namedSchemaFolders({ dirs: [] }),
        workspace: options.workspace ?? gitWorkspace,
        log: options.log,
      }),
    ],
    // generated from these tools (`deno task schema`), which the early server answers from too
    published: publishedSchemas(PROFILES.deepwork),
  };
}
