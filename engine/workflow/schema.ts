/**
 * The workflow file format (JSON/JSONC, compatible with WorkRail's), as zod schemas. This is
 * the one definition: validation, the published JSON Schema and the TypeScript types all come
 * from it. Fields that only describe a workflow (about, examples, assessments, ...) are accepted
 * and kept out of the compiled form; fields that change behaviour are compiled.
 * @module
 */
import { z } from "npm:zod@4.6.7";

/** A scalar or JSON value that a condition compares a context variable with. */
const jsonValue: z.ZodType<unknown> = z.unknown();

/** A condition over context (and loop) variables; see {@linkcode Condition}. */
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

/** Schema of a condition (`runCondition`, loop conditions, fragments, confirmations). */
export const conditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    comparison,
    z.object({ and: z.array(conditionSchema).min(1) }).strict(),
    z.object({ or: z.array(conditionSchema).min(1) }).strict(),
    z.object({ not: conditionSchema }).strict(),
  ])
).meta({ id: "condition" }) as z.ZodType<Condition>;

/** One part of a prompt value: literal text, or a reference to one of waymark's snippets. */
export const promptPartSchema = z.union([
  z.object({ kind: z.literal("text"), text: z.string() }).strict(),
  z.object({
    kind: z.literal("ref"),
    refId: z.string().min(1).describe("A `wr.refs.*` snippet id."),
  }).strict(),
]);

/** A prompt value: a string, or parts joined in order. */
export const promptValueSchema = z.union([z.string(), z.array(promptPartSchema)]);

/** Structured prompt parts, rendered in the order goal, constraints, procedure, output, verify. */
export const promptBlocksSchema = z.object({
  goal: promptValueSchema.optional(),
  constraints: z.array(promptValueSchema).optional(),
  procedure: z.array(promptValueSchema).optional(),
  outputRequired: z.union([
    z.string(),
    z.array(z.string()),
    z.record(z.string(), z.string()),
  ]).optional(),
  verify: z.array(promptValueSchema).optional(),
}).strict();

/** Ids of steps: lower-case letters, digits, `-` and `_`, starting with a letter. */
export const STEP_ID = /^[a-z][a-z0-9_-]*$/;

/** A declared output contract: a `wr.contracts.*` pack the step's output must satisfy. */
export const outputContractSchema = z.object({
  contractRef: z.string().min(1).describe("A `wr.contracts.*` id."),
  required: z.boolean().optional().describe("Whether the artifact is required (default true)."),
  hints: z.string().optional().describe("Guidance for the agent; not enforced."),
}).strict();

/** Whether a step needs the user's confirmation: a boolean, a condition, or a gate kind. */
export const confirmationSchema = z.union([
  z.boolean(),
  z.object({
    kind: z.enum(["coordinator_eval", "human_approval"]),
    condition: conditionSchema.optional(),
  }).strict(),
  conditionSchema,
]);

/** One validation rule over a step's notes. */
export const validationRuleSchema = z.object({
  type: z.enum(["contains", "regex", "length", "schema"]),
  value: z.string().optional(),
  pattern: z.string().optional(),
  flags: z.string().optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  message: z.string().optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  condition: conditionSchema.optional(),
}).strict();

/** Validation criteria: rules, or `and`/`or`/`not` compositions of them. */
export type ValidationCriteria =
  | z.infer<typeof validationRuleSchema>
  | ValidationCriteria[]
  | { and: ValidationCriteria[] }
  | { or: ValidationCriteria[] }
  | { not: ValidationCriteria };

/** Schema of {@linkcode ValidationCriteria}. */
export const validationCriteriaSchema: z.ZodType<ValidationCriteria> = z.lazy(() =>
  z.union([
    validationRuleSchema,
    z.array(validationCriteriaSchema),
    z.object({ and: z.array(validationCriteriaSchema).min(1) }).strict(),
    z.object({ or: z.array(validationCriteriaSchema).min(1) }).strict(),
    z.object({ not: validationCriteriaSchema }).strict(),
  ])
).meta({ id: "validationCriteria" }) as z.ZodType<ValidationCriteria>;

/** Reasons a step can depend on something only the user can provide (a closed set). */
export const USER_DEPENDENCY_REASONS = [
  "user_decision",
  "user_approval",
  "user_provided_document",
  "user_credentials",
  "user_domain_knowledge",
  "user_environment_access",
] as const;

/** A user-only dependency: a context key only the user can supply before the step completes. */
export const userDependencySchema = z.object({
  contextKey: z.string().min(1).describe("The context key that must be set when acknowledging."),
  reason: z.enum(USER_DEPENDENCY_REASONS),
  message: z.string().min(1).max(512).describe("What the user must provide, and why."),
}).strict();

/** Loop settings. */
export const loopConfigSchema = z.object({
  type: z.enum(["while", "until", "for", "forEach"]),
  condition: conditionSchema.optional().describe("For while/until: read from context."),
  conditionSource: z.union([
    z.object({
      kind: z.literal("artifact_contract"),
      contractRef: z.string().min(1),
      loopId: z.string().min(1).optional(),
    }).strict(),
    z.object({ kind: z.literal("context_variable"), condition: conditionSchema }).strict(),
  ]).optional().describe("For while/until: where the continue/stop decision comes from."),
  items: z.string().min(1).optional().describe("forEach: the context variable holding an array."),
  count: z.union([z.number().int().min(0).max(1000), z.string().min(1)]).optional()
    .describe("for: a number, or a context variable holding one."),
  maxIterations: z.number().int().min(1).max(1000).describe(
    "Safety limit (required, at most 1000).",
  ),
  iterationVar: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/).optional(),
  itemVar: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/).optional(),
  indexVar: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/).optional(),
}).strict();

/** A delegation of a parallel step: a routine or workflow an agent runs (ideally in a subagent). */
export const parallelDelegationSchema = z.object({
  workflowId: z.string().min(1),
  goal: z.string().optional(),
  runCondition: conditionSchema.optional(),
  contextMapping: z.record(z.string(), z.string()).optional(),
  args: z.record(z.string(), z.unknown()).optional(),
  modelTier: z.string().optional(),
  allowedTools: z.array(z.string()).optional(),
}).strict();

/** A step as written in a file (standard, loop or parallel). */
export interface WorkflowStep {
  /** Step id, `[a-z][a-z0-9_-]*`, unique after templates are expanded. */
  id: string;
  /** Human title. */
  title: string;
  /** `loop` or `parallel`; absent for a standard step. */
  type?: "loop" | "parallel";
  /** The prompt as one string. */
  prompt?: string;
  /** The prompt as structured blocks. */
  promptBlocks?: PromptBlocks;
  /** Text appended when its `when` holds. */
  promptFragments?: { id: string; when?: Condition; text: string }[];
  /** The role for this step (overrides the workflow's). */
  agentRole?: string;
  /** Extra bullet points under the prompt. */
  guidance?: string[];
  /** Run only when this holds. */
  runCondition?: Condition;
  /** Whether (or when) the user must confirm before the step is acknowledged. */
  requireConfirmation?: z.infer<typeof confirmationSchema>;
  /** The contract the acknowledgement must meet. */
  outputContract?: z.infer<typeof outputContractSchema>;
  /** The seed's spelling of `outputContract`. */
  output?: z.infer<typeof outputContractSchema>;
  /** Expands a template (a routine) here at compile time. */
  templateCall?: { templateId: string; args?: Record<string, unknown> };
  /** Checks on the step's notes. */
  validationCriteria?: ValidationCriteria;
  /** Context keys only the user can supply. */
  userDependencies?: z.infer<typeof userDependencySchema>[];
  /** Loop settings (loop steps). */
  loop?: z.infer<typeof loopConfigSchema>;
  /** Loop body: inline steps, or the id of a top-level step. */
  body?: string | WorkflowStep[];
  /** Delegations (parallel steps). */
  parallelDelegations?: z.infer<typeof parallelDelegationSchema>[];
  /** Names of workflow-level function definitions to inline. */
  functionReferences?: string[];
  /** WorkRail: notes may be omitted (accepted; waymark never requires notes). */
  notesOptional?: boolean;
  /** Descriptive WorkRail fields, accepted and not compiled. */
  [metadata: string]: unknown;
}

const metadata = z.unknown().optional();

/** One step of a workflow. */
export const stepSchema: z.ZodType<WorkflowStep> = z.lazy(() =>
  z.object({
    id: z.string().regex(STEP_ID, "step ids use [a-z][a-z0-9_-]*"),
    title: z.string().min(1),
    type: z.enum(["loop", "parallel"]).optional(),
    prompt: z.string().min(1).optional(),
    promptBlocks: promptBlocksSchema.optional(),
    promptFragments: z.array(
      z.object({
        id: z.string().regex(STEP_ID),
        when: conditionSchema.optional(),
        text: z.string().min(1),
      }).strict(),
    ).optional(),
    agentRole: z.string().min(1).optional(),
    guidance: z.array(z.string()).optional(),
    runCondition: conditionSchema.optional(),
    requireConfirmation: confirmationSchema.optional(),
    outputContract: outputContractSchema.optional(),
    output: outputContractSchema.optional().describe("Same as `outputContract` (seed form)."),
    templateCall: z.object({
      templateId: z.string().min(1).max(128),
      args: z.record(z.string(), z.unknown()).optional(),
    }).strict().optional(),
    validationCriteria: validationCriteriaSchema.optional(),
    userDependencies: z.array(userDependencySchema).max(10).optional(),
    loop: loopConfigSchema.optional(),
    body: z.union([z.string().regex(STEP_ID), z.array(stepSchema).min(1)]).optional(),
    parallelDelegations: z.array(parallelDelegationSchema).min(1).optional(),
    synthesis: metadata,
    functionReferences: z.array(z.string()).optional(),
    notesOptional: z.boolean().optional(),
    assessmentRefs: metadata,
    assessmentConsequences: metadata,
    functionDefinitions: metadata,
    functionCalls: metadata,
    askForFiles: metadata,
    hasValidation: metadata,
    modelTier: metadata,
    audit: metadata,
    verification: metadata,
    expectedOutput: metadata,
  }).strict().superRefine((s, ctx) => {
    const has = (k: keyof typeof s) => s[k] !== undefined;
    if (s.type === "loop") {
      if (!has("loop") || !has("body")) {
        ctx.addIssue({ code: "custom", message: "a loop step needs `loop` and `body`" });
      }
      for (const k of ["prompt", "promptBlocks", "templateCall"] as const) {
        if (has(k)) ctx.addIssue({ code: "custom", message: `a loop step has no \`${k}\`` });
      }
      return;
    }
    if (has("loop") || has("body")) {
      ctx.addIssue({
        code: "custom",
        message: '`loop` and `body` belong to a loop step: add `"type": "loop"`',
      });
    }
    if (s.type === "parallel") {
      if (!has("parallelDelegations")) {
        ctx.addIssue({ code: "custom", message: "a parallel step needs `parallelDelegations`" });
      }
      return;
    }
    const sources = ["prompt", "promptBlocks", "templateCall"].filter((k) =>
      has(k as keyof typeof s)
    );
    if (sources.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: "a step needs exactly one of `prompt`, `promptBlocks` or `templateCall`",
      });
    }
  })
).meta({ id: "step" }) as unknown as z.ZodType<WorkflowStep>;

/** The preference values a workflow may recommend as its maximum automation. */
export const recommendedPreferencesSchema = z.object({
  autonomy: z.enum(["guided", "full_auto_stop_on_user_deps", "full_auto_never_stop"]).optional(),
  riskPolicy: z.enum(["conservative", "balanced", "aggressive"]).optional(),
  recommendedAutonomy: z.enum(["guided", "full_auto_stop_on_user_deps", "full_auto_never_stop"])
    .optional().describe("WorkRail spelling of `autonomy`."),
  recommendedRiskPolicy: z.enum(["conservative", "balanced", "aggressive"]).optional()
    .describe("WorkRail spelling of `riskPolicy`."),
}).strict();

/** The closed set of capabilities a workflow can ask for. */
export const CAPABILITIES = ["delegation", "web_browsing"] as const;
/** A capability. */
export type Capability = typeof CAPABILITIES[number];

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
  capabilities: z.object({
    delegation: z.enum(["required", "preferred"]).optional(),
    web_browsing: z.enum(["required", "preferred"]).optional(),
  }).strict().optional().describe("Optional agent capabilities: required or preferred."),
  features: z.array(z.string().min(1).max(128)).optional().describe(
    "Compiler features (`wr.features.*`) applied at compile time.",
  ),
  functionDefinitions: z.array(
    z.object({
      name: z.string().min(1),
      definition: z.string(),
      parameters: z.unknown().optional(),
      scope: z.string().optional(),
    }).strict(),
  ).optional(),
  steps: z.array(stepSchema).min(1),
  about: metadata,
  examples: metadata,
  preconditions: metadata,
  clarificationPrompts: metadata,
  metricsProfile: metadata,
  validatedAgainstSpecVersion: metadata,
  references: metadata,
  extensionPoints: metadata,
  assessments: metadata,
  modelTier: metadata,
  tags: metadata,
  tips: metadata,
  autoRecognitionPatterns: metadata,
}).strict();

/** A validated workflow file. */
export type WorkflowFile = z.infer<typeof workflowFileSchema>;
/** Structured prompt parts of a step. */
export type PromptBlocks = z.infer<typeof promptBlocksSchema>;
/** A prompt value (string or parts). */
export type PromptValue = z.infer<typeof promptValueSchema>;
/** A loop's settings as written. */
export type LoopConfig = z.infer<typeof loopConfigSchema>;
/** A user-only dependency as written. */
export type UserDependency = z.infer<typeof userDependencySchema>;
