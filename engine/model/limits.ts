/**
 * What an agent may store in one call, checked before anything is written: the size and depth
 * of `context`, the size of notes, and the number and size of artifacts. Sizes are UTF-8 bytes
 * of the RFC 8785 canonical JSON, the same form the engine hashes and stores. Both tool profiles
 * check through these functions (DeepWork's `inputs` are context, its `notes` notes, its
 * `outputs` a recorded value), so a cap and its refusal are the same whichever profile is served.
 * @module
 */
import { canonicalJson } from "../common/hash.ts";
import { fail, type Result } from "./result.ts";

/** The caps, one place (documented in docs/limits.md). */
export const LIMITS = {
  /** `context` passed to one call, as canonical JSON. */
  contextBytes: 256 * 1024,
  /** Nesting depth of any JSON value an agent passes (context, artifacts). */
  depth: 64,
  /** `output.notesMarkdown`. */
  notesBytes: 64 * 1024,
  /** One artifact, as canonical JSON. */
  artifactBytes: 64 * 1024,
  /** Artifacts in one output. */
  artifactCount: 32,
  /** A session's title or a run's goal, in characters: the longest goal any profile accepts. */
  titleChars: 2000,
  /** A goal, session title or search query passed to the default profile, in characters. */
  goalChars: 500,
  /** Why a run is abandoned, or why a failed quality review is overridden, in characters. */
  explanationChars: 8000,
  /** A name or id a DeepWork call passes (job, workflow, step, instance, session, agent). */
  nameChars: 200,
  /**
   * A token argument, in characters: well above the longest token minted (under 60), so
   * anything longer is refused before it is decoded.
   */
  tokenChars: 200,
  /** Delegations of one parallel step (each opens a child run). */
  delegations: 16,
  /** Bytes of one child's notes and artifacts handed to a synthesis step. */
  delegationDigestBytes: 8 * 1024,
  /** Parallel steps nested inside child runs opened at once (a child whose first step delegates). */
  delegationDepth: 3,
  /**
   * Runs one call may open at a parallel step, nested children included (a child whose first
   * step delegates opens its own at once): a wider fan-out is refused before anything is written.
   */
  runsOpenedAtOnce: 64,
  /** File paths named in one DeepWork `finished_step`. */
  outputFiles: 1000,
  /**
   * Bytes of output files hashed in one DeepWork `finished_step`; a file that would go past it
   * is recorded by size and modification time instead (the answer lists it).
   */
  hashedBytes: 512 * 1024 * 1024,
  /** Reference files inlined into one review task; the rest are named as left out. */
  referenceFiles: 20,
  /** Bytes of reference files inlined into one review task; a file past it is cut, with a marker. */
  referenceBytes: 256 * 1024,
  /** Bytes of one file read to check it against a named schema's JSON Schema. */
  schemaCheckBytes: 1024 * 1024,
} as const;

const encoder = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

/**
 * The nesting depth of a JSON value (a scalar is 0, `{}` is 1), counted without recursion so a
 * hostile value cannot overflow the stack; stops counting once past `max`.
 */
export function jsonDepth(value: unknown, max: number = LIMITS.depth): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    const here = depth + 1;
    deepest = Math.max(deepest, here);
    if (deepest > max) return deepest;
    for (const child of Object.values(item)) stack.push([child, here]);
  }
  return deepest;
}

function tooDeep(what: string, depth: number): Result<never> {
  return fail(
    "INVALID_ARGUMENTS",
    `${what} is nested more than ${LIMITS.depth} levels deep; flatten it (nothing was recorded).`,
    { details: { reason: "too_deep", field: what, maxDepth: LIMITS.depth, depth } },
  );
}

/** Checks a call's `context` against the depth and size caps. */
export function checkContext(context: unknown): Result<void> {
  if (context === undefined) return { ok: true, value: undefined };
  const depth = jsonDepth(context);
  if (depth > LIMITS.depth) {
    return fail(
      "INVALID_ARGUMENTS",
      `context is nested more than ${LIMITS.depth} levels deep; flatten it (nothing was recorded).`,
      {
        details: {
          reason: "context_budget_exceeded",
          maxDepth: LIMITS.depth,
          depth,
        },
      },
    );
  }
  const bytes = utf8Bytes(canonicalJson(context));
  if (bytes <= LIMITS.contextBytes) return { ok: true, value: undefined };
  return fail(
    "INVALID_ARGUMENTS",
    `context is ${bytes} bytes as canonical JSON; the limit is ${LIMITS.contextBytes}. Keep large material in files and pass their paths (nothing was recorded).`,
    { details: { reason: "context_budget_exceeded", bytes, maxBytes: LIMITS.contextBytes } },
  );
}

/** Checks notes (`field` names them as the caller sent them) against the notes cap. */
export function checkNotes(field: string, notes: string | undefined): Result<void> {
  if (notes !== undefined && utf8Bytes(notes) > LIMITS.notesBytes) {
    return capExceeded(field, utf8Bytes(notes), LIMITS.notesBytes);
  }
  return { ok: true, value: undefined };
}

/** Checks one recorded value (an artifact; DeepWork's `outputs`) against the depth and size caps. */
export function checkRecordedValue(field: string, value: unknown): Result<void> {
  const depth = jsonDepth(value);
  if (depth > LIMITS.depth) return tooDeep(field, depth);
  const bytes = utf8Bytes(canonicalJson(value));
  if (bytes > LIMITS.artifactBytes) return capExceeded(field, bytes, LIMITS.artifactBytes);
  return { ok: true, value: undefined };
}

/** Checks a step output's notes and artifacts against their caps. */
export function checkOutput(
  output: { notesMarkdown?: string; artifacts?: readonly unknown[] } | undefined,
): Result<void> {
  const notes = checkNotes("output.notesMarkdown", output?.notesMarkdown);
  if (!notes.ok) return notes;
  const artifacts = output?.artifacts ?? [];
  if (artifacts.length > LIMITS.artifactCount) {
    return fail(
      "INVALID_ARGUMENTS",
      `output.artifacts has ${artifacts.length} items; the limit is ${LIMITS.artifactCount}. Merge them or record the rest with checkpoint_workflow (nothing was recorded).`,
      {
        details: {
          reason: "too_many_artifacts",
          count: artifacts.length,
          max: LIMITS.artifactCount,
        },
      },
    );
  }
  for (const [i, artifact] of artifacts.entries()) {
    const checked = checkRecordedValue(`output.artifacts[${i}]`, artifact);
    if (!checked.ok) return checked;
  }
  return { ok: true, value: undefined };
}

function capExceeded(field: string, bytes: number, max: number): Result<never> {
  return fail(
    "INVALID_ARGUMENTS",
    `${field} is ${bytes} bytes; the limit is ${max}. Shorten it, or keep the full text in a file and record its path (nothing was recorded).`,
    { details: { reason: "too_large", field, bytes, maxBytes: max } },
  );
}
