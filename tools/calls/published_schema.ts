/**
 * A tool's JSON Schemas as `tools/list` publishes them. The input schema is what the model reads
 * (hosts send it with each request): zod's conversion with its descriptions, without what only
 * the server's own check needs (string lengths, `additionalProperties`, the keywords that admit
 * nothing more or less; the server refuses a bad argument with a clear error either way). The
 * output schema (a success or the error envelope) is what a
 * client compiles and validates every result against (the v1 TypeScript SDK client compiles all
 * of them when it lists tools), so it says the shape and nothing else: every field, its type,
 * which are always present and each closed set, with no prose (the field meanings live in the
 * zod schemas and the tool descriptions) and no keyword that changes nothing; a subschema it
 * repeats is written once under `$defs`. Each schema stands alone: a `$ref` never leaves it,
 * since a client validates each tool's schema by itself.
 * @module
 */
import { z } from "npm:zod@4.6.7";

/** A JSON Schema. */
export type JsonSchema = Record<string, unknown>;
/** A JSON Schema of an object, as MCP requires of input and output schemas. */
export type ObjectSchema = { type: "object"; [key: string]: unknown };

/** zod's conversion, without `$schema` (the MCP default dialect is the same 2020-12). */
function converted(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** A tool's input schema, as the model reads it. */
export function inputJsonSchema(input: z.ZodType): ObjectSchema {
  return { type: "object", ...(forModel(converted(input, "input")) as JsonSchema) };
}

/** Keywords a model does not need to fill an argument in: the server checks them. */
const SERVER_ONLY = ["minLength", "maxLength", "additionalProperties", "propertyNames"];

/** {@linkcode shape}'s cuts but the descriptions, and the keywords only the server checks. */
function forModel(schema: unknown): unknown {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const s = cutNode(mapSubschemas(schema as JsonSchema, forModel));
  for (const key of SERVER_ONLY) delete s[key];
  return s;
}

/** A tool's output schema: a success of `output`, or the error envelope. */
export function outputJsonSchema(output: z.ZodType, error: z.ZodType): ObjectSchema {
  const compact = [converted(output, "output"), converted(error, "output")].map(shape);
  return { type: "object", ...shared({ anyOf: compact }) };
}

const SAFE = Number.MAX_SAFE_INTEGER;
const jsonType = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v;

/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas. */
const ONE = new Set(["items", "additionalProperties", "not", "propertyNames", "contains"]);
const MANY = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
const NAMED = new Set(["properties", "$defs", "patternProperties"]);

/** Applies `f` to each subschema of `schema` (one level down), keeping everything else. */
function mapSubschemas(schema: JsonSchema, f: (s: unknown, name?: string) => unknown): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ONE.has(key) && value !== null && typeof value === "object") out[key] = f(value);
    else if (MANY.has(key) && Array.isArray(value)) out[key] = value.map((s) => f(s));
    else if (NAMED.has(key) && value !== null && typeof value === "object") {
      out[key] = Object.fromEntries(Object.entries(value).map(([n, s]) => [n, f(s, n)]));
    } else out[key] = value;
  }
  return out;
}

/**
 * The shape alone: no `description`, and none of what admits nothing more or less: `type` beside
 * an `enum` or `const` of that type, `additionalProperties` `{}`, `propertyNames` of strings, and
 * the integer bounds zod adds; `additionalProperties: false` too (a client ignores fields it does
 * not know, and every field the server sends is listed).
 */
function shape(schema: unknown): unknown {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const s = cutNode(mapSubschemas(schema as JsonSchema, shape));
  delete s.description;
  return s;
}

/** The cuts of one schema node (its subschemas as they are). */
function cutNode(s: JsonSchema): JsonSchema {
  if (s.additionalProperties === false) delete s.additionalProperties;
  const empty = (v: unknown) =>
    v !== null && typeof v === "object" && Object.keys(v as object).length === 0;
  if (empty(s.additionalProperties)) delete s.additionalProperties;
  if (JSON.stringify(s.propertyNames) === '{"type":"string"}') delete s.propertyNames;
  if (s.minimum === -SAFE) delete s.minimum;
  if (s.maximum === SAFE) delete s.maximum;
  const values = "const" in s ? [s.const] : Array.isArray(s.enum) ? s.enum : null;
  if (typeof s.type === "string" && values?.every((v) => jsonType(v) === s.type)) delete s.type;
  return s;
}

/** Every subschema below the root by its text: how often it appears, and where first. */
function subschemas(root: JsonSchema): Map<string, { count: number; name: string }> {
  const seen = new Map<string, { count: number; name: string }>();
  const visit = (s: unknown, name = "s"): unknown => {
    if (s === null || typeof s !== "object" || Array.isArray(s)) return s;
    const text = JSON.stringify(s);
    const known = seen.get(text);
    if (known) known.count++;
    else seen.set(text, { count: 1, name });
    return mapSubschemas(s as JsonSchema, visit);
  };
  mapSubschemas(root, visit);
  return seen;
}

/**
 * Writes each subschema that appears more than once, when that makes the schema shorter, once
 * under `$defs` (named after the property it first appears at) and `$ref`s it. Largest first; a
 * part of one already shared is left inside it.
 */
function shared(root: JsonSchema): JsonSchema {
  const refs = new Map<string, string>();
  const defs: Record<string, unknown> = {};
  const candidates = [...subschemas(root)].filter(([, c]) => c.count > 1)
    .sort(([a], [b]) => b.length - a.length);
  for (const [text, { count, name }] of candidates) {
    if ([...refs.keys()].some((chosen) => chosen.includes(text))) continue;
    const key = Object.hasOwn(defs, name) ? `${name}${refs.size}` : name;
    const ref = `{"$ref":"#/$defs/${key}"}`;
    if (count * (text.length - ref.length) <= text.length + key.length + 3) continue;
    refs.set(text, key);
    defs[key] = JSON.parse(text);
  }
  if (refs.size === 0) return root;
  const swap = (s: unknown): unknown => {
    if (s === null || typeof s !== "object" || Array.isArray(s)) return s;
    const key = refs.get(JSON.stringify(s));
    return key ? { $ref: `#/$defs/${key}` } : mapSubschemas(s as JsonSchema, swap);
  };
  for (const [key, def] of Object.entries(defs)) defs[key] = mapSubschemas(def as JsonSchema, swap);
  return { ...mapSubschemas(root, swap), $defs: defs };
}
