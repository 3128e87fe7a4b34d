/**
 * From file text to a validated workflow: JSONC parsing with positions, then the zod schema.
 * Every problem names the file, the JSON path and a fix.
 * @module
 */
import { parse, type ParseError, printParseErrorCode } from "npm:jsonc-parser@3.3.1";
import type { z } from "npm:zod@4.6.7";
import { type WorkflowFile, workflowFileSchema } from "./schema.ts";
import { formatPath } from "../common/issue_path.ts";

/** One problem found in a workflow file. */
export interface WorkflowIssue {
  /** JSON path of the problem (`steps[2].prompt`), or `""` for the whole file. */
  path: string;
  /** What is wrong and how to fix it. */
  message: string;
}

/** A file that could not be loaded, and why. */
export interface WorkflowLoadError {
  /** Where the file is (a path, or `bundled:<name>`). */
  file: string;
  /** Every problem found, in file order. */
  issues: WorkflowIssue[];
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return `line ${line}, column ${offset - before.lastIndexOf("\n")}`;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return `unknown key(s) ${
      issue.keys.map((k) => `\`${k}\``).join(", ")
    }: remove or rename them ` +
      "(see workflows/workflow.schema.json for the allowed keys)";
  }
  if (issue.code === "invalid_type" && issue.input === undefined) {
    return `missing required ${issue.expected}: add it`;
  }
  if (issue.code === "invalid_union" && "options" in issue && issue.options?.length) {
    return `use one of ${issue.options.map((o) => `\`${String(o)}\``).join(", ")}`;
  }
  return issue.message;
}

/** Issues of one union branch that say the value has another shape altogether. */
function shapeMismatches(branch: readonly z.core.$ZodIssue[]): number {
  return branch.filter((i) =>
    i.path.length === 0 && (i.code === "invalid_type" || i.code === "unrecognized_keys")
  ).length;
}

/**
 * The issues to show for a zod issue. A union that matched no branch reports the branch the
 * value was closest to (fewest shape mismatches, then fewest issues), instead of "Invalid input".
 */
function explainIssue(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[]): WorkflowIssue[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const best = [...issue.errors].sort((a, b) =>
      shapeMismatches(a) - shapeMismatches(b) || a.length - b.length
    )[0]!;
    return best.flatMap((inner) => explainIssue(inner, path));
  }
  return [{ path: formatPath(path), message: describeIssue(issue) }];
}

/** Parses and validates a workflow file's text (JSON or JSONC). */
export function parseWorkflowText(
  text: string,
  file: string,
): { ok: true; workflow: WorkflowFile } | { ok: false; error: WorkflowLoadError } {
  const errors: ParseError[] = [];
  const data: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    return {
      ok: false,
      error: {
        file,
        issues: errors.map((e) => ({
          path: "",
          message: `JSON syntax error (${printParseErrorCode(e.error)}) at ${
            lineAndColumn(text, e.offset)
          }: fix the syntax there`,
        })),
      },
    };
  }
  const parsed = workflowFileSchema.safeParse(data);
  if (!parsed.success) {
    return {
      ok: false,
      error: {
        file,
        issues: parsed.error.issues.flatMap((issue) => explainIssue(issue, [])),
      },
    };
  }
  return { ok: true, workflow: parsed.data };
}

/** One line per issue: `file: path: message`. */
export function formatLoadError(error: WorkflowLoadError): string {
  return error.issues.map((i) => `${error.file}: ${i.path || "(file)"}: ${i.message}`).join("\n");
}
