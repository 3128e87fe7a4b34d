/**
 * An attempt's first read inside its write transaction (`Store.writeAttempt`), for a dialect
 * that sends reads ahead (`SqlDialect.readAhead`): the node's children are sent ahead, and the
 * attempt-or-node read, which waits, leaves with them, the transaction's `BEGIN` and its
 * `SET LOCAL`s, in one round trip where reading the attempt before the transaction cost one
 * more. The children's node is the token's, known before anything is read.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import type { Store } from "../../engine/model/ports.ts";
import { StorageCorruptionError } from "../../engine/model/result.ts";
import type { Database } from "./database.ts";
import { childrenQuery, markCorrupt } from "./reader.ts";
import { inTransaction, type WriterOptions } from "./writer.ts";

/** The store port's `writeAttempt`, or `undefined` when the dialect cannot send reads ahead. */
export function createWriteAttempt(
  db: Kysely<Database>,
  options: WriterOptions,
): Store["writeAttempt"] {
  const readAhead = options.dialect.readAhead;
  if (!readAhead) return undefined;
  const { shared } = options;
  return async (key, fn) => {
    let unreadable: string | null = null;
    try {
      return await inTransaction(db, options, async (tx, ex) => {
        readAhead(ex, childrenQuery(ex, key));
        const found = await tx.getAttemptOrNode(key.runId, key.nodeId, key.attemptId, key.kind)
          .catch((error) => {
            if (error instanceof StorageCorruptionError) unreadable = error.sessionId;
            throw error;
          });
        // read once per process, then kept (`getSnapshot` outside answers from what is kept)
        const hash = found.attempt === null ? found.at?.run.workflowHash : undefined;
        if (hash !== undefined && !shared.snapshots.has(hash)) await tx.getSnapshot(hash);
        return await fn(tx, found);
      });
    } catch (error) {
      // as a read outside a transaction does (`reader.ts`); inside, it would roll back
      if (unreadable) await markCorrupt(shared.db, unreadable);
      throw error;
    }
  };
}
