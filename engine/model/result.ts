/**
 * Errors are data: every use-case returns a {@linkcode Result} instead of throwing, and every
 * failure carries a closed `retry` union so callers never parse prose to decide what to do.
 * @module
 */
import { z } from "npm:zod@4.6.7";

/** How (and whether) a caller may retry a failed call. */
export const retrySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("not_retryable") }),
  z.object({ kind: z.literal("retryable_immediate") }),
  z.object({ kind: z.literal("retryable_after_ms"), afterMs: z.number().int().nonnegative() }),
]);
/** How (and whether) a caller may retry a failed call. */
export type Retry = z.infer<typeof retrySchema>;

/** The error codes a waymark call can fail with (published order). */
export const ERROR_CODES = [
  "INVALID_ARGUMENTS",
  "TOKEN_INVALID",
  "TOKEN_SCOPE_MISMATCH",
  "NODE_NOT_FOUND",
  "WORKFLOW_NOT_FOUND",
  "RUN_COMPLETE",
  "STORAGE_BUSY",
  "STORAGE_CORRUPTION_DETECTED",
  "INTERNAL_ERROR",
  "STORAGE_FULL",
  "STORAGE_READ_ONLY",
  "RUN_ABORTED",
  "NO_ACTIVE_WORKFLOW",
  "OUTPUT_INVALID",
  "QUALITY_GATE_FAILED",
  "REVIEWER_FAILED",
  "STEP_NOT_FOUND",
  "STORAGE_UNREACHABLE",
  "INVARIANT_VIOLATION",
  "RUN_NOT_YOURS",
  "DELEGATION_LIMIT_EXCEEDED",
  "REVIEW_NOT_FOUND",
  "CHANGES_UNAVAILABLE",
  "RESTORE_REFUSED",
] as const;
/** An error code. */
export type ErrorCode = typeof ERROR_CODES[number];

/**
 * A structured error: what is wrong (`message`: one or two sentences, with how to recover),
 * whether a retry can help, and extra structured facts (which token, which path, ...).
 */
export const waymarkErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  retry: retrySchema,
  details: z.record(z.string(), z.unknown()).optional(),
});
/** A structured error. */
export type WaymarkError = z.infer<typeof waymarkErrorSchema>;

/** Success or a structured error. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: WaymarkError };

/** Wraps a value as a successful {@linkcode Result}. */
export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** Builds a failed {@linkcode Result}; `retry` defaults to not retryable. */
export function fail<T = never>(
  code: ErrorCode,
  message: string,
  options: { retry?: Retry; details?: Record<string, unknown> } = {},
): Result<T> {
  const error: WaymarkError = { code, message, retry: options.retry ?? { kind: "not_retryable" } };
  if (options.details) error.details = options.details;
  return { ok: false, error };
}

/**
 * Thrown by a store adapter when a stored row fails its integrity check. Use-cases turn it into a
 * `STORAGE_CORRUPTION_DETECTED` error; it is the one exception the engine expects from a port.
 */
export class StorageCorruptionError extends Error {
  /** The session whose data failed the check, when known. */
  readonly sessionId: string | null;
  /** Creates the error for a session (or `null` when the session is unknown). */
  constructor(message: string, sessionId: string | null) {
    super(message);
    this.name = "StorageCorruptionError";
    this.sessionId = sessionId;
  }
}

/**
 * Thrown where the engine or a store meets a state that must never happen (a node whose parent
 * is missing, a pinned snapshot whose content does not hash to its key). Use-cases turn it into
 * a not-retryable `INVARIANT_VIOLATION` error carrying what was seen.
 */
export class InvariantViolationError extends Error {
  /** What was seen: the invariant's name and the values that break it. */
  readonly seen: Record<string, unknown>;
  /** Creates the error; `seen` becomes the error's details. */
  constructor(message: string, seen: Record<string, unknown>) {
    super(message);
    this.name = "InvariantViolationError";
    this.seen = seen;
  }
}

/**
 * Thrown by a store adapter when the database stayed locked past its busy timeout. Use-cases
 * turn it into a retryable `STORAGE_BUSY` error.
 */
export class StorageBusyError extends Error {
  /** Creates the error with the adapter's message. */
  constructor(message: string) {
    super(message);
    this.name = "StorageBusyError";
  }
}

/**
 * Why the database cannot take a write: its disk is full, it may only be read, or its server
 * cannot be reached (the connection was lost and trying again did not bring it back).
 */
export type StorageFault = "disk_full" | "read_only" | "unreachable";

const FAULT_TEXT: Record<StorageFault, string> = {
  disk_full: "The disk is full",
  read_only: "The database is read-only",
  unreachable: "The database server cannot be reached",
};

/**
 * What a store says of one of its faults, in its own terms: the remedy (a file's permissions and
 * the files beside it, or a server's role and data volume) and whether `location` is a `file`
 * or a `server` (the key it has in an error's details).
 */
export interface FaultAdvice {
  /** What is wrong and what to do, in the store's terms; one or two sentences. */
  remedy: string;
  /** What `location` names. */
  place: "file" | "server";
}

/**
 * Thrown by a store adapter when the database refuses a write for a reason that retrying at
 * once cannot fix. Use-cases turn it into `STORAGE_FULL` (retry later), `STORAGE_READ_ONLY`
 * (not retryable) or `STORAGE_UNREACHABLE` (retry later), with the store's own advice.
 */
export class StorageUnavailableError extends Error {
  /** What is wrong. */
  readonly fault: StorageFault;
  /** The database file (or server URL, without a password) concerned. */
  readonly location: string;
  /** The store's remedy, and what `location` names. */
  readonly advice: FaultAdvice;
  /** Creates the error for a fault at a location, with the store's advice. */
  constructor(fault: StorageFault, location: string, advice: FaultAdvice) {
    super(`${FAULT_TEXT[fault]}: ${location}`);
    this.name = "StorageUnavailableError";
    this.fault = fault;
    this.location = location;
    this.advice = advice;
  }
}
