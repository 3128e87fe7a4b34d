/**
 * The MCP tools: name, description, schemas, the use-case each calls, and its text rendering.
 * Thin by design: no business rules here.
 * @module
 */
import type { z } from "npm:zod@4.6.7";
import {
  checkpointWorkflow,
  continueWorkflow,
  type EngineDeps,
  inspectResponseSchema,
  inspectWorkflow,
  listResponseSchema,
  listWorkflows,
  renderInspect,
  renderList,
  renderResume,
  renderStepResponse,
  type Result,
  resumeResponseSchema,
  resumeSession,
  startSession,
  startWorkflow,
  stepResponseSchema,
  type WorkspaceObservation,
} from "../engine/mod.ts";
import {
  checkpointInput,
  continueInput,
  inspectInput,
  listInput,
  resumeInput,
  startInput,
  startSessionInput,
} from "./schemas.ts";

/** What a tool call knows besides its arguments. */
export interface ToolContext {
  /** The client's workspace for this request. */
  workspace?: WorkspaceObservation;
  /** Told each session (`ses_…`) the call appended to, after the commit. */
  onAppend?: (sessionId: string) => void;
}

/** One tool. */
export interface ToolDefinition {
  /** Tool name. */
  name: string;
  /** Human title. */
  title: string;
  /** What it does; every backticked field it names exists in its schemas (a test checks). */
  description: string;
  /** Input schema. */
  input: z.ZodType;
  /** Output schema of a success. */
  output: z.ZodType;
  /** Whether the tool only reads. */
  readOnly: boolean;
  /** Whether the tool is listed only when its flag is on (`start_session`). */
  flag?: "startSession";
  /** Runs the use-case on validated input, with the request's context. */
  run(deps: EngineDeps, input: unknown, ctx?: ToolContext): Promise<Result<unknown>>;
  /** Renders a success as text. */
  render(value: unknown): string;
}

/** Every tool, in the order clients list them. */
export const TOOLS: readonly ToolDefinition[] = [
  {
    name: "list_workflows",
    title: "List workflows",
    description:
      "List every workflow waymark can run: `id`, `name`, `summary`, `kind` (workflow or routine), `idStatus`, `source`. Files that fail to load appear in `loadErrors` with the fix. Read-only.",
    input: listInput,
    output: listResponseSchema,
    readOnly: true,
    run: (deps) => listWorkflows(deps),
    render: (v) => renderList(v as z.infer<typeof listResponseSchema>),
  },
  {
    name: "inspect_workflow",
    title: "Inspect a workflow",
    description:
      "Show a workflow's description and a preview of its `steps` before starting it. Takes `workflowId`. Read-only; never starts a run.",
    input: inspectInput,
    output: inspectResponseSchema,
    readOnly: true,
    run: (deps, input) => inspectWorkflow(deps, input as z.infer<typeof inspectInput>),
    render: (v) => renderInspect(v as z.infer<typeof inspectResponseSchema>),
  },
  {
    name: "start_workflow",
    title: "Start a workflow",
    description:
      "Start a run of `workflowId` (optional `context`, `goal`, `preferences`). Returns the first `pending` step and three opaque tokens: `stateToken`, `ackToken`, `checkpointToken`. Do the step, then call continue_workflow with the `stateToken` and `ackToken` exactly as returned.",
    input: startInput,
    output: stepResponseSchema,
    readOnly: false,
    run: (deps, input, ctx) => startWorkflow(deps, input as z.infer<typeof startInput>, ctx),
    render: (v) => renderStepResponse(v as z.infer<typeof stepResponseSchema>),
  },
  {
    name: "continue_workflow",
    title: "Continue a workflow",
    description:
      "With `stateToken` and `ackToken`: acknowledge the `pending` step and get the next one; put a short recap in `output.notesMarkdown` and new facts in `context`. Replaying the same tokens returns the same answer. An older `stateToken` starts a new branch (`forked`). If the step has an `outputContract`, put the artifact it asks for in `output.artifacts`. When the acknowledgement is missing something the step requires, the answer has `kind` blocked with `blockers` and an `example`: fix it and retry with the new `ackToken` (under full_auto_never_stop it advances and lists `gaps` instead). Without `ackToken`: rehydrate the current step, a `recap`, and fresh tokens, writing nothing. When `isComplete` is true, `pending` is null.",
    input: continueInput,
    output: stepResponseSchema,
    readOnly: false,
    run: (deps, input, ctx) => continueWorkflow(deps, input as z.infer<typeof continueInput>, ctx),
    render: (v) => renderStepResponse(v as z.infer<typeof stepResponseSchema>),
  },
  {
    name: "checkpoint_workflow",
    title: "Checkpoint a workflow",
    description:
      "Save durable notes at the current step without advancing: `stateToken`, `checkpointToken` and `output` (`notesMarkdown` and/or `artifacts`). Use it after substantial work outside a step so a chat rewind loses nothing. Idempotent; never creates a branch.",
    input: checkpointInput,
    output: stepResponseSchema,
    readOnly: false,
    run: (deps, input, ctx) =>
      checkpointWorkflow(deps, input as z.infer<typeof checkpointInput>, ctx),
    render: (v) => renderStepResponse(v as z.infer<typeof stepResponseSchema>),
  },
  {
    name: "resume_session",
    title: "Find a session to resume",
    description:
      "For a brand-new chat: find earlier runs by `query` (words from the title, goal or notes, or a ses_/run_ id; omit it to list recent runs). Returns ranked `candidates`, each a run tip with a `snippet`, how its `workspace` compares with yours (folder, git branch, HEAD), and fresh tokens in `tip`. Then call continue_workflow with only `stateToken` to get the pending step and a recap. Read-only.",
    input: resumeInput,
    output: resumeResponseSchema,
    readOnly: true,
    run: (deps, input, ctx) =>
      resumeSession(deps, input as z.infer<typeof resumeInput>, { workspace: ctx?.workspace }),
    render: (v) => renderResume(v as z.infer<typeof resumeResponseSchema>),
  },
  {
    name: "start_session",
    title: "Start a notes-only session",
    description:
      "Open a checkpoint-only session (optional `title`) for durable notes before any workflow. Returns `stateToken` and `checkpointToken`: save notes with checkpoint_workflow; resume_session finds the session later.",
    input: startSessionInput,
    output: stepResponseSchema,
    readOnly: false,
    flag: "startSession",
    run: (deps, input, ctx) => startSession(deps, input as z.infer<typeof startSessionInput>, ctx),
    render: (v) => renderStepResponse(v as z.infer<typeof stepResponseSchema>),
  },
];
