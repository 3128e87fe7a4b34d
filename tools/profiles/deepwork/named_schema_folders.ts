/**
 * Named schemas on disk. A schema is a folder named after it holding `schema.yml` (`summary`,
 * `matchers`, optional `instructions` and `reference_files`, the latter relative to the folder)
 * and, optionally, `schema.json` (a JSON Schema). Schemas are found in the project's
 * `.deepwork/schemas/`, then in each configured folder (`--schemas-dir`,
 * `DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS`, colon-separated), then in the bundled set; the first
 * to define a name wins (a clash between folders is reported; the bundled set simply yields).
 * @module
 */
import { readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { yamlLinedParser } from "../../../engine/deepwork/yaml.ts";
import { LIMITS } from "../../../engine/model/limits.ts";
import {
  bundledJsonSchemas,
  type NamedSchema,
  readNamedSchema,
  type SchemaTexts,
} from "../../../engine/review/named_schemas.ts";
import type { NamedSchemaSource } from "../../../engine/review/ports.ts";
import type { RuleProblem } from "../../../engine/review/rule.ts";
import type { SourceKind } from "../../../engine/model/vocabulary.ts";
import { diskFiles } from "./files.ts";

/** Most bytes of a schema's own files read. */
const SCHEMA_TEXT_BYTES = 1024 * 1024;

/** The bundled named schemas: the files waymark's review rules and named schemas are written in. */
function bundled(): SchemaTexts[] {
  const json = bundledJsonSchemas();
  const none = () => Promise.resolve(null);
  return [
    {
      name: "deepreview",
      source: "bundled",
      file: "bundled:deepreview",
      text: [
        "summary: Review rule files (.deepreview), each a map of rule names to rules",
        'matchers: ["**/.deepreview"]',
        "instructions: >-",
        "  Each rule's description says in a line what it checks, its include globs are relative",
        "  to the file's folder and match what the description promises, and its instructions tell a",
        "  reviewer who has never seen the project what to look for and what is out of scope.",
      ].join("\n"),
      jsonSchemaText: JSON.stringify(json.ruleFile),
      readReference: none,
    },
    {
      name: "named_schema",
      source: "bundled",
      file: "bundled:named_schema",
      text: [
        "summary: Named schema definitions (schema.yml in a folder named after the schema)",
        'matchers: [".deepwork/schemas/*/schema.yml"]',
        "instructions: >-",
        "  The summary names the kind of file plainly and the matchers catch exactly those files.",
      ].join("\n"),
      jsonSchemaText: JSON.stringify(json.schemaFile),
      readReference: none,
    },
  ];
}

async function folderTexts(
  dir: string,
  at: { source: SourceKind; shown: (name: string) => string },
): Promise<SchemaTexts[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: SchemaTexts[] = [];
  for (const e of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name < b.name ? -1 : 1)) {
    const folder = join(dir, e.name);
    const text = await diskFiles.readText(folder, "schema.yml", SCHEMA_TEXT_BYTES);
    if (text === null) continue;
    out.push({
      name: e.name,
      source: at.source,
      file: at.shown(e.name),
      text,
      jsonSchemaText: await diskFiles.readText(folder, "schema.json", SCHEMA_TEXT_BYTES),
      readReference: (path) => diskFiles.readText(folder, path, LIMITS.referenceBytes),
    });
  }
  return out;
}

/** Named schemas from the project, the configured folders (in order) and the bundled set. */
export function namedSchemaFolders(options: { dirs: readonly string[] }): NamedSchemaSource {
  return {
    async load(root) {
      const parse = await yamlLinedParser();
      const texts = [
        ...await folderTexts(join(root, ".deepwork", "schemas"), {
          source: "project",
          shown: (n) => `.deepwork/schemas/${n}/schema.yml`,
        }),
        ...(await Promise.all(options.dirs.map((d) =>
          folderTexts(resolve(d), {
            source: "extra",
            shown: (n) => join(resolve(d), n, "schema.yml"),
          })
        ))).flat(),
        ...bundled(),
      ];
      const schemas: NamedSchema[] = [];
      const problems: RuleProblem[] = [];
      for (const t of texts) {
        const winner = schemas.find((s) => s.name === t.name);
        if (winner) {
          if (t.source !== "bundled") {
            problems.push({
              file: t.file,
              line: null,
              message:
                `a schema named \`${t.name}\` is already defined in ${winner.file}, which takes precedence`,
            });
          }
          continue;
        }
        const read = await readNamedSchema(t, parse);
        if (read.ok) schemas.push(read.schema);
        else problems.push(...read.problems);
      }
      return { schemas, problems };
    },
  };
}
