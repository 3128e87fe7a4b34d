/**
 * From source files to runnable workflows: parse, compile, hash, and the rules that depend on
 * where a file came from (`waymark.*` only from bundled files, legacy ids with a warning). Pure:
 * adapters hand in file text and keep the results cached by file version.
 * @module
 */
import { compileWorkflow, isRoutineId } from "./compile.ts";
import { type CompiledWorkflow, workflowHash } from "./compiled.ts";
import type { WorkflowFile } from "./schema.ts";
import type { OverlayLayers } from "./overlay_schema.ts";
import {
  BUNDLED_NAMESPACE,
  checkWorkflowId,
  namespaceOf,
  onlyBundledMayDefine,
  suggestedRename,
} from "./workflow_ids.ts";
import { parseWorkflowText, type WorkflowLoadError } from "./parse.ts";
import { parse as parseJsonc } from "npm:jsonc-parser@3.3.1";
import { compareText } from "../common/collate.ts";
import {
  type IdStatus,
  SOURCE_KINDS,
  type SourceKind,
  type WorkflowKind,
} from "../model/vocabulary.ts";

/** A workflow file's text and where it came from. */
export interface SourceFile {
  /** The source kind, which decides precedence and which ids are allowed. */
  source: SourceKind;
  /** Path (or `bundled:<name>`), for messages. */
  file: string;
  /** The file's text. */
  text: string;
}

/** A structured warning. */
export interface Warning {
  /** Machine-readable code. */
  code: string;
  /** What it means and what to do. */
  message: string;
}

/** A workflow ready to run. */
export interface LoadedWorkflow {
  /** Workflow id. */
  id: string;
  /** Whether the id is namespaced or legacy. */
  idStatus: IdStatus;
  /** Workflow or routine. */
  kind: WorkflowKind;
  /** Where it came from. */
  source: SourceKind;
  /** Its file. */
  file: string;
  /** The compiled form. */
  compiled: CompiledWorkflow;
  /** `workflowHash` of the compiled form. */
  hash: string;
  /** Warnings to show whenever it is listed, inspected or started. */
  warnings: Warning[];
  /** Set on an overlay: its layers and where each step came from. */
  layers?: OverlayLayers;
}

/** Every workflow that loaded, and every file that did not. */
export interface LoadedSet {
  /** Loaded workflows after precedence, sorted namespace → kind → id. */
  workflows: LoadedWorkflow[];
  /** Files that failed to load, with their problems. */
  errors: WorkflowLoadError[];
}

/** How files are trusted and what they may reference. */
export interface LoadOptions {
  /** Routines by id for `templateCall` (besides those among the files loaded together). */
  routines?: ReadonlyMap<string, WorkflowFile>;
}

/** A parsed file: validated and checked against the source rules, not yet compiled. */
export type ParsedSource =
  | { ok: true; input: SourceFile; file: WorkflowFile }
  | { ok: false; error: WorkflowLoadError };

/**
 * A bundled file as it is: waymark ships it, and a test checks that validation passes and leaves
 * its compiled form unchanged, so the workflow schema's first parse in a process (~10 ms of zod
 * setting itself up) is not spent on it.
 */
export function readBundledFile(input: SourceFile): { ok: true; workflow: WorkflowFile } {
  return { ok: true, workflow: parseJsonc(input.text) as WorkflowFile };
}

/** Parses and validates one file and applies the source rules (`waymark.*` only from bundled files). */
export function parseSourceFile(input: SourceFile): ParsedSource {
  const parsed = input.source === "bundled"
    ? readBundledFile(input)
    : parseWorkflowText(input.text, input.file);
  if (!parsed.ok) return parsed;
  const file = parsed.workflow;
  if (input.source !== "bundled" && onlyBundledMayDefine(file.id)) {
    return {
      ok: false,
      error: {
        file: input.file,
        issues: [{
          path: "id",
          message:
            `\`${file.id}\`: the \`${BUNDLED_NAMESPACE}.\` namespace is reserved for workflows bundled with waymark; ` +
            `rename it, for example to \`${
              suggestedRename(file.id.slice(BUNDLED_NAMESPACE.length + 1), input.source)
            }\``,
        }],
      },
    };
  }
  return { ok: true, input, file };
}

/** What compiling one file gives: the workflow, or why it did not load. */
export type LoadResult =
  | { ok: true; workflow: LoadedWorkflow }
  | { ok: false; error: WorkflowLoadError };

/** Compiles one parsed file against `routines`, hashes it and adds its warnings. */
export async function compileParsed(
  parsed: Extract<ParsedSource, { ok: true }>,
  routines: ReadonlyMap<string, WorkflowFile>,
): Promise<LoadResult> {
  const { input, file } = parsed;
  const compiled = compileWorkflow(file, { routines });
  if (!compiled.ok) return { ok: false, error: { file: input.file, issues: compiled.issues } };
  const idCheck = checkWorkflowId(file.id);
  const warnings: Warning[] = [];
  if (idCheck.status === "legacy") {
    warnings.push({
      code: "LEGACY_WORKFLOW_ID",
      message:
        `\`${file.id}\` is a legacy id without a namespace; it still runs, but rename it to \`${
          suggestedRename(file.id, input.source)
        }\``,
    });
  }
  return {
    ok: true,
    workflow: {
      id: file.id,
      idStatus: idCheck.status === "legacy" ? "legacy" : "namespaced",
      kind: compiled.compiled.kind,
      source: input.source,
      file: input.file,
      compiled: compiled.compiled,
      hash: await workflowHash(compiled.compiled),
      warnings,
    },
  };
}

/**
 * Loads files together: parse and validate each, collect the routines among them (by source
 * precedence: a bundled routine wins), then compile each with those routines, so a
 * `templateCall` expands to the routine it names and the routine's text is inside the hash.
 */
export async function loadWorkflowFiles(
  inputs: readonly SourceFile[],
  options: LoadOptions = {},
): Promise<({ ok: true; workflow: LoadedWorkflow } | { ok: false; error: WorkflowLoadError })[]> {
  const parsed = inputs.map((input) => parseSourceFile(input));
  return await compileAll(parsed, options);
}

/**
 * The routines files loaded together offer to `templateCall`s: the first file to parse with each
 * routine id, by source precedence (a bundled routine wins), over `options.routines`.
 */
export function routinesAmong(
  parsed: readonly ParsedSource[],
  options: LoadOptions = {},
): Map<string, WorkflowFile> {
  const routines = new Map(options.routines ?? []);
  const ordered = parsed.filter((p): p is Extract<ParsedSource, { ok: true }> => p.ok)
    .sort((a, b) => SOURCE_KINDS.indexOf(a.input.source) - SOURCE_KINDS.indexOf(b.input.source));
  for (const p of ordered) {
    if (isRoutineId(p.file.id) && !routines.has(p.file.id)) routines.set(p.file.id, p.file);
  }
  return routines;
}

/** Compiles parsed files against the routines among them (plus `options.routines`). */
export async function compileAll(
  parsed: readonly ParsedSource[],
  options: LoadOptions = {},
): Promise<LoadResult[]> {
  const routines = routinesAmong(parsed, options);
  const out = [];
  for (const p of parsed) out.push(p.ok ? await compileParsed(p, routines) : p);
  return out;
}

/** Loads one file: parse, validate, compile (with `options.routines`), hash, apply source rules. */
export async function loadWorkflowFile(
  input: SourceFile,
  options: LoadOptions = {},
): Promise<{ ok: true; workflow: LoadedWorkflow } | { ok: false; error: WorkflowLoadError }> {
  const parsed = parseSourceFile(input);
  if (!parsed.ok) return parsed;
  return await compileParsed(parsed, options.routines ?? new Map());
}

/** What precedence and listing order read of a workflow (a loaded one, or a kept summary). */
export type CatalogEntry = Pick<LoadedWorkflow, "id" | "source" | "file" | "kind">;

/**
 * Applies precedence (bundled, user, project, extra: the first to define an id wins; the others
 * are reported) and sorts namespace → kind (workflow first) → id.
 */
export function resolveCatalog<T extends CatalogEntry = LoadedWorkflow>(
  loaded: readonly T[],
  errors: readonly WorkflowLoadError[],
): { workflows: T[]; errors: WorkflowLoadError[] } {
  const ordered = [...loaded].sort((a, b) =>
    SOURCE_KINDS.indexOf(a.source) - SOURCE_KINDS.indexOf(b.source) || compareText(a.file, b.file)
  );
  const byId = new Map<string, T>();
  const allErrors = [...errors];
  for (const workflow of ordered) {
    const winner = byId.get(workflow.id);
    if (!winner) byId.set(workflow.id, workflow);
    else {
      allErrors.push({
        file: workflow.file,
        issues: [{
          path: "id",
          message:
            `\`${workflow.id}\` is already defined by ${winner.file} (${winner.source}), which takes precedence; rename one of them`,
        }],
      });
    }
  }
  const workflows = [...byId.values()].sort((a, b) =>
    compareText(namespaceOf(a.id), namespaceOf(b.id)) ||
    (a.kind === b.kind ? 0 : a.kind === "workflow" ? -1 : 1) ||
    compareText(a.id, b.id)
  );
  allErrors.sort((a, b) => compareText(a.file, b.file));
  return { workflows, errors: allErrors };
}

// ---------------------------------------------------------------------------------------------
// One workflow on demand: find the file that wins an id and compile only it.

/** The id a file's text declares, read cheaply (no validation); `null` when it declares none. */
export function declaredId(text: string): string | null {
  let data: unknown;
  try {
    data = JSON.parse(text); // most files are plain JSON, and the native parser is fast
  } catch {
    data = parseJsonc(text, [], { allowTrailingComma: true, disallowComments: false });
  }
  const id = (data as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id : null;
}

/**
 * The routines {@linkcode routinesAmong} would offer, built on first use: a workflow without
 * `templateCall`s compiles without any other file being parsed. `used` says whether the
 * compiler asked (so a cached result depends on the routines only when it did).
 */
export class LazyRoutines implements ReadonlyMap<string, WorkflowFile> {
  #map: ReadonlyMap<string, WorkflowFile> | null = null;
  readonly #build: () => ReadonlyMap<string, WorkflowFile>;
  constructor(build: () => ReadonlyMap<string, WorkflowFile>) {
    this.#build = build;
  }
  /** Whether the routines were read. */
  get used(): boolean {
    return this.#map !== null;
  }
  #routines(): ReadonlyMap<string, WorkflowFile> {
    return this.#map ??= this.#build();
  }
  get size(): number {
    return this.#routines().size;
  }
  get(id: string): WorkflowFile | undefined {
    return this.#routines().get(id);
  }
  has(id: string): boolean {
    return this.#routines().has(id);
  }
  forEach(
    fn: (value: WorkflowFile, key: string, map: ReadonlyMap<string, WorkflowFile>) => void,
  ): void {
    this.#routines().forEach((value, key) => fn(value, key, this));
  }
  entries(): MapIterator<[string, WorkflowFile]> {
    return this.#routines().entries();
  }
  keys(): MapIterator<string> {
    return this.#routines().keys();
  }
  values(): MapIterator<WorkflowFile> {
    return this.#routines().values();
  }
  [Symbol.iterator](): MapIterator<[string, WorkflowFile]> {
    return this.entries();
  }
}
