/**
 * Checks a value against a JSON Schema (draft 2020-12) that a workflow author wrote, such as a
 * validation rule's `schema`. The validator interprets the schema (no generated code, no `eval`),
 * so it runs under a strict CSP, in compiled binaries, on Deno and on Node.
 *
 * Its `pattern` keyword would run on JavaScript's backtracking `RegExp`, where `^(a+)+$` takes
 * exponential time on a near-miss; so before a schema reaches the validator each `pattern` is
 * rewritten to a format checked in linear time (`linear_regex.ts`). `patternProperties` has no
 * such rewrite (its patterns pick which keys a subschema applies to) and is refused, as is a
 * pattern the linear engine cannot run; both with the reason.
 * @module
 */
import { format, type Schema, Validator } from "npm:@cfworker/json-schema@4.1.6";
import { linearPattern } from "./linear_regex.ts";

// Wrapper keywords repeat what their nested errors say more precisely.
const WRAPPERS = new Set(["properties", "items", "prefixItems", "allOf", "$ref", "false"]);

function where(instanceLocation: string): string {
  const parts = instanceLocation.replace(/^#\/?/, "").split("/").filter(Boolean)
    .map((p) => decodeURIComponent(p).replace(/~1/g, "/").replace(/~0/g, "~"));
  return parts.length === 0 ? "the value" : `\`${parts.join(".")}\``;
}

/** The format a rewritten `pattern` becomes: this prefix, then the pattern. */
const PATTERN_FORMAT = "waymark-linear-pattern:";

/** Keywords whose value is one subschema. */
const ONE = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
];
/** Keywords whose value is a list of subschemas. */
const LIST = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/** Keywords whose value maps names to subschemas. */
const MAP = ["properties", "$defs", "definitions", "dependentSchemas"];

/** Thrown inside the rewrite: the schema cannot be checked in linear time, and why. */
class Unsafe extends Error {}

/** The format checking `pattern` in linear time, registered once per pattern. */
function patternFormat(pattern: string): string {
  const name = PATTERN_FORMAT + pattern;
  if (format[name]) return name;
  const compiled = linearPattern(pattern, "u");
  if (!compiled.ok) throw new Unsafe(`its pattern /${pattern}/ ${compiled.reason}`);
  format[name] = (text: string) => compiled.test(text);
  return name;
}

/** `node` with every `pattern` of it and its subschemas turned into a linear-time format. */
function rewrite(node: unknown): unknown {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return node;
  const out: Record<string, unknown> = { ...node };
  if ("patternProperties" in out) {
    throw new Unsafe("`patternProperties` is not supported (use `propertyNames` with a `pattern`)");
  }
  if (typeof out.pattern === "string") {
    const named = { format: patternFormat(out.pattern) };
    delete out.pattern;
    if (out.format === undefined) Object.assign(out, named);
    else out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), named];
  }
  for (const key of ONE) if (key in out && !Array.isArray(out[key])) out[key] = rewrite(out[key]);
  for (const key of LIST) if (Array.isArray(out[key])) out[key] = out[key].map(rewrite);
  for (const key of MAP) {
    const map = out[key];
    if (typeof map !== "object" || map === null) continue;
    out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, rewrite(v)]));
  }
  return out;
}

/** Rewritten schemas by the author's schema object (compiled workflows keep theirs). */
const rewritten = new WeakMap<object, Schema | string>();

/** The schema the validator gets, or why this one cannot be checked. */
function linearSchema(schema: Record<string, unknown>): Schema | string {
  let done = rewritten.get(schema);
  if (done === undefined) {
    try {
      done = rewrite(schema) as Schema;
    } catch (error) {
      if (!(error instanceof Unsafe)) throw error;
      done = error.message;
    }
    rewritten.set(schema, done);
  }
  return done;
}

/** Every `pattern` in `schema` and its subschemas, in document order. */
export function schemaPatterns(schema: unknown, out: string[] = []): string[] {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return out;
  const node = schema as Record<string, unknown>;
  if (typeof node.pattern === "string") out.push(node.pattern);
  for (const key of ONE) if (!Array.isArray(node[key])) schemaPatterns(node[key], out);
  for (const key of LIST) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((s) => schemaPatterns(s, out));
  }
  for (const key of MAP) {
    const map = node[key];
    if (typeof map === "object" && map !== null) {
      Object.values(map).forEach((s) => schemaPatterns(s, out));
    }
  }
  return out;
}

/**
 * Why `schema` cannot be checked (a `pattern` the linear engine cannot run, `patternProperties`),
 * or `null`: for loaders, which refuse such a schema before any value meets it.
 */
export function uncheckableSchema(schema: Record<string, unknown>): string | null {
  const done = linearSchema(schema);
  return typeof done === "string" ? done : null;
}

function message(error: string): string {
  const text = error.replace(/^Instance /, "value ").replace(/\.$/, "");
  const named = text.indexOf(`format "${PATTERN_FORMAT}`);
  if (named < 0) return text;
  const pattern = text.slice(named + `format "${PATTERN_FORMAT}`.length, -1);
  return `${text.slice(0, named)}pattern /${pattern}/`;
}

/**
 * What is wrong with `value` under `schema`, one line per problem naming where it is (at most
 * `limit` lines); an empty list when it matches. A schema that cannot be checked in linear time
 * gives one line saying so.
 */
export function jsonSchemaProblems(
  schema: Record<string, unknown>,
  value: unknown,
  options: { limit?: number } = {},
): string[] {
  const checked = linearSchema(schema);
  if (typeof checked === "string") {
    return [`the schema cannot be evaluated: ${checked}; the workflow must be fixed`];
  }
  const result = new Validator(checked, "2020-12", false).validate(value);
  if (result.valid) return [];
  const leaves = result.errors.filter((e) => !WRAPPERS.has(e.keyword));
  const shown = leaves.length > 0 ? leaves : result.errors;
  const lines = shown.map((e) => `${where(e.instanceLocation)}: ${message(e.error)}`);
  return [...new Set(lines)].slice(0, options.limit ?? 3);
}
