/**
 * What the review tools answer, as zod schemas (snake_case, as DeepWork's agents read them);
 * published as the tools' output schemas, types inferred from them.
 * @module
 */
import { z } from "npm:zod@4.6.7";

/** A problem in a rule file or named schema, `file:line`. */
export const ruleProblemSchema = z.object({
  file: z.string(),
  line: z.number().int().nullable(),
  message: z.string(),
});

/** One review task for a host's sub-agent tool. */
export const reviewTaskSchema = z.object({
  review_id: z.string().describe("Pass it to mark_review_as_passed once nothing is left to fix."),
  rule_name: z.string(),
  description: z.string().describe("A short label for the sub-agent."),
  subagent_type: z.string(),
  prompt: z.string().describe("Everything the reviewer needs, ending with an after-review part."),
  files: z.array(z.string()),
  defining_file: z.string().describe("Where the rule is stated, `path:line`."),
});

/** `get_review_instructions`. */
export const reviewInstructionsSchema = z.object({
  tasks: z.array(reviewTaskSchema).describe("Run them in parallel, one sub-agent each."),
  message: z.string().describe("One line: what there is to review, or why nothing."),
  changed_files: z.array(z.string()),
  base: z.string().nullable().describe("What committed changes were taken since, if any."),
  already_passed: z.array(z.string()).describe("Review ids passed before, for the same content."),
  errors: z.array(ruleProblemSchema).describe("Rule files or named schemas that are broken."),
});

/** `get_configured_reviews`. */
export const configuredReviewsSchema = z.object({
  reviews: z.array(z.object({
    name: z.string(),
    description: z.string(),
    defining_file: z.string().describe("`path:line` of the rule."),
  })),
  errors: z.array(ruleProblemSchema),
});

/** `mark_review_as_passed`. */
export const reviewPassedSchema = z.object({
  status: z.enum(["passed", "already_passed"]),
  review_id: z.string(),
  rule_name: z.string(),
  files: z.array(z.string()),
  message: z.string(),
});

/** `get_named_schemas`. */
export const namedSchemasSchema = z.object({
  schemas: z.array(z.object({
    name: z.string(),
    summary: z.string(),
    matchers: z.array(z.string()),
    source: z.string().describe("bundled, project or extra (a configured folder)."),
    file: z.string(),
    has_json_schema: z.boolean(),
  })),
  errors: z.array(ruleProblemSchema),
});

/** `get_review_instructions`' answer. */
export type ReviewInstructions = z.infer<typeof reviewInstructionsSchema>;
/** `get_configured_reviews`' answer. */
export type ConfiguredReviews = z.infer<typeof configuredReviewsSchema>;
/** `mark_review_as_passed`'s answer. */
export type ReviewPassed = z.infer<typeof reviewPassedSchema>;
/** `get_named_schemas`' answer. */
export type NamedSchemas = z.infer<typeof namedSchemasSchema>;
