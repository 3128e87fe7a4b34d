/**
 * Named schemas: a summary of a kind of file, globs of the files it governs (relative to the
 * project root), optionally a JSON Schema their content (YAML or JSON) must match and reference
 * files. Each is also a review rule over the files it matches (`schema-<name>`, one task per
 * file). The on-disk layout is the adapter's (`docs/deepwork.md`); this module reads the texts.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import type { YamlParseWithLines } from "../deepwork/yaml.ts";
import type { SourceKind } from "../model/vocabulary.ts";
import { globSchema, referenceFileSchema, ruleSchema, yamlSyntaxProblem } from "./rule_file.ts";
import type { ReferenceFile, ReviewRule, RuleProblem } from "./rule.ts";

/** A schema's name (its folder's name). */
export const SCHEMA_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** A named schema's `schema.yml`. */
export const schemaFileSchema = z.object({
  summary: z.string().min(1).max(255, "must be under 256 characters"),
  matchers: z.array(globSchema).min(1, "needs at least one glob"),
  instructions: z.string().min(1).optional(),
  reference_files: z.array(referenceFileSchema).optional(),
}).strict();

/** A named schema, loaded. */
export interface NamedSchema {
  /** Its name. */
  name: string;
  /** What the files it governs are. */
  summary: string;
  /** Globs of the files it governs, relative to the project root. */
  matchers: string[];
  /** What a reviewer should check besides the JSON Schema. */
  instructions: string | null;
  /** The JSON Schema their content must match, when it has one. */
  jsonSchema: Record<string, unknown> | null;
  /** Reference files, with their text read by the loader. */
  referenceFiles: ReferenceFile[];
  /** Where it came from. */
  source: SourceKind;
  /** Its `schema.yml` (a project path, an absolute path, or `bundled:<name>`). */
  file: string;
}

/** What the loader read of one schema folder. */
export interface SchemaTexts {
  /** The schema's name. */
  name: string;
  /** Where it came from. */
  source: SourceKind;
  /** The `schema.yml` path as shown. */
  file: string;
  /** Its text. */
  text: string;
  /** `schema.json`'s text, `null` when the folder has none. */
  jsonSchemaText: string | null;
  /** Reads a reference file named relative to the schema's folder (`null`: unreadable). */
  readReference(path: string): Promise<string | null>;
}

/** A schema from its texts, or the problems that keep it out. */
export async function readNamedSchema(
  texts: SchemaTexts,
  parse: YamlParseWithLines,
): Promise<{ ok: true; schema: NamedSchema } | { ok: false; problems: RuleProblem[] }> {
  const problem = (line: number | null, message: string) => ({
    ok: false as const,
    problems: [{ file: texts.file, line, message }],
  });
  if (!SCHEMA_NAME.test(texts.name)) {
    return problem(null, `schema name \`${texts.name}\`: use lower-case letters, digits and \`_\``);
  }
  let doc;
  try {
    doc = parse(texts.text);
  } catch (error) {
    const syntax = yamlSyntaxProblem(error);
    return problem(syntax.line, syntax.message);
  }
  const parsed = schemaFileSchema.safeParse(doc.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return problem(doc.lineOf(issue.path), `\`${issue.path.join(".")}\`: ${issue.message}`);
  }
  let jsonSchema: Record<string, unknown> | null = null;
  if (texts.jsonSchemaText !== null) {
    try {
      const value = JSON.parse(texts.jsonSchemaText);
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new Error("not an object");
      }
      jsonSchema = value;
    } catch (error) {
      return problem(null, `schema.json is not a JSON object: ${(error as Error).message}`);
    }
  }
  const referenceFiles: ReferenceFile[] = [];
  for (const ref of parsed.data.reference_files ?? []) {
    const text = await texts.readReference(ref.path);
    referenceFiles.push({
      path: ref.path,
      description: ref.description ?? null,
      ...(text === null ? {} : { text }),
    });
  }
  return {
    ok: true,
    schema: {
      name: texts.name,
      summary: parsed.data.summary,
      matchers: parsed.data.matchers,
      instructions: parsed.data.instructions ?? null,
      jsonSchema,
      referenceFiles,
      source: texts.source,
      file: texts.file,
    },
  };
}

/** The review rule a named schema is: one task per file it governs. */
export function schemaRule(schema: NamedSchema): ReviewRule {
  const check = schema.jsonSchema
    ? " Its content must match the JSON Schema below; the check's result is given per file."
    : "";
  return {
    name: `schema-${schema.name}`,
    description: `Files of the named schema \`${schema.name}\`: ${schema.summary}`.slice(0, 255),
    definedAt: schema.file.startsWith("bundled:") ? schema.file : `${schema.file}:1`,
    folder: "",
    include: schema.matchers,
    exclude: [],
    strategy: "individual",
    instructions: [
      `Check that the file is a good \`${schema.name}\`: ${schema.summary}.${check}`,
      ...(schema.instructions ? ["", schema.instructions] : []),
    ].join("\n"),
    agent: {},
    allChangedFilenames: false,
    unchangedMatchingFiles: false,
    referenceFiles: schema.referenceFiles,
    ...(schema.jsonSchema ? { jsonSchema: schema.jsonSchema } : {}),
  };
}

/** JSON Schemas of the files waymark itself reads, for the bundled named schemas. */
export function bundledJsonSchemas(): {
  ruleFile: Record<string, unknown>;
  schemaFile: Record<string, unknown>;
} {
  return {
    ruleFile: {
      type: "object",
      propertyNames: { pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$" },
      additionalProperties: z.toJSONSchema(ruleSchema, { io: "input", unrepresentable: "any" }),
    },
    schemaFile: z.toJSONSchema(schemaFileSchema, { io: "input", unrepresentable: "any" }) as Record<
      string,
      unknown
    >,
  };
}
