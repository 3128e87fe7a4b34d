/**
 * Turns driver errors into the engine's storage errors, so a use-case can say what is wrong and
 * whether a retry helps: busy (retry shortly), disk full (retry later), read-only (not
 * retryable), corrupt pages (not retryable; the session is marked).
 * @module
 */
import {
  StorageBusyError,
  StorageCorruptionError,
  StorageUnavailableError,
} from "../engine/mod.ts";

function codeOf(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | null;
  return `${e?.code ?? ""} ${e?.cause?.code ?? ""} ${e?.message ?? ""}`;
}

/** Whether a driver error means the database is locked by another writer. */
export function isBusy(error: unknown): boolean {
  return /SQLITE_BUSY|database is locked/i.test(codeOf(error));
}

/**
 * The engine error a driver error stands for, or the error itself when it is none of the known
 * storage faults. `location` names the database in messages (the session, if any, is named by
 * the store's fault boundary, which knows what the call touched).
 */
export function storageError(
  error: unknown,
  context: { location: string },
): unknown {
  if (error instanceof StorageCorruptionError || error instanceof StorageBusyError) return error;
  const code = codeOf(error);
  if (/SQLITE_BUSY|database is locked/i.test(code)) {
    return new StorageBusyError(String((error as Error).message));
  }
  if (/SQLITE_FULL|disk is full/i.test(code)) {
    return new StorageUnavailableError("disk_full", context.location);
  }
  if (/SQLITE_READONLY|readonly database/i.test(code)) {
    return new StorageUnavailableError("read_only", context.location);
  }
  if (/SQLITE_CORRUPT|SQLITE_NOTADB|malformed/i.test(code)) {
    return new StorageCorruptionError(
      `The database file ${context.location} is damaged (${code.trim().split(" ")[0]})`,
      null,
    );
  }
  return error;
}
