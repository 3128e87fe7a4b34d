/**
 * Turns driver errors into the engine's storage errors, so a use-case can say what is wrong and
 * whether a retry helps: busy (retry shortly), disk full (retry later), read-only (not
 * retryable), corrupt pages (not retryable; the session is marked).
 * @module
 */
import {
  type FaultAdvice,
  StorageBusyError,
  StorageCorruptionError,
  type StorageFault,
  StorageUnavailableError,
} from "../engine/model/result.ts";

/** What a libSQL file's faults call for (its PostgreSQL sibling is in `postgres/errors.ts`). */
const ADVICE: Record<StorageFault, (location: string) => string> = {
  disk_full: (at) =>
    `The disk holding the database ${at} is full. Free space on that disk (or point WAYMARK_HOME elsewhere), then retry.`,
  read_only: (at) =>
    `The database ${at} is read-only: waymark needs write permission on that file and on its folder (for the -wal and -shm files beside it). Fix the permission and restart waymark.`,
  unreachable: (at) => `The database ${at} cannot be reached (the connection was lost).`,
};

/** The libSQL file's fault, with its advice. */
function unavailable(fault: StorageFault, location: string): StorageUnavailableError {
  const advice: FaultAdvice = { remedy: ADVICE[fault](location), place: "file" };
  return new StorageUnavailableError(fault, location, advice);
}

function codeOf(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | null;
  return `${e?.code ?? ""} ${e?.cause?.code ?? ""} ${e?.message ?? ""}`;
}

/**
 * What to do with a damaged database file, in the words every command uses (`serve`, the other
 * commands, `doctor`'s fix): restore the latest backup, or move the file aside.
 */
export function damagedFileRemedy(file: string): string {
  return `restore ${file} from your latest backup (a file \`waymark backup FILE\` wrote: stop the servers and copy it over ${file}) or move ${file} aside (waymark then starts with an empty database)`;
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
    return unavailable("disk_full", context.location);
  }
  if (/SQLITE_READONLY|readonly database/i.test(code)) {
    return unavailable("read_only", context.location);
  }
  if (/SQLITE_CORRUPT|SQLITE_NOTADB|malformed/i.test(code)) {
    return new StorageCorruptionError(
      `The database file ${context.location} is damaged (${code.trim().split(" ")[0]})`,
      null,
    );
  }
  return error;
}
