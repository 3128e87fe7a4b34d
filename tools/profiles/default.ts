/**
 * The default tool profile: waymark's own tools (list, inspect, start, continue, checkpoint,
 * resume, and the flagged start_session), each naming the use-case it calls and how its answer
 * renders as text. Thin by design: no business rules here.
 * @module
 */
import {
  checkpointStepResponseSchema,
  inspectResponseSchema,
  listResponseSchema,
  resumeResponseSchema,
  startStepResponseSchema,
  startWorkflowResponseSchema,
  stepResponseSchema,
} from "../../engine/answers/responses.ts";
import {
  renderInspect,
  renderList,
  renderResume,
  renderStepResponse,
} from "../../engine/answers/text.ts";
import { abortWorkflow, runAbortResponseSchema } from "../../engine/use_cases/abort_run.ts";
import { checkpointWorkflow } from "../../engine/use_cases/checkpoint_workflow.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { inspectWorkflow } from "../../engine/use_cases/inspect_workflow.ts";
import { listWorkflows } from "../../engine/use_cases/list_workflows.ts";
import { resumeSession } from "../../engine/use_cases/resume_session.ts";
import { startSession } from "../../engine/use_cases/start_session.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { restoreWorkspace } from "../../engine/use_cases/restore_workspace.ts";
import { renderRestore, restoreResponseSchema } from "../../engine/model/snapshots.ts";
import { defineTool, type ToolDefinition, type ToolProfile } from "../calls/define_tool.ts";
import { PROFILES, publishedSchemas } from "./registry.ts";
import {
  abortInput,
  checkpointInput,
  continueInput,
  inspectInput,
  listInput,
  restoreInput,
  resumeInput,
  startInput,
  startSessionInput,
} from "../calls/schemas.ts";

/** Every tool of the default profile, in the order clients list them. */
export const TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: "list_workflows",
    title: "List workflows",
    description: "The workflows to run: `id`, `name`, `summary`; `loadErrors`.",
    input: listInput,
    output: listResponseSchema,
    readOnly: true,
    idempotent: true,
    destructive: false,
    workspace: "never",
    run: (deps) => listWorkflows(deps),
    render: renderList,
  }),
  defineTool({
    name: "inspect_workflow",
    title: "Inspect a workflow",
    description: "A workflow's `steps`, before starting it.",
    input: inspectInput,
    output: inspectResponseSchema,
    readOnly: true,
    idempotent: true,
    destructive: false,
    workspace: "never",
    run: (deps, input) => inspectWorkflow(deps, input),
    render: renderInspect,
  }),
  defineTool({
    name: "start_workflow",
    title: "Start a workflow",
    description:
      "Start `workflowId` (or a child run: its `delegationToken` alone); do the `pending` step, then call continue_workflow.",
    input: startInput,
    output: startWorkflowResponseSchema,
    readOnly: false,
    idempotent: false,
    destructive: false,
    taskSupport: "optional",
    workspace: "always",
    run: (deps, input, ctx) => startWorkflow(deps, input, ctx),
    render: renderStepResponse,
  }),
  defineTool({
    name: "continue_workflow",
    title: "Continue a workflow",
    description:
      "With `stateToken` and `ackToken`: acknowledge the `pending` step. Send a recap in `output.notesMarkdown` and what `pending` asks: `requiredContext` and `userDependencies` (ask the user) keys in `context`, notes meeting `notesRules`, `outputContract.example` and a wr.assessment per `assessments` entry in `output.artifacts`. If `blockers`: fix, retry with the new `ackToken`. Only `stateToken`: the step, a `recap`, fresh tokens.",
    input: continueInput,
    output: stepResponseSchema,
    readOnly: false,
    idempotent: true,
    destructive: false,
    elicits: true,
    workspace: "always", // a rehydrate compares the files with the node's snapshot
    run: (deps, input, ctx) => continueWorkflow(deps, input, ctx),
    render: renderStepResponse,
  }),
  defineTool({
    name: "checkpoint_workflow",
    title: "Checkpoint a workflow",
    description: "Save `output` without advancing (`checkpointToken`).",
    input: checkpointInput,
    output: checkpointStepResponseSchema,
    readOnly: false,
    idempotent: true,
    destructive: false,
    workspace: "always",
    run: (deps, input, ctx) => checkpointWorkflow(deps, input, ctx),
    render: renderStepResponse,
  }),
  defineTool({
    name: "resume_session",
    title: "Find a session to resume",
    description:
      "New chat: find runs by `query` (words of their notes or title, a run id; none: recent), then continue_workflow with a `tip.stateToken` alone.",
    input: resumeInput,
    output: resumeResponseSchema,
    readOnly: true,
    idempotent: true,
    destructive: false,
    workspace: "always",
    run: (deps, input, ctx) => resumeSession(deps, input, { workspace: ctx?.workspace }),
    render: renderResume,
  }),
  defineTool({
    name: "abort_workflow",
    title: "Abort a run",
    description: "Abandon the run of `stateToken` (why: `explanation`).",
    input: abortInput,
    output: runAbortResponseSchema,
    readOnly: false,
    idempotent: true,
    destructive: true,
    workspace: "never",
    run: (deps, input, ctx) => abortWorkflow(deps, input, ctx),
    render: (value) =>
      `${
        value.alreadyAborted ? "Already aborted" : "Aborted"
      }: ${value.workflowId} (${value.session.runId}) at step ${
        value.abortedStepId ?? "(none)"
      }. ${value.explanation}`,
  }),
  defineTool({
    name: "restore_workspace",
    title: "Restore the workspace's files",
    description: "Restore the files to `stateToken`'s node (`dryRun`: list only); answers `undo`.",
    input: restoreInput,
    output: restoreResponseSchema,
    readOnly: false,
    idempotent: true,
    destructive: true,
    workspace: "always",
    run: (deps, input, ctx) => restoreWorkspace(deps, input, ctx),
    render: renderRestore,
  }),
  defineTool({
    name: "start_session",
    title: "Start a notes-only session",
    description:
      "Open a notes-only session (`title`): save notes with checkpoint_workflow and its `checkpointToken`.",
    input: startSessionInput,
    output: startStepResponseSchema,
    readOnly: false,
    idempotent: false,
    destructive: false,
    workspace: "always",
    flag: "startSession",
    run: (deps, input, ctx) => startSession(deps, input, ctx),
    render: renderStepResponse,
  }),
];

const INSTRUCTIONS = [
  "waymark runs structured workflows one step at a time.",
  "list_workflows, then start_workflow; do the pending step; then continue_workflow with the stateToken and ackToken exactly as returned, plus output.notesMarkdown (and output.artifacts when the step names an output contract or assessments).",
  "A blocked answer lists what is missing; fix it and retry with the new ackToken.",
  "Tokens are opaque: never edit them. If you lose your place, call continue_workflow with only the stateToken.",
  "In a new chat, resume_session finds earlier work by words from its notes.",
].join(" ");

/** waymark's own tools and how to use them: what a server serves unless told otherwise. */
export const DEFAULT_PROFILE: ToolProfile = {
  instructions: INSTRUCTIONS,
  tools: TOOLS,
  // generated from these tools (`deno task schema`), which the early server answers from too
  published: publishedSchemas(PROFILES.default),
};
