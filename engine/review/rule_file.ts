/**
 * `.deepreview` files: YAML maps of named review rules, each applying to the folder its file
 * is in. Read strictly (zod), every problem reported with its file and line; a broken rule is
 * left out and named, the file's other rules still apply. Pure: the adapter hands in the texts
 * and reads instruction files through {@linkcode RuleTexts}.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import type { YamlParseWithLines } from "../deepwork/yaml.ts";
import { REVIEW_STRATEGIES } from "../model/vocabulary.ts";
import { globProblem } from "./glob.ts";
import { folderOf, projectPath } from "./paths.ts";
import type { ReviewRule, RuleProblem } from "./rule.ts";

/** The name of a rule file. */
export const RULE_FILE_NAME = ".deepreview";

/** A rule name: it becomes part of review ids, so letters, digits, `_` and `-` only. */
export const RULE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** A glob, refused with the reason when it cannot be used. */
export const globSchema = z.string().superRefine((g, ctx) => {
  const problem = globProblem(g);
  if (problem) ctx.addIssue({ code: "custom", message: `${problem}: ${JSON.stringify(g)}` });
});

/** A reference file as written: a path (relative to the file naming it) and what it is. */
export const referenceFileSchema = z.object({
  path: z.string().min(1),
  description: z.string().optional(),
}).strict();

/** The line and message of a YAML syntax error. */
export function yamlSyntaxProblem(error: unknown): { line: number | null; message: string } {
  const e = error as { message?: string; linePos?: [{ line: number }] };
  return {
    line: e.linePos?.[0]?.line ?? null,
    message: `YAML syntax error: ${e.message?.split("\n")[0]}`,
  };
}

/** One rule as written. */
export const ruleSchema = z.object({
  description: z.string().min(1).max(255, "must be under 256 characters"),
  match: z.object({
    include: z.array(globSchema).min(1, "needs at least one glob"),
    exclude: z.array(globSchema).optional(),
  }).strict(),
  review: z.object({
    strategy: z.enum(REVIEW_STRATEGIES),
    instructions: z.union([z.string().min(1), z.object({ file: z.string().min(1) }).strict()]),
    agent: z.record(z.string(), z.string().min(1)).optional(),
    additional_context: z.object({
      all_changed_filenames: z.boolean().optional(),
      unchanged_matching_files: z.boolean().optional(),
    }).strict().optional(),
    reference_files: z.array(referenceFileSchema).optional(),
  }).strict(),
}).strict();

/** Reads the files a rule names (instruction files), relative to the workspace root. */
export interface RuleTexts {
  /** The text of a project file, or `null` when it cannot be read. */
  read(path: string): Promise<string | null>;
}

/** The rules of a set of rule files, and every problem found in them. */
export interface LoadedRules {
  /** Valid rules, by file then order in the file. */
  rules: ReviewRule[];
  /** Problems, by file and line. */
  problems: RuleProblem[];
}

function issueText(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? `\`${issue.path.join(".")}\`: ` : "";
  return `${where}${issue.message}`;
}

/** The rules of one `.deepreview` file at project path `file`. */
export async function readRuleFile(
  file: { path: string; text: string },
  at: { parse: YamlParseWithLines; texts: RuleTexts },
): Promise<LoadedRules> {
  const problems: RuleProblem[] = [];
  const problem = (line: number | null, message: string) =>
    problems.push({ file: file.path, line, message });
  let doc;
  try {
    doc = at.parse(file.text);
  } catch (error) {
    const syntax = yamlSyntaxProblem(error);
    problem(syntax.line, syntax.message);
    return { rules: [], problems };
  }
  if (doc.value === null || doc.value === undefined) return { rules: [], problems };
  if (typeof doc.value !== "object" || Array.isArray(doc.value)) {
    problem(1, "a .deepreview file is a map of rule names to rules");
    return { rules: [], problems };
  }
  const folder = folderOf(file.path);
  const rules: ReviewRule[] = [];
  for (const [name, raw] of Object.entries(doc.value as Record<string, unknown>)) {
    const line = doc.lineOf([name]);
    if (!RULE_NAME.test(name)) {
      problem(line, `rule name ${JSON.stringify(name)}: use letters, digits, \`_\` and \`-\``);
      continue;
    }
    const parsed = ruleSchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        problem(doc.lineOf([name, ...issue.path]), `rule \`${name}\`: ${issueText(issue)}`);
      }
      continue;
    }
    const rule = await ruleOf(parsed.data, {
      name,
      folder,
      file: file.path,
      line,
      doc,
      texts: at.texts,
    });
    if (rule.ok) rules.push(rule.rule);
    else problems.push(...rule.problems);
  }
  return { rules, problems };
}

type Parsed = z.infer<typeof ruleSchema>;

async function ruleOf(
  r: Parsed,
  at: {
    name: string;
    folder: string;
    file: string;
    line: number;
    doc: { lineOf(path: readonly PropertyKey[]): number };
    texts: RuleTexts;
  },
): Promise<{ ok: true; rule: ReviewRule } | { ok: false; problems: RuleProblem[] }> {
  const problems: RuleProblem[] = [];
  const bad = (path: PropertyKey[], message: string) =>
    problems.push({ file: at.file, line: at.doc.lineOf([at.name, ...path]), message });
  let instructions: string;
  if (typeof r.review.instructions === "string") instructions = r.review.instructions;
  else {
    const path = projectPath(at.folder, r.review.instructions.file);
    const text = path === null ? null : await at.texts.read(path);
    if (text === null) {
      bad(
        ["review", "instructions", "file"],
        `rule \`${at.name}\`: instructions file ${JSON.stringify(r.review.instructions.file)} ${
          path === null ? "leaves the project" : "cannot be read"
        } (it is relative to this .deepreview file's folder)`,
      );
    }
    instructions = text ?? "";
  }
  const references = (r.review.reference_files ?? []).map((f, i) => {
    const path = projectPath(at.folder, f.path);
    if (path === null) {
      bad(
        ["review", "reference_files", i, "path"],
        `rule \`${at.name}\`: reference file ${JSON.stringify(f.path)} leaves the project`,
      );
    }
    return { path: path ?? "", description: f.description ?? null };
  });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    rule: {
      name: at.name,
      description: r.description,
      definedAt: `${at.file}:${at.line}`,
      folder: at.folder,
      include: r.match.include,
      exclude: r.match.exclude ?? [],
      strategy: r.review.strategy,
      instructions,
      agent: r.review.agent ?? {},
      allChangedFilenames: r.review.additional_context?.all_changed_filenames ?? false,
      unchangedMatchingFiles: r.review.additional_context?.unchanged_matching_files ?? false,
      referenceFiles: references,
    },
  };
}

/** The rules of every rule file given, problems included, in file order. */
export async function readRuleFiles(
  files: readonly { path: string; text: string }[],
  at: { parse: YamlParseWithLines; texts: RuleTexts },
): Promise<LoadedRules> {
  const out: LoadedRules = { rules: [], problems: [] };
  for (const file of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    const loaded = await readRuleFile(file, at);
    out.rules.push(...loaded.rules);
    out.problems.push(...loaded.problems);
  }
  return out;
}
