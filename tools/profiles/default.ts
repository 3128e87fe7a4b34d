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
} from "../../engine/responses.ts";
import { renderInspect, renderList, renderResume, renderStepResponse } from "../../engine/text.ts";
import { abortWorkflow, runAbortResponseSchema } from "../../engine/use_cases/abort_run.ts";
import { checkpointWorkflow } from "../../engine/use_cases/checkpoint_workflow.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { inspectWorkflow } from "../../engine/use_cases/inspect_workflow.ts";
import { listWorkflows } from "../../engine/use_cases/list_workflows.ts";
import { resumeSession } from "../../engine/use_cases/resume_session.ts";
import { startSession } from "../../engine/use_cases/start_session.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { defineTool, type ToolDefinition, type ToolProfile } from "../define_tool.ts";
import { PROFILES, publishedSchemas } from "./registry.ts";
import {
  abortInput,
  checkpointInput,
  continueInput,
  inspectInput,
  listInput,
  resumeInput,
  startInput,
  startSessionInput,
} from "../schemas.ts";

/** Every tool of the default profile, in the order clients list them. */
export const TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: "list_workflows",
    title: "List workflows",
    description:
      "List every workflow waymark can run: `id`, `name`, `summary`, `kind` (workflow or routine), `idStatus`, `source`. Files that fail to load appear in `loadErrors` with the fix. Read-only.",
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
    description:
      "Show a workflow's description and a preview of its `steps` before starting it. Takes `workflowId`. Read-only; never starts a run.",
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
      "Start a run of `workflowId` (optional `context`, `goal`, `preferences`), or take up a child run with only a `delegationToken` (from a parallel step's `delegations`). Returns the `pending` step and three opaque tokens: `stateToken`, `ackToken`, `checkpointToken`. Do the step, then call continue_workflow with the `stateToken` and `ackToken` exactly as returned.",
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
      "With `stateToken` and `ackToken`: acknowledge the `pending` step and get the next one; put a short recap in `output.notesMarkdown` (required unless `pending.notesOptional`) and new facts in `context`. Replaying the same tokens returns the same answer. An older `stateToken` starts a new branch (`forked`). If the step has an `outputContract`, put the artifact it asks for in `output.artifacts`; if it lists `assessments`, one artifact of kind wr.assessment per assessment there too. When the acknowledgement is missing something the step requires, the answer has `kind` blocked with `blockers` and an `example`: fix it and retry with the new `ackToken` (under full_auto_never_stop it advances and lists `gaps` instead). Without `ackToken`: rehydrate the current step, a `recap`, and fresh tokens, writing nothing. When `isComplete` is true, `pending` is null.",
    input: continueInput,
    output: stepResponseSchema,
    readOnly: false,
    idempotent: true,
    destructive: false,
    elicits: true,
    workspace: (input) => input.ackToken !== undefined,
    run: (deps, input, ctx) => continueWorkflow(deps, input, ctx),
    render: renderStepResponse,
  }),
  defineTool({
    name: "checkpoint_workflow",
    title: "Checkpoint a workflow",
    description:
      "Save durable notes at the current step without advancing: `stateToken`, `checkpointToken` and `output` (`notesMarkdown` and/or `artifacts`). Use it after substantial work outside a step so a chat rewind loses nothing. Idempotent; never creates a branch.",
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
      "For a brand-new chat: find earlier runs by `query` (words from the title, goal or notes, or a ses_/run_ id; omit it to list recent runs). Returns ranked `candidates`, each a run tip with a `snippet`, how its `workspace` compares with yours (folder, git branch, HEAD), and fresh tokens in `tip`. Then call continue_workflow with only `stateToken` to get the pending step and a recap. Read-only.",
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
    description:
      "Abandon the run `stateToken` belongs to, with an `explanation`. The run's status becomes aborted (shown by resume_session and the viewer) and it takes no more acknowledgements; checkpoints still add notes. Aborting again changes nothing (`alreadyAborted`).",
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
    name: "start_session",
    title: "Start a notes-only session",
    description:
      "Open a checkpoint-only session (optional `title`) for durable notes before any workflow. Returns `stateToken` and `checkpointToken`: save notes with checkpoint_workflow; resume_session finds the session later.",
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
