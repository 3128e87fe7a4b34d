/**
 * Evaluation of run conditions over context. Pure and total: a missing variable is
 * `undefined`, and comparisons of the wrong types are simply false.
 * @module
 */
import { canonicalJson } from "../common/hash.ts";
import type { Condition } from "./schema.ts";

/** Reads `a.b.c` from a JSON object (`x.length` of an array or string is its length); `undefined` when any part is missing. */
export function readVar(context: Record<string, unknown>, path: string): unknown {
  let value: unknown = context;
  for (const part of path.split(".")) {
    if (part === "length" && (Array.isArray(value) || typeof value === "string")) {
      value = (value as unknown[] | string).length;
      continue;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Equality of JSON values; objects compare by canonical JSON, so key order does not matter. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false; // no JSON form (e.g. a cycle): only identical values are equal
  }
}

/** Whether a condition holds for a context. */
export function evaluateCondition(condition: Condition, context: Record<string, unknown>): boolean {
  if ("and" in condition) return condition.and.every((c) => evaluateCondition(c, context));
  if ("or" in condition) return condition.or.some((c) => evaluateCondition(c, context));
  if ("not" in condition) return !evaluateCondition(condition.not, context);
  const value = readVar(context, condition.var);
  if ("equals" in condition) return sameValue(value, condition.equals);
  if ("not_equals" in condition) return !sameValue(value, condition.not_equals);
  if ("in" in condition) return (condition.in ?? []).some((v) => sameValue(v, value));
  if ("contains" in condition) {
    if (typeof value === "string") {
      return typeof condition.contains === "string" && value.includes(condition.contains);
    }
    return Array.isArray(value) && value.some((v) => sameValue(v, condition.contains));
  }
  if (typeof value !== "number") return false;
  if (condition.gt !== undefined) return value > condition.gt;
  if (condition.gte !== undefined) return value >= condition.gte;
  if (condition.lt !== undefined) return value < condition.lt;
  if (condition.lte !== undefined) return value <= condition.lte;
  return false;
}

/** Every variable a condition reads, in order, repeats included. */
export function conditionVars(condition: Condition): string[] {
  if ("and" in condition) return condition.and.flatMap(conditionVars);
  if ("or" in condition) return condition.or.flatMap(conditionVars);
  if ("not" in condition) return conditionVars(condition.not);
  return [condition.var];
}
