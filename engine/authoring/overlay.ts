/**
 * Overlays: a workflow made by layering changes over another one (insert steps before or after a
 * step, replace one, remove one, append text to a prompt), resolved into an ordinary workflow
 * file of its own id and compiled and hashed as any other. An overlay of an overlay layers over
 * the combined result; a cycle, a missing base or step, or a malformed file is a load error with
 * `file:line`, and affects nothing else. Pure.
 * @module
 */
import {
  findNodeAtLocation,
  parse,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "npm:jsonc-parser@3.3.1";
import { workflowHash } from "../workflow/compiled.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { compileWorkflow } from "../workflow/compile.ts";
import {
  type OverlayChange,
  type OverlayFile,
  overlayFileSchema,
  type OverlayLayers,
} from "../workflow/overlay_schema.ts";
import type { WorkflowIssue, WorkflowLoadError } from "../workflow/parse.ts";
import type { WorkflowFile, WorkflowStep } from "../workflow/schema.ts";

/** An overlay file, parsed, with the line of each change. */
export interface ParsedOverlay {
  /** Its path. */
  file: string;
  /** The overlay. */
  overlay: OverlayFile;
  /** The line (from 1) of each change, and of the base, for messages. */
  lines: { base: number; changes: number[] };
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split("\n").length;
}

/** Parses an overlay file's text: JSONC, then the schema; errors carry `file:line`. */
export function parseOverlayText(
  text: string,
  file: string,
): { ok: true; parsed: ParsedOverlay } | { ok: false; error: WorkflowLoadError } {
  const errors: ParseError[] = [];
  const data: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0]!;
    return {
      ok: false,
      error: {
        file: `${file}:${lineOf(text, e.offset)}`,
        issues: [{ path: "", message: `JSON syntax error (${printParseErrorCode(e.error)})` }],
      },
    };
  }
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const at = (path: (string | number)[]) => {
    const node = tree && findNodeAtLocation(tree, path);
    return node ? lineOf(text, node.offset) : 1;
  };
  const result = overlayFileSchema.safeParse(data);
  if (!result.success) {
    const first = result.error.issues[0]!;
    return {
      ok: false,
      error: {
        file: `${file}:${at(first.path as (string | number)[])}`,
        issues: result.error.issues.map((i) => ({
          path: i.path.map(String).join("."),
          message: `${i.message} (line ${at(i.path as (string | number)[])})`,
        })),
      },
    };
  }
  const overlay = result.data;
  return {
    ok: true,
    parsed: {
      file,
      overlay,
      lines: {
        base: at(["overlay", "base"]),
        changes: overlay.overlay.changes.map((_, i) => at(["overlay", "changes", i])),
      },
    },
  };
}

/** A step's place: the list it is in and its index there (loop bodies written inline too). */
function locate(steps: WorkflowStep[], id: string): { list: WorkflowStep[]; index: number } | null {
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    if (s.id === id) return { list: steps, index: i };
    if (Array.isArray(s.body)) {
      const inner = locate(s.body, id);
      if (inner) return inner;
    }
  }
  return null;
}

function stepIds(steps: readonly WorkflowStep[]): string[] {
  return steps.flatMap((s) => [s.id, ...(Array.isArray(s.body) ? stepIds(s.body) : [])]);
}

function targetOf(change: OverlayChange): string {
  if ("insertBefore" in change) return change.insertBefore;
  if ("insertAfter" in change) return change.insertAfter;
  if ("replace" in change) return change.replace;
  if ("remove" in change) return change.remove;
  return change.appendPrompt;
}

/** Applies one change in place; a problem in words, or `null`. */
function applyChange(
  steps: WorkflowStep[],
  change: OverlayChange,
  at: { index: number; by: string; origins: Record<string, string> },
): string | null {
  const target = targetOf(change);
  const place = locate(steps, target);
  if (!place) return `no step \`${target}\` in the base; its steps: ${stepIds(steps).join(", ")}`;
  const { list, index } = place;
  const mark = (added: readonly WorkflowStep[]) => {
    for (const id of stepIds(added)) at.origins[id] = at.by;
  };
  if ("insertBefore" in change || "insertAfter" in change) {
    list.splice("insertAfter" in change ? index + 1 : index, 0, ...structuredClone(change.steps));
    mark(change.steps);
  } else if ("replace" in change) {
    for (const id of stepIds([list[index]!])) delete at.origins[id];
    list.splice(index, 1, structuredClone(change.step));
    mark([change.step]);
  } else if ("remove" in change) {
    for (const id of stepIds([list[index]!])) delete at.origins[id];
    list.splice(index, 1);
  } else {
    const step = list[index]!;
    if (step.prompt === undefined && step.promptBlocks === undefined) {
      return `step \`${target}\` has no prompt to append to (a loop or a templateCall)`;
    }
    const fragments = [...(step.promptFragments ?? [])];
    fragments.push({ id: `overlay-${at.index + 1}`, text: change.text });
    list[index] = { ...step, promptFragments: fragments };
    at.origins[target] = `${at.origins[target] ?? "?"}, prompt appended by ${at.by}`;
  }
  return null;
}

/** The base an overlay is applied to: its file, hash, and its own layers when it is an overlay. */
export interface OverlayBase {
  /** The base workflow as a file (the combined file, for an overlay). */
  file: WorkflowFile;
  /** Its workflowHash. */
  hash: string;
  /** Where it was loaded from. */
  path: string;
  /** Its layers, when it is itself an overlay. */
  layers?: OverlayLayers;
}

/** Applies an overlay to its base: the combined file and where each step came from. */
export function applyOverlay(
  base: OverlayBase,
  parsed: ParsedOverlay,
): { ok: true; file: WorkflowFile; layers: OverlayLayers } | {
  ok: false;
  error: WorkflowLoadError;
} {
  const { overlay } = parsed;
  const steps = structuredClone(base.file.steps);
  const origins: Record<string, string> = {};
  for (const id of stepIds(steps)) origins[id] = base.layers?.origins[id] ?? base.file.id;
  const issues: WorkflowIssue[] = [];
  let firstLine = 0;
  overlay.overlay.changes.forEach((change, index) => {
    const problem = applyChange(steps, change, { index, by: overlay.id, origins });
    if (problem === null) return;
    const line = parsed.lines.changes[index]!;
    firstLine ||= line;
    issues.push({ path: `overlay.changes[${index}]`, message: `${problem} (line ${line})` });
  });
  if (issues.length > 0) {
    return { ok: false, error: { file: `${parsed.file}:${firstLine}`, issues } };
  }
  const file: WorkflowFile = {
    ...base.file,
    id: overlay.id,
    name: overlay.name ?? base.file.name,
    description: overlay.description ?? base.file.description,
    version: overlay.version ?? base.file.version,
    steps,
  };
  delete file.$schema;
  const written = overlay.overlay.baseHash;
  return {
    ok: true,
    file,
    layers: {
      layers: [
        ...(base.layers?.layers ?? [{ workflowId: base.file.id, file: base.path }]),
        { workflowId: overlay.id, file: parsed.file },
      ],
      origins,
      baseHash: base.hash,
      ...(written !== undefined && written !== base.hash ? { writtenAgainst: written } : {}),
    },
  };
}

/** An overlay resolved: the combined workflow compiled and hashed, or why it did not load. */
export type ResolvedOverlay =
  | {
    ok: true;
    file: WorkflowFile;
    compiled: CompiledWorkflow;
    hash: string;
    layers: OverlayLayers;
    path: string;
  }
  | { ok: false; error: WorkflowLoadError };

function chainProblem(
  parsed: ParsedOverlay,
  byId: ReadonlyMap<string, ParsedOverlay>,
): string | null {
  const seen = [parsed.overlay.id];
  for (let at = byId.get(parsed.overlay.overlay.base); at; at = byId.get(at.overlay.overlay.base)) {
    if (seen.includes(at.overlay.id)) {
      return `overlays make a cycle: ${[...seen, at.overlay.id].join(" → ")}`;
    }
    seen.push(at.overlay.id);
  }
  return null;
}

/**
 * Resolves overlays in dependency order over the bases `baseOf` finds (workflows that are not
 * overlays), compiling each combined file with `routines`. An overlay whose id another overlay
 * already took is left out (reported), as a file whose id another file defined.
 */
export async function resolveOverlays(
  overlays: readonly ParsedOverlay[],
  options: {
    baseOf: (id: string) => OverlayBase | null;
    routines: ReadonlyMap<string, WorkflowFile>;
  },
): Promise<ResolvedOverlay[]> {
  const byId = new Map<string, ParsedOverlay>();
  for (const o of overlays) if (!byId.has(o.overlay.id)) byId.set(o.overlay.id, o);
  const done = new Map<string, ResolvedOverlay>();
  const fail = (p: ParsedOverlay, line: number, path: string, message: string) => {
    const r: ResolvedOverlay = {
      ok: false,
      error: { file: `${p.file}:${line}`, issues: [{ path, message }] },
    };
    done.set(p.overlay.id, r);
    return r;
  };
  const resolve = async (p: ParsedOverlay): Promise<ResolvedOverlay> => {
    const kept = done.get(p.overlay.id);
    if (kept) return kept;
    const cycle = chainProblem(p, byId);
    if (cycle) return fail(p, p.lines.base, "overlay.base", cycle);
    const baseId = p.overlay.overlay.base;
    const under = byId.get(baseId);
    let base: OverlayBase | null;
    if (under) {
      const r = await resolve(under);
      base = r.ok ? { file: r.file, hash: r.hash, path: r.path, layers: r.layers } : null;
      if (!base) {
        return fail(p, p.lines.base, "overlay.base", `its base \`${baseId}\` did not load`);
      }
    } else base = options.baseOf(baseId);
    if (!base) {
      return fail(p, p.lines.base, "overlay.base", `no workflow \`${baseId}\` to layer over`);
    }
    const applied = applyOverlay(base, p);
    if (!applied.ok) {
      const r: ResolvedOverlay = applied;
      done.set(p.overlay.id, r);
      return r;
    }
    const compiled = compileWorkflow(applied.file, { routines: options.routines });
    if (!compiled.ok) {
      const r: ResolvedOverlay = { ok: false, error: { file: p.file, issues: compiled.issues } };
      done.set(p.overlay.id, r);
      return r;
    }
    const r: ResolvedOverlay = {
      ok: true,
      file: applied.file,
      compiled: compiled.compiled,
      hash: await workflowHash(compiled.compiled),
      layers: applied.layers,
      path: p.file,
    };
    done.set(p.overlay.id, r);
    return r;
  };
  const out: ResolvedOverlay[] = [];
  for (const o of overlays) {
    if (byId.get(o.overlay.id) !== o) {
      out.push({
        ok: false,
        error: {
          file: `${o.file}:1`,
          issues: [{
            path: "id",
            message: `\`${o.overlay.id}\` is already defined by ${
              byId.get(o.overlay.id)!.file
            }; rename one of them`,
          }],
        },
      });
    } else out.push(await resolve(o));
  }
  return out;
}
