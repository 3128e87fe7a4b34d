/**
 * The workflow file format (JSON/JSONC, compatible with WorkRail's), as zod schemas. This is
 * the one definition: validation, the published JSON Schema and the TypeScript types all come
 * from it. Fields that only describe a workflow (about, examples, ...) are accepted and kept out
 * of the compiled form; fields that change behaviour are compiled.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { autonomySchema, riskPolicySchema } from "../model/preferences.ts";
import {
  CAPABILITIES,
  type Capability,
  CAPABILITY_NEEDS,
  USER_DEPENDENCY_REASONS,
} from "../model/vocabulary.ts";
import { uncheckableSchema } from "../gates/json_schema_check.ts";
import { linearPattern } from "../gates/linear_regex.ts";
import { LIMITS } from "../model/limits.ts";
import { verificationConfigSchema, verifyBlockSchema } from "./verify_block.ts";

/** A scalar or JSON value that a condition compares a context variable with. */
const jsonValue = z.unknown();

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

const comparison = z.strictObject({
  var: z.string().min(1).describe("Context variable name; `a.b` reads a nested field."),
  equals: jsonValue.optional(),
  not_equals: jsonValue.optional(),
  gt: z.number().optional(),
  gte: z.number().optional(),
  lt: z.number().optional(),
  lte: z.number().optional(),
  in: z.array(jsonValue).optional(),
  contains: jsonValue.optional(),
}).refine(
  (c) => OPERATORS.filter((op) => op in c).length === 1,
  {
    message:
      "a condition on a variable needs exactly one operator: equals, not_equals, gt, gte, lt, lte, in or contains",
  },
);

/** Schema of a condition (`runCondition`, loop conditions, fragments, confirmations). */
export const conditionSchema = z.union([
  comparison,
  z.strictObject({
    get and(): z.ZodArray<typeof conditionSchema> {
      return z.array(conditionSchema).min(1);
    },
  }),
  z.strictObject({
    get or(): z.ZodArray<typeof conditionSchema> {
      return z.array(conditionSchema).min(1);
    },
  }),
  z.strictObject({
    get not(): typeof conditionSchema {
      return conditionSchema;
    },
  }),
]).meta({ id: "condition" });

/** A condition over context (and loop) variables. */
export type Condition = z.infer<typeof conditionSchema>;

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

/** A context path: identifiers joined by dots (`ticket`, `repo.path`). */
export const CONTEXT_PATH = /^[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*$/;

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

const ruleCommon = {
  message: z.string().optional().describe("Shown when the rule fails."),
  condition: conditionSchema.optional().describe("Apply the rule only when this holds."),
};

function validRegex(rule: { pattern: string; flags?: string }, ctx: z.RefinementCtx): void {
  const compiled = linearPattern(rule.pattern, rule.flags);
  if (!compiled.ok) {
    ctx.addIssue({
      code: "custom",
      path: ["pattern"],
      message: `invalid regex: ${compiled.reason}`,
    });
  }
}

function checkableSchema(rule: { schema: Record<string, unknown> }, ctx: z.RefinementCtx): void {
  const reason = uncheckableSchema(rule.schema);
  if (reason !== null) ctx.addIssue({ code: "custom", path: ["schema"], message: reason });
}

/** One validation rule over a step's notes, by `type`. */
export const validationRuleSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("contains"), value: z.string(), ...ruleCommon }),
  z.strictObject({
    type: z.literal("regex"),
    pattern: z.string(),
    flags: z.string().optional(),
    ...ruleCommon,
  }).superRefine(validRegex),
  z.strictObject({
    type: z.literal("length"),
    min: z.number().optional(),
    max: z.number().optional(),
    ...ruleCommon,
  }).refine((r) => r.min !== undefined || r.max !== undefined, {
    message: "a `length` rule needs `min` and/or `max`",
  }),
  z.strictObject({
    type: z.literal("schema"),
    schema: z.record(z.string(), z.unknown()).describe("A JSON Schema the notes (as JSON) match."),
    ...ruleCommon,
  }).superRefine(checkableSchema),
]);

/** A rule, or an `and`/`or`/`not` composition of criteria. */
const validationCriterionSchema = z.union([
  validationRuleSchema,
  z.strictObject({
    get and(): z.ZodArray<typeof validationCriteriaSchema> {
      return z.array(validationCriteriaSchema).min(1);
    },
  }),
  z.strictObject({
    get or(): z.ZodArray<typeof validationCriteriaSchema> {
      return z.array(validationCriteriaSchema).min(1);
    },
  }),
  z.strictObject({
    get not(): typeof validationCriteriaSchema {
      return validationCriteriaSchema;
    },
  }),
]).meta({ id: "validationCriterion" });

/** Validation criteria: a criterion, or a list of them that must all hold. */
export const validationCriteriaSchema = z.union([
  validationCriterionSchema,
  z.array(validationCriterionSchema),
]).meta({ id: "validationCriteria" });

/** One validation rule. */
export type ValidationRule = z.infer<typeof validationRuleSchema>;
/** Validation criteria: rules, or `and`/`or`/`not` compositions of them. */
export type ValidationCriteria = z.infer<typeof validationCriteriaSchema>;

/** A user-only dependency: a context key only the user can supply before the step completes. */
export const userDependencySchema = z.object({
  contextKey: z.string().min(1).describe("The context key that must be set when acknowledging."),
  reason: z.enum(USER_DEPENDENCY_REASONS),
  message: z.string().min(1).max(512).describe("What the user must provide, and why."),
}).strict();

const loopVar = z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/).optional();
const loopCommon = {
  maxIterations: z.number().int().min(1).max(1000).describe(
    "Safety limit (required, at most 1000).",
  ),
  iterationVar: loopVar,
  itemVar: loopVar,
  indexVar: loopVar,
};

/** Loop settings, by `type`. */
export const loopConfigSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.enum(["while", "until"]),
    condition: conditionSchema.optional().describe("Read from context."),
    conditionSource: z.discriminatedUnion("kind", [
      z.strictObject({
        kind: z.literal("artifact_contract"),
        contractRef: z.string().min(1),
        loopId: z.string().min(1).optional(),
      }),
      z.strictObject({ kind: z.literal("context_variable"), condition: conditionSchema }),
    ]).optional().describe("Where the continue/stop decision comes from."),
    ...loopCommon,
  }).superRefine((c, ctx) => {
    if (c.condition === undefined && c.conditionSource === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `a \`${c.type}\` loop needs \`condition\` or \`conditionSource\``,
      });
    }
  }),
  z.strictObject({
    type: z.literal("for"),
    count: z.union([z.number().int().min(0).max(1000), z.string().min(1)])
      .describe("A number, or a context variable holding one."),
    ...loopCommon,
  }),
  z.strictObject({
    type: z.literal("forEach"),
    items: z.string().min(1).describe("The context variable holding an array."),
    ...loopCommon,
  }),
]);

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

/** One rated dimension of an assessment. */
export const assessmentDimensionSchema = z.strictObject({
  id: z.string().min(1).max(64),
  purpose: z.string().min(1).max(256),
  levels: z.array(z.string().min(1).max(64)).min(2).refine(
    (levels) => new Set(levels).size === levels.length,
    { message: "the levels of a dimension must be distinct" },
  ),
  required: z.boolean().optional().describe("Whether the dimension must be rated (default true)."),
});

/** An assessment a step can ask for (`assessmentRefs`): rated dimensions with declared levels. */
export const assessmentSchema = z.strictObject({
  id: z.string().min(1).max(64),
  purpose: z.string().min(1).max(256),
  dimensions: z.array(assessmentDimensionSchema).min(1),
});

/** What a step asks for when an assessment comes out at a given level. */
export const assessmentConsequenceSchema = z.strictObject({
  when: z.strictObject({
    anyEqualsLevel: z.string().min(1).max(64),
    forAssessment: z.string().min(1).max(128).optional(),
  }),
  effect: z.strictObject({
    kind: z.literal("require_followup"),
    guidance: z.string().min(1).max(512),
  }),
});

const metadata = z.unknown().optional();

/** The fields of a step as written, before the rules that tie them together. */
const stepFields = z.strictObject({
  id: z.string().regex(STEP_ID, "step ids use [a-z][a-z0-9_-]*"),
  title: z.string().min(1),
  type: z.enum(["loop", "parallel"]).optional().describe("Absent for a standard step."),
  prompt: z.string().min(1).optional(),
  promptBlocks: promptBlocksSchema.optional(),
  promptFragments: z.array(
    z.strictObject({
      id: z.string().regex(STEP_ID),
      when: conditionSchema.optional(),
      text: z.string().min(1),
    }),
  ).optional().describe("Text appended to the prompt when its `when` holds."),
  agentRole: z.string().min(1).optional().describe("Overrides the workflow's role."),
  guidance: z.array(z.string()).optional(),
  runCondition: conditionSchema.optional(),
  requireConfirmation: confirmationSchema.optional(),
  outputContract: outputContractSchema.optional(),
  output: outputContractSchema.optional().describe(
    "Same as `outputContract` (another spelling of it).",
  ),
  templateCall: z.strictObject({
    templateId: z.string().min(1).max(128),
    args: z.record(z.string(), z.unknown()).optional(),
  }).optional().describe("Expands a template (a routine) here at compile time."),
  validationCriteria: validationCriteriaSchema.optional(),
  userDependencies: z.array(userDependencySchema).max(10).optional(),
  loop: loopConfigSchema.optional(),
  get body(): z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodArray<typeof stepSchema>]>> {
    return z.union([z.string().regex(STEP_ID), z.array(stepSchema).min(1)]).optional()
      .describe("Loop body: inline steps, or the id of a top-level step.");
  },
  parallelDelegations: z.array(parallelDelegationSchema).min(1).max(LIMITS.delegations).optional(),
  synthesis: z.strictObject({
    prompt: z.string().min(1).max(4096).optional(),
    outputContract: outputContractSchema.optional(),
  }).optional().describe(
    "The step injected after a parallel step's child runs: what to ask, and the artifact it must bring.",
  ),
  functionReferences: z.array(z.string()).optional(),
  notesOptional: z.boolean().optional().describe(
    "When true, output.notesMarkdown may be left out; otherwise an acknowledgement without notes is blocked (MISSING_REQUIRED_NOTES). Steps with an output contract never require notes.",
  ),
  assessmentRefs: z.array(z.string().min(1).max(64)).min(1).optional().describe(
    "Assessments (ids in the workflow's `assessments`) the acknowledgement must carry as `wr.assessment` artifacts.",
  ),
  assessmentConsequences: z.array(assessmentConsequenceSchema).min(1).max(10).optional()
    .describe(
      "Follow-ups required when a submitted level matches (ASSESSMENT_FOLLOWUP_REQUIRED); each fires independently.",
    ),
  requiredContext: z.array(z.string().regex(CONTEXT_PATH).max(128)).min(1).max(20).optional()
    .describe(
      "Context keys (`a.b` for a nested one) read by this workflow's placeholders or conditions that must be set when this step is acknowledged (MISSING_CONTEXT_KEY).",
    ),
  functionDefinitions: metadata,
  functionCalls: metadata,
  askForFiles: metadata,
  hasValidation: metadata,
  modelTier: metadata,
  audit: metadata,
  verification: verificationConfigSchema.optional().describe(
    "WorkRail's verification command (`verificationConfig`); same as `verify` with a command line.",
  ),
  verify: verifyBlockSchema.optional(),
  expectedOutput: metadata,
});

/** Fields a loop step cannot have: they belong to the steps of its body. */
const NOT_ON_LOOPS = [
  "prompt",
  "promptBlocks",
  "templateCall",
  "assessmentRefs",
  "assessmentConsequences",
  "requiredContext",
  "verify",
  "verification",
] as const;

function stepRules(s: z.infer<typeof stepFields>, ctx: z.RefinementCtx): void {
  const has = (k: keyof typeof s) => s[k] !== undefined;
  const issue = (message: string) => ctx.addIssue({ code: "custom", message });
  if (s.type === "loop") {
    if (!has("loop") || !has("body")) issue("a loop step needs `loop` and `body`");
    for (const k of NOT_ON_LOOPS) {
      if (has(k)) issue(`a loop step has no \`${k}\``);
    }
    return;
  }
  if (has("assessmentConsequences") && !has("assessmentRefs")) {
    issue("`assessmentConsequences` needs `assessmentRefs` naming the assessments they read");
  }
  if (has("loop") || has("body")) {
    issue('`loop` and `body` belong to a loop step: add `"type": "loop"`');
  }
  if (s.type === "parallel") {
    if (!has("parallelDelegations")) issue("a parallel step needs `parallelDelegations`");
    if (has("verify") || has("verification")) {
      issue("a parallel step has no verification command: put it on the step that follows");
    }
    return;
  }
  const sources = (["prompt", "promptBlocks", "templateCall"] as const).filter(has);
  if (sources.length !== 1) {
    issue("a step needs exactly one of `prompt`, `promptBlocks` or `templateCall`");
  }
}

/** One step of a workflow: standard, loop or parallel. */
export const stepSchema: typeof stepFields = stepFields.superRefine(stepRules).meta({
  id: "step",
});

/** A step as written in a file (standard, loop or parallel). */
export type WorkflowStep = z.infer<typeof stepSchema>;

/** The preference values a workflow may recommend as its maximum automation. */
export const recommendedPreferencesSchema = z.object({
  autonomy: autonomySchema.optional(),
  riskPolicy: riskPolicySchema.optional(),
  recommendedAutonomy: autonomySchema.optional().describe("WorkRail spelling of `autonomy`."),
  recommendedRiskPolicy: riskPolicySchema.optional().describe(
    "WorkRail spelling of `riskPolicy`.",
  ),
}).strict();

const capabilityNeed = z.enum(CAPABILITY_NEEDS).optional();
/** How much a workflow needs each optional capability. */
const capabilityNeedsSchema = z.strictObject(
  Object.fromEntries(CAPABILITIES.map((c) => [c, capabilityNeed])) as Record<
    Capability,
    typeof capabilityNeed
  >,
);

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
  tokenBudget: z.number().int().positive().optional().describe(
    "Tokens a run may use before every answer warns (TOKEN_BUDGET_EXCEEDED); the user's config may set a smaller one.",
  ),
  capabilities: capabilityNeedsSchema.optional().describe(
    "Optional agent capabilities: required or preferred.",
  ),
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
  assessments: z.array(assessmentSchema).optional(),
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
/** A WorkRail self-assessment as written. */
export type Assessment = z.infer<typeof assessmentSchema>;
/** A step's assessment consequence as written. */
export type AssessmentConsequence = z.infer<typeof assessmentConsequenceSchema>;
/** A user-only dependency as written. */
export type UserDependency = z.infer<typeof userDependencySchema>;
