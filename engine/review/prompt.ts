/**
 * The review pipeline's second half: the prompt of each planned review, for a sub-agent to run
 * on its own. The rule's instructions, the files under review, what else the rule asked for
 * (every changed file, unchanged matching files), a named schema's check, the reference files
 * inlined within a cap (at most {@linkcode LIMITS.referenceFiles} files and
 * {@linkcode LIMITS.referenceBytes} bytes per task: past it files are named as left out, the one
 * that reaches it is cut with a marker, a missing one gets a marker), and an "after review" part
 * naming the review id.
 * @module
 */
import type { YamlParse } from "../deepwork/yaml.ts";
import { jsonSchemaProblems } from "../gates/json_schema_check.ts";
import { LIMITS, utf8Bytes } from "../model/limits.ts";
import type { PlannedReview } from "./plan.ts";
import type { ReviewWorkspace } from "./ports.ts";
import type { ReferenceFile } from "./rule.ts";

/** One task, as a host's sub-agent tool takes it. */
export interface ReviewTask {
  /** The id to pass to `mark_review_as_passed` once the review finds nothing left to fix. */
  review_id: string;
  /** The rule. */
  rule_name: string;
  /** A short label for the sub-agent. */
  description: string;
  /** The sub-agent type (the rule's `agent.claude`, else `general-purpose`). */
  subagent_type: string;
  /** Everything the reviewer needs. */
  prompt: string;
  /** The files under review. */
  files: string[];
  /** Where the rule is stated, `path:line`. */
  defining_file: string;
}

/** The sub-agent type when a rule names none for the host. */
export const DEFAULT_SUBAGENT = "general-purpose";

/** `text` fenced with more backticks than any run of them inside it. */
export function fenced(text: string, info = ""): string[] {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return [`${fence}${info}`, text, fence];
}

/** The first `maxBytes` bytes of `text`, never splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** The reference files' section: inlined within the cap, cut, missing and left-out ones marked. */
export async function referenceLines(
  ws: Pick<ReviewWorkspace, "read">,
  refs: readonly ReferenceFile[],
): Promise<string[]> {
  if (refs.length === 0) return [];
  const lines = ["", "## Reference files", ""];
  let budget = LIMITS.referenceBytes;
  const leftOut: string[] = [];
  for (const [i, ref] of refs.entries()) {
    if (i >= LIMITS.referenceFiles || budget <= 0) {
      leftOut.push(ref.path);
      continue;
    }
    const head = `### \`${ref.path}\`${ref.description ? `: ${ref.description}` : ""}`;
    const read = ref.text !== undefined
      ? { text: cutUtf8(ref.text, budget), size: utf8Bytes(ref.text) }
      : await ws.read(ref.path, budget);
    if (read === null) {
      lines.push(head, "", `[missing: \`${ref.path}\` could not be read; review without it]`, "");
      continue;
    }
    const shown = utf8Bytes(read.text);
    budget -= shown;
    lines.push(head, "", ...fenced(read.text));
    if (read.size > shown) {
      lines.push(
        `[cut: ${shown} of ${read.size} bytes shown; reference files share ${LIMITS.referenceBytes} bytes per review]`,
      );
    }
    lines.push("");
  }
  if (leftOut.length > 0) {
    lines.push(
      `Left out (past ${LIMITS.referenceFiles} files or ${LIMITS.referenceBytes} bytes per review; read them yourself if needed): ${
        leftOut.map((p) => `\`${p}\``).join(", ")
      }`,
      "",
    );
  }
  return lines;
}

/** What a named schema's JSON Schema says of each file under review. */
async function schemaLines(
  ws: Pick<ReviewWorkspace, "read">,
  at: { review: PlannedReview; parse: YamlParse },
): Promise<string[]> {
  const schema = at.review.rule.jsonSchema;
  if (!schema) return [];
  const lines = ["", "## JSON Schema check", ""];
  for (const f of at.review.files) {
    const read = await ws.read(f.path, LIMITS.schemaCheckBytes);
    let verdict: string;
    if (read === null) verdict = "could not be read";
    else if (read.size > LIMITS.schemaCheckBytes) verdict = "too large to check here";
    else {
      try {
        const problems = jsonSchemaProblems(schema, at.parse(read.text), { limit: 10 });
        verdict = problems.length === 0 ? "matches the schema" : problems.join("; ");
      } catch (error) {
        verdict = `is not valid YAML or JSON: ${(error as Error).message.split("\n")[0]}`;
      }
    }
    lines.push(`- \`${f.path}\`: ${verdict}`);
  }
  lines.push("", "The schema:", "", ...fenced(JSON.stringify(schema, null, 2), "json"));
  return lines;
}

/** The task for one planned review. */
export async function reviewTask(
  ws: Pick<ReviewWorkspace, "read">,
  at: { review: PlannedReview; changed: readonly string[]; parse: YamlParse },
): Promise<ReviewTask> {
  const { review } = at;
  const { rule } = review;
  const lines = [
    `# Review: ${rule.name}`,
    "",
    rule.description,
    "",
    "## Instructions",
    "",
    rule.instructions.trim(),
    "",
    "## Files to review",
    "",
    ...review.files.map((f) => `- \`${f.path}\``),
  ];
  if (rule.allChangedFilenames) {
    lines.push("", "## Every changed file", "", ...at.changed.map((p) => `- \`${p}\``));
  }
  if (review.unchanged.length > 0) {
    lines.push(
      "",
      "## Matching files that did not change (for context)",
      "",
      ...review.unchanged.map((p) => `- \`${p}\``),
    );
  }
  lines.push(...await schemaLines(ws, at));
  lines.push(...await referenceLines(ws, rule.referenceFiles));
  lines.push(
    "",
    "## After review",
    "",
    `Report each finding with its file and line. When nothing is left to fix (fix what you find, then review again), call the \`mark_review_as_passed\` tool with review_id \`${review.reviewId}\`: this review is then not handed out again until one of its files changes.`,
  );
  const first = review.files[0]!.path;
  return {
    review_id: review.reviewId,
    rule_name: rule.name,
    description: review.files.length === 1
      ? `Review ${first} (${rule.name})`
      : `Review ${review.files.length} files (${rule.name})`,
    subagent_type: rule.agent.claude ?? DEFAULT_SUBAGENT,
    prompt: lines.join("\n"),
    files: review.files.map((f) => f.path),
    defining_file: rule.definedAt,
  };
}
