/**
 * What an agent may store in one call, checked before anything is written: the size and depth
 * of `context`, the size of notes, and the number and size of artifacts. Sizes are UTF-8 bytes
 * of the RFC 8785 canonical JSON, the same form the engine hashes and stores.
 * @module
 */
import { canonicalJson } from "./hash.ts";
import { fail, type Result } from "./result.ts";

/** The caps, one place (documented in the README). */
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

/** Checks a step output's notes and artifacts against their caps. */
export function checkOutput(
  output: { notesMarkdown?: string; artifacts?: readonly unknown[] } | undefined,
): Result<void> {
  const notes = output?.notesMarkdown;
  if (notes !== undefined && utf8Bytes(notes) > LIMITS.notesBytes) {
    return capExceeded("output.notesMarkdown", utf8Bytes(notes), LIMITS.notesBytes);
  }
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
    const depth = jsonDepth(artifact);
    if (depth > LIMITS.depth) return tooDeep(`output.artifacts[${i}]`, depth);
    const bytes = utf8Bytes(canonicalJson(artifact));
    if (bytes > LIMITS.artifactBytes) {
      return capExceeded(`output.artifacts[${i}]`, bytes, LIMITS.artifactBytes);
    }
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
