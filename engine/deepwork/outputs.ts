/**
 * Checking what `finished_step` submits against a step's declared outputs, as DeepWork
 * requires before a step may finish: unknown names, missing required outputs, values of the wrong type, then the files they name.
 * The structural checks are pure and shared with the default profile's output contract; the
 * file checks go through the {@linkcode WorkspaceFiles} port.
 * @module
 */
import { LIMITS } from "../model/limits.ts";
import { fail, type Result } from "../model/result.ts";
import type { JobOutputSpec } from "./job.ts";
import type { FileFacts, FileRefusal, WorkspaceFiles } from "./ports.ts";

/** Submitted outputs: a name to a path, a list of paths, or text. */
export type SubmittedOutputs = Record<string, unknown>;

/** A file a submission names, with the output it belongs to. */
export interface NamedFile {
  /** The output's name. */
  output: string;
  /** The path as submitted. */
  path: string;
}

const names = (list: readonly string[]) => list.map((n) => `\`${n}\``).join(", ");

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  return `a ${typeof value}`;
}

/** Why one value does not fit its output's type, or `null` when it does. */
function typeProblem(spec: JobOutputSpec, value: unknown): string | null {
  const isList = Array.isArray(value);
  const head = `Output \`${spec.name}\` is declared \`type: ${spec.type}\``;
  if (spec.type === "file" || spec.type === "string") {
    if (typeof value === "string") return null;
    return `${head} and takes a single ${
      spec.type === "file" ? "file path" : "text value"
    } (a string); got ${describeValue(value)}. Type mismatch.`;
  }
  if (!isList) {
    if (spec.type === "file_path" && typeof value === "string") return null;
    return `${head} and takes a list of file paths (an array of strings); got ${
      describeValue(value)
    }. Type mismatch.`;
  }
  const bad = (value as unknown[]).findIndex((v) => typeof v !== "string");
  if (bad < 0) return null;
  return `${head}: every element must be a file path string; element ${bad} is ${
    describeValue((value as unknown[])[bad])
  }. Type mismatch.`;
}

/**
 * The first structural problem of a submission, in the order the checks run: unknown names
 * (listing the declared ones), missing required outputs, type mismatches. `null` when none.
 */
export function outputsProblem(
  specs: readonly JobOutputSpec[],
  outputs: SubmittedOutputs,
  stepId: string,
): string | null {
  const declared = specs.map((s) => s.name);
  const unknown = Object.keys(outputs).filter((k) => !declared.includes(k)).sort();
  if (unknown.length > 0) {
    return `Unknown output name(s) ${names(unknown)} for step \`${stepId}\`. Valid output names: ${
      names(declared) || "(none: this step declares no outputs)"
    }.`;
  }
  const missing = specs.filter((s) => s.required && outputs[s.name] === undefined).map((s) =>
    s.name
  );
  if (missing.length > 0) {
    return `Missing required output(s) ${
      names(missing)
    } for step \`${stepId}\`. Declared outputs: ${
      specs.map((s) => `\`${s.name}\` (${s.required ? "required" : "optional"})`).join(", ")
    }.`;
  }
  for (const spec of specs) {
    const value = outputs[spec.name];
    if (value === undefined) continue;
    const problem = typeProblem(spec, value);
    if (problem) return problem;
  }
  return null;
}

/** The files a (structurally valid) submission names, in declaration order. */
export function namedFiles(
  specs: readonly JobOutputSpec[],
  outputs: SubmittedOutputs,
): NamedFile[] {
  const out: NamedFile[] = [];
  for (const spec of specs) {
    const value = outputs[spec.name];
    if (value === undefined || spec.type === "string") continue;
    for (const path of Array.isArray(value) ? value : [value]) {
      out.push({ output: spec.name, path: String(path) });
    }
  }
  return out;
}

/** A described file, with the output it belongs to. */
export type RecordedFile = FileFacts & { output: string };

/** The refusal of a submission naming more files than one call describes, or `null`. */
export function tooManyFiles(named: readonly NamedFile[]): Result<never> | null {
  if (named.length <= LIMITS.outputFiles) return null;
  return fail(
    "INVALID_ARGUMENTS",
    `The outputs name ${named.length} files; one finished_step takes at most ${LIMITS.outputFiles}. Name a folder's files in fewer outputs (an index file listing them, or an archive), then call again (nothing was recorded).`,
    { details: { reason: "too_many_files", count: named.length, max: LIMITS.outputFiles } },
  );
}

const WHY: Record<FileRefusal, string> = {
  outside: "is outside the project root; outputs must be files inside it",
  not_a_file:
    "is not a regular file (it names the project root, a folder or another kind of entry); outputs must be files",
  empty: "is an empty path, not a file; name the file by its path",
  missing: "does not exist",
  unreadable: "cannot be read (check its permissions)",
};

/**
 * Describes every named file, hashing at most {@linkcode LIMITS.hashedBytes} in all (a file
 * past that is recorded by size and modification time); the first file that does not exist
 * (or leaves the root, or is not a file) is the error, naming the output, the path and the root.
 */
export async function describeFiles(
  files: WorkspaceFiles,
  at: { root: string; named: readonly NamedFile[] },
): Promise<{ ok: true; files: RecordedFile[] } | { ok: false; message: string }> {
  const out: RecordedFile[] = [];
  let budget: number = LIMITS.hashedBytes;
  for (const f of at.named) {
    const described = await files.describe(at.root, f.path, { hashUpTo: budget });
    if (!described.ok) {
      return {
        ok: false,
        message: `Output \`${f.output}\`: file \`${f.path}\` ${
          WHY[described.reason]
        } (paths are relative to the project root ${at.root}). File not found or not usable: create it or fix the path, then call finished_step again.`,
      };
    }
    if (described.facts.sha256 !== null) budget -= described.facts.size;
    out.push({ output: f.output, ...described.facts });
  }
  return { ok: true, files: out };
}
