/**
 * Rules every tool's arguments obey before their schema is even tried, checked without
 * recursion so a hostile value cannot overflow the stack:
 * - no string or key contains U+0000 (SQLite text and C strings end there, so a NUL would come
 *   back cut short; waymark refuses it instead, in every field);
 * - no `__proto__` key outside the free-form JSON fields (`context`, artifacts), where it is
 *   kept as an ordinary key; elsewhere it is refused like any other unknown key;
 * - nothing is nested deeper than `LIMITS.depth` (for `context`, that is its budget).
 * After validation, {@linkcode keepFreeForm} puts the free-form values back exactly as sent,
 * since a schema's copy would drop a `__proto__` key.
 * @module
 */
import { LIMITS } from "../../engine/model/limits.ts";
import type { WaymarkError } from "../../engine/model/result.ts";

/** Paths whose values are free-form JSON: any key is data there. */
const FREE_FORM: readonly (readonly string[])[] = [["context"], ["output", "artifacts"]];

function isFreeForm(path: readonly string[]): boolean {
  return FREE_FORM.some((prefix) => prefix.every((part, i) => path[i] === part));
}

function invalid(tool: string, path: string[], message: string, reason: string): WaymarkError {
  return {
    code: "INVALID_ARGUMENTS",
    message: `Invalid arguments for ${tool}: ${message} (at \`${path.join(".") || "(root)"}\`).`,
    retry: { kind: "not_retryable" },
    details: { tool, reason, path },
  };
}

/** The first rule `args` breaks, as a structured error, or `null` when it breaks none. */
export function screenArguments(tool: string, args: unknown): WaymarkError | null {
  const stack: [unknown, string[]][] = [[args, []]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === "string") {
      if (value.includes("\u0000")) {
        return invalid(
          tool,
          path,
          "text may not contain the NUL character U+0000",
          "nul_character",
        );
      }
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (path.length >= LIMITS.depth) {
      const reason = path[0] === "context" ? "context_budget_exceeded" : "too_deep";
      const error = invalid(
        tool,
        path.slice(0, 3),
        `nested more than ${LIMITS.depth} levels deep`,
        reason,
      );
      return { ...error, details: { ...error.details, maxDepth: LIMITS.depth } };
    }
    for (const key of Object.keys(value)) {
      const at = [...path, key];
      if (key.includes("\u0000")) {
        return invalid(tool, at, "keys may not contain the NUL character U+0000", "nul_character");
      }
      if (key === "__proto__" && !isFreeForm(path)) {
        return invalid(tool, at, "unrecognized key `__proto__`", "unknown_key");
      }
      stack.push([(value as Record<string, unknown>)[key], at]);
    }
  }
  return null;
}

/**
 * Puts the free-form JSON values of `raw` (the arguments as sent) back into `parsed` (their
 * validated copy) unchanged, so keys such as `__proto__` survive validation.
 */
export function keepFreeForm(parsed: unknown, raw: unknown): void {
  const from = raw as Record<string, unknown> | null;
  const into = parsed as Record<string, unknown> | null;
  if (!isObject(from) || !isObject(into)) return;
  if (isObject(from.context) && "context" in into) into.context = from.context;
  const rawOutput = from.output as Record<string, unknown> | undefined;
  const output = into.output as Record<string, unknown> | undefined;
  if (isObject(rawOutput) && isObject(output) && Array.isArray(rawOutput.artifacts)) {
    output.artifacts = rawOutput.artifacts;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
