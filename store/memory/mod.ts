/**
 * The store port in memory, for tests of engine behaviour (forks, recaps, blocked attempts)
 * that need no database: the same events make the same projections as the libSQL store, and
 * the store contract suite (`tests/store/store_contract_test.ts`) holds both to the same
 * assertions. Nothing outlives the process.
 *
 * Writers queue one after the other; a write works on a copy of the tables and swaps it in only
 * when its function returns, so what a failed write appended is never seen. Reads outside a
 * write see the last committed tables. What differs from libSQL: search relevance is a term
 * count, not bm25 (see `text.ts`), and nothing here can fail a digest check, so a session only
 * turns corrupt through {@linkcode MemoryStore.markCorrupt}.
 * @module
 */
import type { Store, StoreWriter } from "../../engine/mod.ts";
import { appendEvents } from "./project.ts";
import { reader } from "./read.ts";
import { copyTables, countRows, emptyTables, type TableCounts, type Tables } from "./tables.ts";

export { ConstraintError } from "./project.ts";
export type { TableCounts } from "./tables.ts";

/** Options for {@linkcode openMemoryStore}. */
export interface MemoryStoreOptions {
  /** Current time, for event timestamps (default: the system clock). */
  now?: () => string;
}

/** The in-memory store: the port plus the diagnostics the libSQL store offers tests. */
export interface MemoryStore extends Store {
  /** Row counts under the libSQL store's table names. */
  counts(): Promise<TableCounts>;
  /** Marks a session corrupt, as the libSQL store does when a stored row fails its check. */
  markCorrupt(sessionId: string): Promise<void>;
  /** Drops everything; the store is empty afterwards. */
  close(): Promise<void>;
}

/** Opens an empty in-memory store. */
export function openMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const now = options.now ?? (() => new Date().toISOString());
  let committed: Tables = emptyTables();
  let queue: Promise<unknown> = Promise.resolve();

  /** Runs `body` after every earlier writer has finished, whatever they returned. */
  function serialised<T>(body: () => Promise<T>): Promise<T> {
    const run = queue.then(body);
    queue = run.catch(() => {});
    return run;
  }

  return {
    ...reader(() => committed),
    write<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
      return serialised(async () => {
        let draft = copyTables(committed);
        const tx: StoreWriter = {
          ...reader(() => draft),
          append(events) {
            // Each append is atomic too: a failed one leaves the draft as it was.
            try {
              const next = copyTables(draft);
              appendEvents(next, events, now());
              draft = next;
              return Promise.resolve();
            } catch (error) {
              return Promise.reject(error);
            }
          },
        };
        const result = await fn(tx);
        committed = draft;
        return result;
      });
    },
    counts: () => Promise.resolve(countRows(committed)),
    markCorrupt(sessionId) {
      return serialised(() => {
        const session = committed.sessions.get(sessionId);
        if (session) {
          committed = copyTables(committed);
          committed.sessions.set(sessionId, { ...session, health: "corrupt" });
        }
        return Promise.resolve();
      });
    },
    close() {
      return serialised(() => {
        committed = emptyTables();
        return Promise.resolve();
      });
    },
  };
}
