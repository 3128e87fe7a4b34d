/**
 * Storage faults at the store's edge: every read and write turns a driver error into the
 * engine's storage error (busy, full, read-only, damaged) through the dialect. A damaged page
 * also marks the session being touched corrupt (best effort) and stops this store writing: every
 * later `write` is refused with the same error until the process restarts, so waymark never
 * goes on appending to a file the driver called malformed without saying so. Reads go on.
 * @module
 */
import type { Store, StoreWriter } from "../../engine/model/ports.ts";
import { StorageCorruptionError } from "../../engine/model/result.ts";
import type { SqlDialect } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";

/** What the fault boundary needs: the dialect's mapping, where the database is, the connection. */
export interface FaultOptions {
  /** The dialect (its `storageError`). */
  dialect: SqlDialect;
  /** The database file or URL, for messages. */
  location: string;
  /** The connection, for marking a session corrupt outside any transaction. */
  db: Executor;
}

/** Reads whose first argument is a run id: a damaged page there marks that run's session. */
const RUN_KEYED = new Set([
  "getRun",
  "getNode",
  "getAttempt",
  "getNodeAndRun",
  "getAttemptOrNode",
  "getChildren",
  "getAncestorNotes",
  "getPreferredTip",
  "getBranchSteps",
  "getRunListing",
]);

/** Which session a call was about, as far as its arguments and appends said. */
interface Touched {
  runId: string | null;
  sessionId: string | null;
}

type AnyFn = (...args: unknown[]) => Promise<unknown>;

/**
 * `reader` with each method noting the run it touches and, given `fault` (reads outside a
 * transaction), tried again as the dialect says and with failures mapped.
 */
function wrapReads<R extends object>(
  reader: R,
  on: {
    touched: Touched;
    fault?: (error: unknown, touched: Touched) => Promise<never>;
    read?: SqlDialect["read"];
  },
): R {
  const out = { ...reader } as Record<string, unknown>;
  for (const [name, fn] of Object.entries(reader)) {
    if (typeof fn !== "function") continue;
    out[name] = async (...args: unknown[]) => {
      const touched = on.fault ? { runId: null, sessionId: null } : on.touched;
      if (RUN_KEYED.has(name) && typeof args[0] === "string") touched.runId = args[0];
      try {
        const call = () => (fn as AnyFn)(...args);
        return await (on.read ? on.read(call) : call());
      } catch (error) {
        if (on.fault) return await on.fault(error, touched);
        throw error;
      }
    };
  }
  return out as R;
}

/** Marks the session of a damaged read or write corrupt; failures are ignored (best effort). */
async function markCorrupt(db: Executor, touched: Touched): Promise<string | null> {
  try {
    let sessionId = touched.sessionId;
    if (!sessionId && touched.runId) {
      const row = await db.selectFrom("runs").select("session_id")
        .where("run_id", "=", touched.runId).executeTakeFirst();
      sessionId = row?.session_id ?? null;
    }
    if (sessionId) {
      await db.updateTable("sessions").set({ health: "corrupt" })
        .where("session_id", "=", sessionId).execute();
    }
    return sessionId;
  } catch {
    return touched.sessionId;
  }
}

/** `store` with storage faults mapped, damaged pages recorded, and writes stopped after one. */
export function withStorageFaults<S extends Store>(store: S, options: FaultOptions): S {
  let damaged: StorageCorruptionError | null = null;
  const fault = async (error: unknown, touched: Touched): Promise<never> => {
    const mapped = options.dialect.storageError(error, { location: options.location });
    if (mapped instanceof StorageCorruptionError && mapped !== error) {
      // The driver found a damaged page (a row-level check keeps its own error).
      const sessionId = await markCorrupt(options.db, touched);
      damaged = new StorageCorruptionError(
        `${mapped.message}; this waymark process has stopped writing to it until it restarts`,
        null,
      );
      throw new StorageCorruptionError(mapped.message, sessionId);
    }
    throw mapped;
  };
  /** Runs a write whose transaction's reads and appends go through `wrap`, faults mapped. */
  const guarded = async <T>(
    run: (wrap: (tx: StoreWriter) => StoreWriter) => Promise<T>,
    touched: Touched = { runId: null, sessionId: null },
  ): Promise<T> => {
    if (damaged) throw damaged;
    try {
      return await run((tx) => ({
        ...wrapReads(tx, { touched }),
        append: (events) => {
          touched.sessionId ??= events[0]?.sessionId ?? null;
          return tx.append(events);
        },
      }));
    } catch (error) {
      return await fault(error, touched);
    }
  };
  const write: Store["write"] = (fn) => guarded((wrap) => store.write((tx) => fn(wrap(tx))));
  const writeAttempt = store.writeAttempt;
  const attempts: Pick<Store, "writeAttempt"> = writeAttempt
    ? {
      writeAttempt: (key, fn) =>
        guarded(
          (wrap) => writeAttempt(key, (tx, found) => fn(wrap(tx), found)),
          { runId: key.runId, sessionId: null },
        ),
    }
    : {};
  const reads = wrapReads(store, {
    touched: { runId: null, sessionId: null },
    fault,
    read: (fn) => options.dialect.read(fn),
  });
  return { ...reads, write, ...attempts };
}
