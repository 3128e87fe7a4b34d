/**
 * Input schemas of the MCP tools. Output schemas come from the engine's response schemas. A
 * field's description is what the model reads beside it (`tools/list` sends it with each
 * request), so only a field whose name and its tool's description do not say it has one.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { LIMITS } from "../../engine/model/limits.ts";
import { preferencesPatchSchema } from "../../engine/model/preferences.ts";
import { RESUME_MAX_LIMIT } from "../../engine/use_cases/resume_session.ts";

/**
 * Durable output an agent attaches to an ack or a checkpoint. Its caps are the engine's
 * (`checkOutput`), not the schema's: one boundary, refusing with `too_large` or
 * `too_many_artifacts` and the measured size, for every caller.
 */
const outputInputSchema = z.object({
  notesMarkdown: z.string().optional(),
  artifacts: z.array(
    z.object({ kind: z.string().min(1).max(100) }).catchall(z.unknown()),
  ).optional(),
}).strict();

/** A token argument, as the previous response gave it. */
const token = () => z.string().min(1).max(LIMITS.tokenChars);

const contextSchema = z.record(z.string(), z.unknown()).describe(
  "Facts for conditions and {{placeholders}}.",
);

/** `list_workflows` input. */
export const listInput = z.object({}).strict();

/** `inspect_workflow` input. */
export const inspectInput = z.object({
  workflowId: z.string().min(1),
}).strict();

/** `start_workflow` input. */
export const startInput = z.object({
  workflowId: z.string().min(1).optional(),
  delegationToken: token().optional(),
  context: contextSchema.optional(),
  goal: z.string().max(LIMITS.goalChars).optional().describe("The session's title."),
  preferences: preferencesPatchSchema.optional(),
}).strict();

/** `continue_workflow` input. */
export const continueInput = z.object({
  stateToken: token(),
  ackToken: token().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  preferences: preferencesPatchSchema.optional(),
  output: outputInputSchema.optional(),
}).strict();

/** `checkpoint_workflow` input. */
export const checkpointInput = z.object({
  stateToken: token(),
  checkpointToken: token(),
  output: outputInputSchema,
}).strict();

/** `resume_session` input. */
export const resumeInput = z.object({
  query: z.string().max(LIMITS.goalChars).optional(),
  limit: z.number().int().min(1).max(RESUME_MAX_LIMIT).optional(),
}).strict();

/** `start_session` input. */
export const startSessionInput = z.object({
  title: z.string().max(LIMITS.goalChars).optional(),
  preferences: preferencesPatchSchema.optional(),
}).strict();

/** `abort_workflow` input. */
export const abortInput = z.object({
  stateToken: token(),
  explanation: z.string().min(1).max(LIMITS.explanationChars),
}).strict();

/** `restore_workspace` input. */
export const restoreInput = z.object({
  stateToken: token(),
  dryRun: z.boolean().optional(),
  snapshot: z.string().max(64).optional(), // its form is checked by the use-case
}).strict();
