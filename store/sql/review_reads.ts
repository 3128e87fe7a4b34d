/**
 * The store port's read of review passes: which of a set of review ids have a pass recorded,
 * in any session (any workspace, any machine sharing the store).
 * @module
 */
import type { Executor } from "./graph_sql.ts";

/** Ids asked about in one query (well under every dialect's bound-parameter limit). */
const CHUNK = 500;

/** The ids among `reviewIds` that have a pass recorded. */
export async function getPassedReviews(
  ex: Executor,
  reviewIds: readonly string[],
): Promise<Set<string>> {
  const passed = new Set<string>();
  const ids = [...new Set(reviewIds)];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await ex.selectFrom("review_passes").select("review_id").distinct()
      .where("review_id", "in", ids.slice(i, i + CHUNK)).execute();
    for (const r of rows) passed.add(r.review_id);
  }
  return passed;
}
