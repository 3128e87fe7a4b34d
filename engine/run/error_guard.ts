/**
 * The boundary of every use-case: adapter failures (a corrupt, busy, full or read-only store,
 * an unreachable server, a broken invariant, anything thrown) become structured errors, so nothing
 * throws across it. Each says whether a retry can help: a busy database soon, a full disk once
 * space is freed, an unreachable server once it is back, a read-only or damaged file or a broken
 * invariant never.
 * @module
 */
import { sessionLabel } from "../model/ids.ts";
import {
  fail,
  InvariantViolationError,
  type Result,
  StorageBusyError,
  StorageCorruptionError,
  StorageUnavailableError,
  type WaymarkError,
} from "../model/result.ts";

/** How long a client should wait before retrying on a full disk. */
const DISK_FULL_RETRY_MS = 30_000;
/** How long a client should wait before retrying when the database server is unreachable. */
const UNREACHABLE_RETRY_MS = 2_000;

/** Runs a use-case body and returns what it throws as a structured error. */
export async function guard<T>(body: () => Promise<Result<T>>): Promise<Result<T>> {
  try {
    return await body();
  } catch (error) {
    return storageFailure(error) ?? invariantFailure(error) ??
      { ok: false, error: unexpectedError(error) };
  }
}

/**
 * The error for something thrown that nothing classified: a fault in waymark's own code, which
 * the same call meets again, so it is never offered as retryable (transient faults, a busy or
 * unreachable store, are classified above and say when to retry).
 */
export function unexpectedError(error: unknown): WaymarkError {
  const said = error instanceof Error ? error.message : String(error);
  return {
    code: "INTERNAL_ERROR",
    message:
      `waymark failed unexpectedly (${said}). Nothing was recorded by this call, and calling again the same way most likely fails the same way: do not retry it as is. Run \`waymark doctor\`, and report it with the server's log (stderr).`,
    retry: { kind: "not_retryable" },
  };
}

/** The structured error for a storage fault, or `null` when `error` is none. */
function storageFailure(error: unknown): Result<never> | null {
  if (error instanceof StorageCorruptionError) {
    return fail(
      "STORAGE_CORRUPTION_DETECTED",
      `${error.message}. Read-only tools and the viewer still work; run \`waymark doctor\` to look further, and start a new run to carry on.`,
      {
        details: error.sessionId ? { sessionId: sessionLabel(error.sessionId) } : undefined,
      },
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
  if (!(error instanceof StorageUnavailableError)) return null;
  // the store says what is wrong in its own terms; the retry is the engine's
  const details = { [error.advice.place]: error.location, fault: error.fault };
  const remedy = error.advice.remedy;
  if (error.fault === "unreachable") {
    return fail(
      "STORAGE_UNREACHABLE",
      `${remedy} Retry once it is back: an ack or checkpoint that did reach it replays its recorded answer, and one that did not is recorded then.`,
      { retry: { kind: "retryable_after_ms", afterMs: UNREACHABLE_RETRY_MS }, details },
    );
  }
  if (error.fault === "disk_full") {
    return fail("STORAGE_FULL", `${remedy} Nothing was recorded by this call.`, {
      retry: { kind: "retryable_after_ms", afterMs: DISK_FULL_RETRY_MS },
      details,
    });
  }
  return fail("STORAGE_READ_ONLY", `${remedy} Nothing was recorded by this call.`, { details });
}

/** The structured error for a broken invariant, carrying what was seen, or `null`. */
function invariantFailure(error: unknown): Result<never> | null {
  if (!(error instanceof InvariantViolationError)) return null;
  return fail(
    "INVARIANT_VIOLATION",
    `${error.message}. This is a bug or a damaged database, not something a retry fixes; nothing was recorded by this call.`,
    { details: error.seen },
  );
}
