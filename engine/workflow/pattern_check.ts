/**
 * Which patterns of a workflow's validation rules (a `regex` rule's, a `schema` rule's `pattern`
 * keywords) a backtracking engine would take exponential time on (a repeated group that itself
 * repeats, such as `^(a+)+$`), for `workflows validate`.
 * waymark matches in linear time (see `linear_regex.ts`), so these cannot freeze it; the warning
 * is for the author, whose file other tools may run.
 * @module
 */
import { schemaPatterns } from "../gates/json_schema_check.ts";
import { nestedRepetition } from "../gates/linear_regex.ts";
import type { Warning } from "./catalog.ts";
import type { CompiledNode, CompiledWorkflow } from "./compiled.ts";
import type { ValidationCriteria } from "./schema.ts";

function patterns(criteria: ValidationCriteria | undefined, out: string[]): string[] {
  if (criteria === undefined) return out;
  if (Array.isArray(criteria)) criteria.forEach((c) => patterns(c, out));
  else if ("and" in criteria) criteria.and.forEach((c) => patterns(c, out));
  else if ("or" in criteria) criteria.or.forEach((c) => patterns(c, out));
  else if ("not" in criteria) patterns(criteria.not, out);
  else if (criteria.type === "regex") out.push(criteria.pattern);
  else if (criteria.type === "schema") schemaPatterns(criteria.schema, out);
  return out;
}

/** One warning per step and pattern that nests unbounded repetition. */
export function backtrackingPatterns(compiled: CompiledWorkflow): Warning[] {
  const warnings: Warning[] = [];
  const walk = (nodes: readonly CompiledNode[]) => {
    for (const node of nodes) {
      if (node.kind === "loop") {
        walk(node.body);
        continue;
      }
      for (const pattern of patterns(node.validation, [])) {
        const nested = nestedRepetition(pattern);
        if (nested === null) continue;
        warnings.push({
          code: "BACKTRACKING_PATTERN",
          message:
            `step \`${node.id}\`: the regex /${pattern}/ repeats \`${nested}\`, a group that itself repeats without bound; a backtracking engine (JavaScript's RegExp, PCRE) may take exponential time on a near-miss. waymark matches in linear time, but write it without the nesting (for example \`(a+)+\` as \`a+\`) so other tools can run this file safely`,
        });
      }
    }
  };
  walk(compiled.steps);
  return warnings;
}
