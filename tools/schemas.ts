/**
 * Input schemas of the MCP tools. Output schemas come from the engine's response schemas.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { LIMITS } from "../engine/limits.ts";
import { preferencesPatchSchema } from "../engine/preferences.ts";
import { RESUME_DEFAULT_LIMIT, RESUME_MAX_LIMIT } from "../engine/use_cases/resume_session.ts";

/**
 * Durable output an agent attaches to an ack or a checkpoint. Its caps are the engine's
 * (`checkOutput`), not the schema's: one boundary, refusing with `too_large` or
 * `too_many_artifacts` and the measured size, for every caller.
 */
const outputInputSchema = z.object({
  notesMarkdown: z.string().optional().describe(
    `A short recap (up to about 10 lines): what you did, what you found, what is next. At most ${LIMITS.notesBytes} bytes as UTF-8.`,
  ),
  artifacts: z.array(
    z.object({ kind: z.string().min(1).max(100) }).catchall(z.unknown()),
  ).optional().describe(
    `Small structured results, each with a \`kind\`: at most ${LIMITS.artifactCount}, each at most ${LIMITS.artifactBytes} bytes as JSON.`,
  ),
}).strict();

/** A token argument, as the previous response gave it. */
const token = () => z.string().min(1).max(LIMITS.tokenChars);

const contextSchema = z.record(z.string(), z.unknown()).describe(
  "External facts (ticket id, sizes, flags) that conditions and {{placeholders}} read.",
);

/** `list_workflows` input. */
export const listInput = z.object({}).strict();

/** `inspect_workflow` input. */
export const inspectInput = z.object({
  workflowId: z.string().min(1).describe(
    "Id from list_workflows, e.g. `waymark.bug_investigation`.",
  ),
}).strict();

/** `start_workflow` input. */
export const startInput = z.object({
  workflowId: z.string().min(1).optional().describe(
    "Id from list_workflows (leave out with a delegationToken).",
  ),
  delegationToken: token().optional().describe(
    "A child run's token from a parallel step's `delegations`: drive that child (give nothing else).",
  ),
  context: contextSchema.optional(),
  goal: z.string().max(LIMITS.goalChars).optional().describe(
    "What this run is for; becomes the session title.",
  ),
  preferences: preferencesPatchSchema.optional(),
}).strict();

/** `continue_workflow` input. */
export const continueInput = z.object({
  stateToken: token().describe("From the last response, unchanged."),
  ackToken: token().optional().describe(
    "From the last response: acknowledges the pending step. Omit to rehydrate without writing.",
  ),
  context: contextSchema.optional(),
  preferences: preferencesPatchSchema.optional(),
  output: outputInputSchema.optional(),
}).strict();

/** `checkpoint_workflow` input. */
export const checkpointInput = z.object({
  stateToken: token().describe("From the last response, unchanged."),
  checkpointToken: token().describe("From the same response as stateToken."),
  output: outputInputSchema,
}).strict();

/** `resume_session` input. */
export const resumeInput = z.object({
  query: z.string().max(LIMITS.goalChars).optional().describe(
    "Words from the session's title, goal or notes, or a ses_/run_ id. Omit to list recent runs.",
  ),
  limit: z.number().int().min(1).max(RESUME_MAX_LIMIT).optional().describe(
    `How many candidates (default ${RESUME_DEFAULT_LIMIT}).`,
  ),
}).strict();

/** `start_session` input. */
export const startSessionInput = z.object({
  title: z.string().max(LIMITS.goalChars).optional().describe(
    "What this session is about; resume_session finds it by these words.",
  ),
  preferences: preferencesPatchSchema.optional(),
}).strict();

/** `abort_workflow` input. */
export const abortInput = z.object({
  stateToken: token().describe("Any stateToken of the run to abort."),
  explanation: z.string().min(1).max(LIMITS.explanationChars).describe("Why the run is abandoned."),
}).strict();
