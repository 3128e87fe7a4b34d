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
  renderStepResponse,
  type Result,
  startWorkflow,
  stepResponseSchema,
} from "../engine/mod.ts";
import { checkpointInput, continueInput, inspectInput, listInput, startInput } from "./schemas.ts";

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
  /** Runs the use-case on validated input. */
  run(deps: EngineDeps, input: unknown): Promise<Result<unknown>>;
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
    run: (deps, input) => startWorkflow(deps, input as z.infer<typeof startInput>),
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
    run: (deps, input) => continueWorkflow(deps, input as z.infer<typeof continueInput>),
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
    run: (deps, input) => checkpointWorkflow(deps, input as z.infer<typeof checkpointInput>),
    render: (v) => renderStepResponse(v as z.infer<typeof stepResponseSchema>),
  },
];
