/**
 * PostgreSQL's faults as the engine's storage errors, and when a call is tried again. Writes run
 * in `SERIALIZABLE` transactions: a transaction the server refused for another's sake (a
 * serialization failure, a deadlock, a key another transaction just took) or one whose
 * connection was lost before its commit left nothing behind, so it runs again from the start.
 * A connection lost during the commit may or may not have committed: that is reported as
 * unreachable (retryable), never retried blindly. Reads are always safe to try again.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import {
  StorageBusyError,
  StorageCorruptionError,
  type StorageFault,
  StorageUnavailableError,
} from "../../engine/model/result.ts";
import type { Executor } from "../sql/graph_sql.ts";
import type { Database } from "../sql/database.ts";
import { BeforeCommit } from "./connection.ts";

/** SQLSTATEs of a transaction refused for another's sake: trying again may succeed. */
const CONFLICT = new Set(["40001", "40P01", "55P03"]);
/** A unique key taken by a transaction that committed meanwhile (its retry reads the row). */
const KEY_TAKEN = "23505";
/** Tries again after a taken key at most this often (a key that stays taken is a bug). */
const KEY_TAKEN_TRIES = 3;
/** Node's and the server's codes of a connection that is gone or cannot be made. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOENT",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "ERR_STREAM_WRITE_AFTER_END",
  "ERR_STREAM_DESTROYED",
]);
const CONNECTION_TEXT =
  /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed|connect ECONNREFUSED|write after end|Cannot call write after a stream was destroyed/i;

function codeOf(error: unknown): string {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  return String(e?.code ?? e?.cause?.code ?? "");
}

/** Whether a driver error is a transaction refused for another's sake (see `CONFLICT`). */
export function isConflict(error: unknown): boolean {
  return error instanceof StorageBusyError || CONFLICT.has(codeOf(error));
}

/** Whether a driver error means the connection to the server is gone or cannot be made. */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  return CONNECTION_CODES.has(code) || code.startsWith("08") ||
    CONNECTION_TEXT.test(String((error as Error | null)?.message ?? ""));
}

/** What a PostgreSQL server's faults call for (the libSQL file's sibling: `storage_errors.ts`). */
const ADVICE: Record<StorageFault, (server: string, code: string) => string> = {
  disk_full: (server, code) =>
    `The PostgreSQL server ${server} has no disk space left (SQLSTATE ${code}). Free space on the server's data volume, then retry.`,
  read_only: (server, code) =>
    `The PostgreSQL database ${server} refuses writes (SQLSTATE ${code}): it is read-only (a standby, or default_transaction_read_only) or waymark's role lacks the privilege. Point --db at a primary, or grant the role write access, then restart waymark.`,
  unreachable: (server) =>
    `The database server ${server} cannot be reached (the connection was lost).`,
};

function unavailable(fault: StorageFault, server: string, code: string): StorageUnavailableError {
  return new StorageUnavailableError(fault, server, {
    remedy: ADVICE[fault](server, code),
    place: "server",
  });
}

/**
 * The engine error a driver error stands for, or the error itself when it is none of the known
 * storage faults; `location` names the server (without a password) in messages.
 */
export function storageError(error: unknown, context: { location: string }): unknown {
  if (
    error instanceof StorageCorruptionError || error instanceof StorageBusyError ||
    error instanceof StorageUnavailableError
  ) return error;
  const code = codeOf(error);
  const message = String((error as Error | null)?.message ?? error);
  if (CONFLICT.has(code)) return new StorageBusyError(message);
  if (isConnectionLost(error)) return unavailable("unreachable", context.location, code);
  if (code === "53100") return unavailable("disk_full", context.location, code);
  if (code === "25006" || code === "42501") {
    return unavailable("read_only", context.location, code);
  }
  if (code === "XX001" || code === "XX002") {
    return new StorageCorruptionError(
      `The database ${context.location} is damaged (${code})`,
      null,
    );
  }
  return error;
}

/** How long and how often a refused call is tried again. */
export interface RetryPolicy {
  /** Give up on conflicts after this many ms. */
  conflictMs: number;
  /** Tries after a lost connection, the first included. */
  connectionTries: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A short, growing, jittered wait before try `n` (from 1). */
function backoff(n: number): number {
  return Math.min(200, 5 * 2 ** n) * (0.5 + Math.random());
}

/** Marks an error that happened while the commit was on its way. */
class DuringCommit extends Error {
  constructor(readonly original: unknown) {
    super("commit failed");
  }
}

async function once<T>(db: Kysely<Database>, fn: (tx: Executor) => Promise<T>): Promise<T> {
  let committing = false;
  try {
    return await db.transaction().execute(async (tx) => {
      const value = await fn(tx);
      committing = true;
      return value;
    });
  } catch (error) {
    if (error instanceof BeforeCommit) throw error.original;
    throw committing ? new DuringCommit(error) : error;
  }
}

/**
 * Runs `fn` in a transaction (`SERIALIZABLE`, the driver's default here), again from the start
 * while the server refuses it for another's sake or the connection was lost before the commit.
 */
export async function transact<T>(
  db: Kysely<Database>,
  fn: (tx: Executor) => Promise<T>,
  policy: RetryPolicy & { location: string },
): Promise<T> {
  const deadline = Date.now() + policy.conflictMs;
  let lost = 0;
  let taken = 0;
  for (let n = 1;; n++) {
    try {
      return await once(db, fn);
    } catch (caught) {
      const during = caught instanceof DuringCommit;
      const error = during ? caught.original : caught;
      // a conflict reported at the commit still means nothing was committed
      const conflict = isConflict(error) ||
        (!during && codeOf(error) === KEY_TAKEN && ++taken <= KEY_TAKEN_TRIES);
      if (conflict && Date.now() < deadline) {
        await pause(backoff(n));
        continue;
      }
      if (isConnectionLost(error) && !during && ++lost < policy.connectionTries) {
        await pause(100 * lost);
        continue;
      }
      throw error;
    }
  }
}

/** Runs a read, again (after a pause) when the connection was lost, up to `tries` times. */
export async function read<T>(fn: () => Promise<T>, tries: number): Promise<T> {
  for (let n = 1;; n++) {
    try {
      return await fn();
    } catch (error) {
      if (!isConnectionLost(error) || n >= tries) throw error;
      await pause(100 * n);
    }
  }
}
