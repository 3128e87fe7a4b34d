/**
 * A missing or damaged full-text index is its own fault: the index is derived from the sessions'
 * rows, so nothing is lost and no session is corrupt. Each dialect names what such a fault looks
 * like in its driver's errors (a table gone, FTS5's own corruption code); every index call then
 * fails with {@linkcode SearchIndexError}, which tools answer as `STORAGE_CORRUPTION_DETECTED`
 * (not retryable: retrying never rebuilds it) naming `waymark doctor --repair`, which rebuilds it.
 * @module
 */
import { type RawBuilder, sql } from "npm:kysely@0.29.9";
import { StorageCorruptionError } from "../../engine/model/result.ts";
import type { FullTextSearch } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";

/** The full-text index is missing or damaged; `doctor --repair` rebuilds it. */
export class SearchIndexError extends StorageCorruptionError {
  /** Creates the error; `detail` is what the driver said. */
  constructor(detail: string) {
    super(
      `The search index is missing or damaged (${detail}); it is derived from the sessions, so nothing is lost: run \`waymark doctor --repair\` to rebuild it`,
      null,
    );
    this.name = "SearchIndexError";
  }
}

/** What a driver error says of the index, or `null` when it is not about the index. */
export type IndexFault = (error: unknown) => string | null;

/** `search` with every call's index faults turned into {@linkcode SearchIndexError}. */
export function guardedSearch(search: FullTextSearch, fault: IndexFault): FullTextSearch {
  const out = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(search)) {
    out[name] = async (...args: unknown[]) => {
      try {
        return await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        const detail = fault(error);
        throw detail === null ? error : new SearchIndexError(detail);
      }
    };
  }
  return out as unknown as FullTextSearch;
}

/**
 * Index rows whose source row is gone, summed over each table's `FROM … WHERE …` clause that
 * selects them (each dialect writes its own: rowids on libSQL, run ids on PostgreSQL).
 */
export async function countOrphans(
  ex: Executor,
  fromClauses: readonly RawBuilder<unknown>[],
): Promise<number> {
  let n = 0;
  for (const orphans of fromClauses) {
    const row = await sql<{ n: number }>`SELECT count(*) AS n ${orphans}`.execute(ex);
    n += Number(row.rows[0]?.n ?? 0);
  }
  return n;
}
