/**
 * Checks a value against a JSON Schema (draft 2020-12) that a workflow author wrote, such as a
 * validation rule's `schema`. The validator interprets the schema (no generated code, no `eval`),
 * so it runs under a strict CSP, in compiled binaries, on Deno and on Node.
 * @module
 */
import { type Schema, Validator } from "npm:@cfworker/json-schema@4.1.6";

// Wrapper keywords repeat what their nested errors say more precisely.
const WRAPPERS = new Set(["properties", "items", "prefixItems", "allOf", "$ref", "false"]);

function where(instanceLocation: string): string {
  const parts = instanceLocation.replace(/^#\/?/, "").split("/").filter(Boolean)
    .map((p) => decodeURIComponent(p).replace(/~1/g, "/").replace(/~0/g, "~"));
  return parts.length === 0 ? "the value" : `\`${parts.join(".")}\``;
}

/**
 * What is wrong with `value` under `schema`, one line per problem naming where it is (at most
 * `limit` lines); an empty list when it matches.
 */
export function jsonSchemaProblems(
  schema: Record<string, unknown>,
  value: unknown,
  options: { limit?: number } = {},
): string[] {
  const result = new Validator(schema as Schema, "2020-12", false).validate(value);
  if (result.valid) return [];
  const leaves = result.errors.filter((e) => !WRAPPERS.has(e.keyword));
  const shown = leaves.length > 0 ? leaves : result.errors;
  const lines = shown.map((e) =>
    `${where(e.instanceLocation)}: ${e.error.replace(/^Instance /, "value ").replace(/\.$/, "")}`
  );
  return [...new Set(lines)].slice(0, options.limit ?? 3);
}
