/**
 * A step's validation criteria as an agent reads them: what its notes must contain, one entry
 * per rule that applies, in the rule's own words (or the words a failure would use), with the
 * line label a `^Label: ` pattern asks for and the text a `contains` rule wants. The same
 * message a blocker gives, so what `pending` announces is what a failure says.
 * @module
 */
import { evaluateCondition } from "./conditions.ts";
import type { ValidationCriteria, ValidationRule } from "./schema.ts";

/** What the notes must contain, for one rule (or one `or`/`not` of rules). */
export interface NotesRule {
  /** What the rule asks, as a failure would say it. */
  message: string;
  /** A line the notes must have, starting with this label (a `^Label: …` pattern). */
  label?: string;
  /** Text the notes must mention (case-insensitive). */
  contains?: string;
}

/** The message a rule fails with: its own, else what it checks. */
export function ruleMessage(rule: ValidationRule): string {
  if (rule.message !== undefined) return rule.message;
  switch (rule.type) {
    case "contains":
      return `the notes must mention \`${rule.value}\``;
    case "regex":
      return `the notes must match /${rule.pattern}/${rule.flags ?? ""}`;
    case "length":
      return `the notes must be ${rule.min ?? 0}..${rule.max ?? "∞"} characters long`;
    case "schema":
      return "the notes must be JSON matching the step's schema";
  }
}

/** The label of a `^Label: …` line pattern (`Checks:`), or `undefined`. */
export function lineLabel(pattern: string): string | undefined {
  return /^\^([A-Za-z][A-Za-z0-9 _-]{0,40}:)(?: |\\s|$)/.exec(pattern)?.[1];
}

function ruleEntry(rule: ValidationRule): NotesRule {
  const entry: NotesRule = { message: ruleMessage(rule) };
  if (rule.type === "regex") {
    const label = lineLabel(rule.pattern);
    if (label !== undefined) entry.label = label;
  }
  if (rule.type === "contains") entry.contains = rule.value;
  return entry;
}

/**
 * The rules of `criteria` that apply in `context` (a rule whose condition does not hold is
 * left out), flattened through lists and `and`; an `or` or a `not` is one entry saying so.
 */
export function notesRules(
  criteria: ValidationCriteria,
  context: Record<string, unknown>,
): NotesRule[] {
  if (Array.isArray(criteria)) return criteria.flatMap((c) => notesRules(c, context));
  if ("and" in criteria) return criteria.and.flatMap((c) => notesRules(c, context));
  if ("or" in criteria) {
    const options = criteria.or.map((c) => notesRules(c, context));
    if (options.some((o) => o.length === 0)) return [];
    return [{
      message: `one of: ${options.map((o) => o.map((r) => r.message).join(" and ")).join(" | ")}`,
    }];
  }
  if ("not" in criteria) {
    const inner = notesRules(criteria.not, context);
    return inner.length === 0
      ? []
      : [{ message: `the notes must not meet: ${inner.map((r) => r.message).join(" and ")}` }];
  }
  if (criteria.condition && !evaluateCondition(criteria.condition, context)) return [];
  return [ruleEntry(criteria)];
}
