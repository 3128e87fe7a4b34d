/**
 * A review rule, whatever stated it: a `.deepreview` file, a named schema, or a job step's
 * review block. Every rule goes through the same pipeline (`plan.ts` picks its files and groups
 * them by strategy, `prompt.ts` writes each task), so the three never drift apart.
 * @module
 */
import type { ReviewStrategy } from "../model/vocabulary.ts";

/** A file a reviewer should read besides the files under review. */
export interface ReferenceFile {
  /** Project path (relative to the workspace root). */
  path: string;
  /** What it is, for the reviewer. */
  description: string | null;
  /** Its text when the rule carries it (bundled named schemas); else it is read from `path`. */
  text?: string;
}

/** One review rule. */
export interface ReviewRule {
  /** The rule's name (unique within its defining file). */
  name: string;
  /** What it checks, in a line. */
  description: string;
  /** Where it is stated, `path:line` (`path` relative to the workspace root when inside it). */
  definedAt: string;
  /** The folder its globs are relative to (project path, `""` for the root). */
  folder: string;
  /** Globs a file must match one of. */
  include: string[];
  /** Globs that rule a file out. */
  exclude: string[];
  /** How matched files become tasks. */
  strategy: ReviewStrategy;
  /** What the reviewer checks. */
  instructions: string;
  /** The sub-agent type to use, per host (`claude`, ...). */
  agent: Record<string, string>;
  /** List every changed file for the reviewer. */
  allChangedFilenames: boolean;
  /** Also name matching files that did not change. */
  unchangedMatchingFiles: boolean;
  /** Files whose contents go into every task. */
  referenceFiles: ReferenceFile[];
  /** A JSON Schema each reviewed file's content (YAML or JSON) must match (named schemas). */
  jsonSchema?: Record<string, unknown>;
}

/** A problem with a rule or rule file, where it is. */
export interface RuleProblem {
  /** The file (project path, or a configured folder's absolute path). */
  file: string;
  /** The line (from 1), when known. */
  line: number | null;
  /** What is wrong and how to fix it. */
  message: string;
}

/** `file:line: message`, the form problems are printed in. */
export function problemText(p: RuleProblem): string {
  return `${p.file}${p.line === null ? "" : `:${p.line}`}: ${p.message}`;
}
