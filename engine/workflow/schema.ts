/**
 * The workflow file format (JSON/JSONC, compatible with WorkRail's), as zod schemas. This is
 * the one definition: validation, the published JSON Schema and the TypeScript types all come
 * from it.
 * @module
 */
import { z } from "npm:zod@4.6.7";

/** A scalar or JSON value that a condition compares a context variable with. */
const jsonValue: z.ZodType<unknown> = z.unknown();

/** A condition over context variables; see {@linkcode Condition}. */
export type Condition =
  | {
    var: string;
    equals?: unknown;
    not_equals?: unknown;
    gt?: number;
    gte?: number;
    lt?: number;
    lte?: number;
    in?: unknown[];
    contains?: unknown;
  }
  | { and: Condition[] }
  | { or: Condition[] }
  | { not: Condition };

const comparison = z.object({
  var: z.string().min(1).describe("Context variable name; `a.b` reads a nested field."),
  equals: jsonValue.optional(),
  not_equals: jsonValue.optional(),
  gt: z.number().optional(),
  gte: z.number().optional(),
  lt: z.number().optional(),
  lte: z.number().optional(),
  in: z.array(jsonValue).optional(),
  contains: jsonValue.optional(),
}).strict().refine(
  (c) => OPERATORS.filter((op) => op in c).length === 1,
  {
    message:
      "a condition on a variable needs exactly one operator: equals, not_equals, gt, gte, lt, lte, in or contains",
  },
);

/** The comparison operators a condition may use on a variable. */
export const OPERATORS = [
  "equals",
  "not_equals",
  "gt",
  "gte",
  "lt",
  "lte",
  "in",
  "contains",
] as const;

/** Schema of a run condition (`runCondition`). */
export const conditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    comparison,
    z.object({ and: z.array(conditionSchema).min(1) }).strict(),
    z.object({ or: z.array(conditionSchema).min(1) }).strict(),
    z.object({ not: conditionSchema }).strict(),
  ])
) as z.ZodType<Condition>;

/** Structured prompt parts, rendered in the order goal, constraints, procedure, output, verify. */
export const promptBlocksSchema = z.object({
  goal: z.string().optional(),
  constraints: z.array(z.string()).optional(),
  procedure: z.array(z.string()).optional(),
  outputRequired: z.union([z.string(), z.array(z.string())]).optional(),
  verify: z.array(z.string()).optional(),
}).strict();

/** Ids of steps: lower-case letters, digits, `-` and `_`, starting with a letter. */
export const STEP_ID = /^[a-z][a-z0-9_-]*$/;

/** One step of a workflow. */
export const stepSchema = z.object({
  id: z.string().regex(STEP_ID, "step ids use [a-z][a-z0-9_-]*"),
  title: z.string().min(1),
  prompt: z.string().min(1).optional(),
  promptBlocks: promptBlocksSchema.optional(),
  agentRole: z.string().min(1).optional(),
  guidance: z.array(z.string()).optional(),
  runCondition: conditionSchema.optional(),
  requireConfirmation: z.boolean().optional(),
}).strict().refine((s) => (s.prompt === undefined) !== (s.promptBlocks === undefined), {
  message: "a step needs exactly one of `prompt` or `promptBlocks`",
});

/** The preference values a workflow may recommend as its maximum automation. */
export const recommendedPreferencesSchema = z.object({
  autonomy: z.enum(["guided", "full_auto_stop_on_user_deps", "full_auto_never_stop"]).optional(),
  riskPolicy: z.enum(["conservative", "balanced", "aggressive"]).optional(),
}).strict();

/** A whole workflow file. */
export const workflowFileSchema = z.object({
  $schema: z.string().optional(),
  id: z.string().min(1),
  name: z.string().min(1),
  description: z.string().min(1),
  version: z.string().min(1),
  agentRole: z.string().min(1).optional(),
  metaGuidance: z.array(z.string()).optional(),
  recommendedPreferences: recommendedPreferencesSchema.optional(),
  steps: z.array(stepSchema).min(1),
}).strict();

/** A validated workflow file. */
export type WorkflowFile = z.infer<typeof workflowFileSchema>;
/** A validated step of a workflow file. */
export type WorkflowStep = z.infer<typeof stepSchema>;
/** Structured prompt parts of a step. */
export type PromptBlocks = z.infer<typeof promptBlocksSchema>;
