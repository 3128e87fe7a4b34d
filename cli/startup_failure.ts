/**
 * Why `waymark serve` could not open its database or keyring, as the answer its client gets to
 * each request (the JSON-RPC error a failed early server answers with, `tools/server/message_gate.ts`):
 * a waymark error (`code`, a message saying what to do, `retry`, `details.file`) in `data`. A
 * damaged file is `STORAGE_CORRUPTION_DETECTED`, a locked, full, read-only or unreachable
 * database its storage code, and anything else (a folder where a file should be, a database
 * from a newer waymark, a keyring that is not JSON) `STARTUP_FAILED`; only the transient ones
 * can be retried, by starting the server again.
 * @module
 */
import {
  type ErrorCode,
  StorageBusyError,
  StorageCorruptionError,
  StorageUnavailableError,
  type WaymarkError,
} from "../engine/model/result.ts";
import { damagedFileRemedy, storageError } from "../store/storage_errors.ts";
import type { GateFailure } from "../tools/server/message_gate.ts";

/**
 * A waymark error about the server itself: a storage code, or `STARTUP_FAILED` (no tool ran, so
 * it is not one of the tools' error codes).
 */
export type StartupError = Omit<WaymarkError, "code"> & { code: ErrorCode | "STARTUP_FAILED" };

/** The JSON-RPC error code of a server that could not start (implementation-defined range). */
export const STARTUP_FAILED_RPC_CODE = -32000;

/** What to do, by the operating system's error code. */
const ERRNO_ADVICE: Record<string, string> = {
  EISDIR: "it is a folder where waymark expects a file: move it aside",
  ENOTDIR: "a file stands where waymark expects a folder: move it aside",
  ENOENT: "its folder does not exist: create it, or point --home or --db elsewhere",
  EACCES: "waymark may not read or write it: fix its permissions",
  EPERM: "waymark may not read or write it: fix its permissions",
};

/**
 * The waymark error for a failure to open `file` (`undefined`: not known which file); `restart`
 * says how to try again once it is fixed (by default, starting the server again).
 */
export function startupError(
  error: unknown,
  file: string | undefined,
  restart = "then start the server again",
): StartupError {
  const where = file ?? "its data folder";
  const reason = error instanceof Error ? error.message : String(error);
  const details = { file: where, reason };
  const classified = storageError(error, { location: where });
  if (classified instanceof StorageCorruptionError) {
    return {
      code: "STORAGE_CORRUPTION_DETECTED",
      message: `${classified.message}. Run \`waymark doctor\` to see what is damaged; ` +
        `${damagedFileRemedy(where)}, ${restart}.`,
      retry: { kind: "not_retryable" },
      details,
    };
  }
  if (classified instanceof StorageBusyError) {
    return {
      code: "STORAGE_BUSY",
      message:
        `The database ${where} stayed locked by another process past the busy timeout; ${restart}.`,
      retry: { kind: "retryable_after_ms", afterMs: 1_000 },
      details,
    };
  }
  if (classified instanceof StorageUnavailableError) {
    const code = ({
      disk_full: "STORAGE_FULL",
      read_only: "STORAGE_READ_ONLY",
      unreachable: "STORAGE_UNREACHABLE",
    } as const)[classified.fault];
    return {
      code,
      message: `${classified.message}. Fix that, ${restart}.`,
      retry: code === "STORAGE_READ_ONLY"
        ? { kind: "not_retryable" }
        : { kind: "retryable_after_ms", afterMs: 2_000 },
      details,
    };
  }
  const errno = (error as { code?: unknown } | null)?.code;
  const advice = typeof errno === "string" ? ERRNO_ADVICE[errno] : undefined;
  return {
    code: "STARTUP_FAILED",
    message: `waymark could not open ${where}: ${reason}${advice ? ` (${advice})` : ""}. ` +
      `Fix or move aside ${where}, ${restart}.`,
    retry: { kind: "not_retryable" },
    details,
  };
}

/** The answer a failed server gives every request: the error, and that the server is exiting. */
export function startupFailure(error: unknown, file: string | undefined): GateFailure {
  const data = startupError(error, file);
  return {
    code: STARTUP_FAILED_RPC_CODE,
    message: `waymark could not start, so this server exits after answering: ${data.message}`,
    data,
  };
}

/**
 * What a command other than stdio `serve` says when it could not use its store: the words `serve`
 * answers its client with, or `null` for a failure that is no storage fault and opened no file
 * (which the command line reports as it is). `dbFile` is the database, for a fault met after it
 * opened.
 */
export function commandFailure(
  error: unknown,
  at: { openedFile: string | undefined; dbFile: string },
): string | null {
  const classified = storageError(error, { location: at.dbFile });
  const storage = classified instanceof StorageCorruptionError ||
    classified instanceof StorageBusyError || classified instanceof StorageUnavailableError;
  if (!storage && at.openedFile === undefined) return null;
  return startupError(error, at.openedFile ?? at.dbFile, "then run the command again").message;
}
