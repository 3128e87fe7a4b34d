/**
 * The boundary of every use-case: adapter failures (a corrupt or busy store, a broken invariant,
 * anything thrown) become structured errors, so nothing throws across it.
 * @module
 */
import { sessionLabel } from "../ids.ts";
import {
  fail,
  InvariantViolationError,
  type Result,
  StorageBusyError,
  StorageCorruptionError,
} from "../result.ts";

/** Runs a use-case body and returns what it throws as a structured error. */
export async function guard<T>(body: () => Promise<Result<T>>): Promise<Result<T>> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof StorageCorruptionError) {
      return fail(
        "STORAGE_CORRUPTION_DETECTED",
        `${error.message}. Read-only tools and the viewer still work; start a new run to carry on.`,
        {
          details: error.sessionId ? { sessionId: sessionLabel(error.sessionId) } : undefined,
        },
      );
    }
    if (error instanceof InvariantViolationError) {
      return fail(
        "INVARIANT_VIOLATION",
        `${error.message}. This is a bug or a damaged database, not something a retry fixes; nothing was recorded by this call.`,
        { details: error.seen },
      );
    }
    if (error instanceof StorageBusyError) {
      return fail(
        "STORAGE_BUSY",
        "The database is busy with another waymark process; retry shortly.",
        {
          retry: { kind: "retryable_after_ms", afterMs: 250 },
        },
      );
    }
    return fail(
      "INTERNAL_ERROR",
      `waymark failed unexpectedly: ${
        error instanceof Error ? error.message : String(error)
      }. Nothing was recorded by this call; retrying is safe.`,
      {
        retry: { kind: "retryable_immediate" },
      },
    );
  }
}
