/**
 * Rebuilding a session's projections (and its full-text rows) from its log, in one transaction:
 * the log is verified first (a log that fails is never rebuilt from), the rows are deleted and
 * the events projected again through the normal projection code. Checking is the same rebuild
 * rolled back, with the rows compared before and after, so the check and the repair cannot
 * disagree about what the log says.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import type { FullTextSearch } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import {
  decodeLogRow,
  type LoggedEvent,
  positionCheck,
  projectLogged,
  sessionLog,
} from "../sql/log.ts";
import type { Database } from "../sql/database.ts";
import { deleteProjections, dumpDifferences, dumpProjections } from "../sql/tables.ts";

/** What checking (or rebuilding) one session found. */
export interface SessionFindings {
  /** Session id (hex). */
  sessionId: string;
  /** Why its log cannot be trusted (nothing rebuilt; the session is marked corrupt), or `null`. */
  logProblem: string | null;
  /** Rows that differ from what the log gives, by table (`search` for the full-text rows). */
  differences: Record<string, number>;
}

/**
 * The first reason a session's log cannot be trusted, or `null` when every row verifies and
 * none is missing (positions run 1, 2, 3, ... up to the events the session counted).
 */
export async function logProblem(ex: Executor, sessionId: string): Promise<string | null> {
  const positions = positionCheck();
  for await (const row of sessionLog(ex, sessionId)) {
    const decoded = decodeLogRow(row, sessionId);
    if (!decoded.ok) return decoded.reason;
    const gap = positions.next(row);
    if (gap) return gap;
  }
  const counted = await ex.selectFrom("sessions").select("event_count")
    .where("session_id", "=", sessionId).executeTakeFirst();
  return positions.end(counted ? Number(counted.event_count) : null);
}

async function* loggedEvents(ex: Executor, sessionId: string): AsyncGenerator<LoggedEvent> {
  for await (const row of sessionLog(ex, sessionId)) {
    const decoded = decodeLogRow(row, sessionId);
    if (decoded.ok) yield { seq: row.seq, at: row.at, event: decoded.event };
  }
}

/** Rebuilds in `tx` and reports what differed; the caller commits or rolls back. */
async function rebuildIn(
  tx: Executor,
  search: FullTextSearch,
  sessionId: string,
): Promise<SessionFindings> {
  const problem = await logProblem(tx, sessionId);
  if (problem) return { sessionId, logProblem: problem, differences: {} };
  const health = await tx.selectFrom("sessions").select("health")
    .where("session_id", "=", sessionId).executeTakeFirst();
  const before = await dumpProjections(tx, search, sessionId);
  await deleteProjections(tx, search, sessionId);
  await projectLogged(tx, search, { sessionId, events: loggedEvents(tx, sessionId) });
  const differences = dumpDifferences(before, await dumpProjections(tx, search, sessionId));
  // a session marked corrupt whose log verifies: the rebuilt rows are sound again
  if (health?.health === "corrupt") differences["sessions.health"] = 1;
  return { sessionId, logProblem: null, differences };
}

class Rollback extends Error {
  constructor(readonly findings: SessionFindings) {
    super("rolled back");
  }
}

/**
 * Checks (`repair: false`, rolled back) or rebuilds (`repair: true`, committed when anything
 * differed) one session's projections from its log.
 */
export async function rebuildSession(
  db: Kysely<Database>,
  search: FullTextSearch,
  options: { sessionId: string; repair: boolean },
): Promise<SessionFindings> {
  try {
    return await db.transaction().execute(async (tx) => {
      const findings = await rebuildIn(tx, search, options.sessionId);
      const changed = Object.keys(findings.differences).length > 0;
      if (!options.repair || !changed || findings.logProblem) throw new Rollback(findings);
      return findings;
    });
  } catch (error) {
    if (error instanceof Rollback) return error.findings;
    throw error;
  }
}

/** Marks a session corrupt (execution tools then refuse it; read-only tools still work). */
export async function markCorrupt(db: Kysely<Database>, sessionId: string): Promise<void> {
  await db.updateTable("sessions").set({ health: "corrupt" }).where("session_id", "=", sessionId)
    .execute();
}
