/**
 * The checks `waymark doctor` runs on an open database, each returning its findings (and, on
 * repair, doing what fixes them): the engine's integrity check, every session's log digests,
 * pinned snapshots, projections and full-text rows against the log, and the WAL's size.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import { sessionLabel } from "../../engine/model/ids.ts";
import type { DoctorCheck } from "../../engine/model/vocabulary.ts";
import type { MaintenanceDialect, SqlDialect } from "../sql/dialect.ts";
import type { Database } from "../sql/database.ts";
import { knownSessionIds, runOrphans } from "../sql/tables.ts";
import { logProblem, markCorrupt, rebuildSession, type SessionFindings } from "./rebuild.ts";
import { checkSnapshots } from "./snapshots.ts";
import { systemClock } from "../system.ts";

/** One thing doctor reports: a check that passed, or a problem with its fix. */
export interface DoctorFinding {
  /** Which check. */
  check: DoctorCheck;
  /** Whether it passed. */
  ok: boolean;
  /** What was found. */
  message: string;
  /** How to fix a problem. */
  fix?: string;
  /** Structured facts (sessions, tables, sizes). */
  details?: Record<string, unknown>;
}

/** An open store as doctor needs it. */
export interface MaintainedStore {
  /** The database. */
  readonly db: Kysely<Database>;
  /** The dialect's shared parts. */
  readonly dialect: SqlDialect;
  /** The dialect's maintenance parts. */
  readonly maintenance: MaintenanceDialect;
}

/** What the store checks are asked to do. */
export interface StoreCheckOptions {
  /** Repair what can be repaired from the log. */
  repair: boolean;
  /** A WAL larger than this is a finding. */
  walLimitBytes: number;
  /** Told each repair done, in words. */
  repaired: (what: string) => void;
}

/** Sessions named in a message: the first few, then how many more. */
export function listSessions(ids: readonly string[], limit = 5): string {
  const shown = ids.slice(0, limit).map(sessionLabel).join(", ");
  return ids.length > limit ? `${shown} and ${ids.length - limit} more` : shown;
}

/** `ok` when `problems` is empty, else one problem finding. */
export function finding(
  check: DoctorCheck,
  problems: { message: string; fix: string; details?: Record<string, unknown> } | null,
  okMessage: string,
): DoctorFinding {
  return problems ? { check, ok: false, ...problems } : { check, ok: true, message: okMessage };
}

/** The database engine's own integrity check. */
export async function integrity(store: MaintainedStore): Promise<DoctorFinding> {
  const problems = await store.maintenance.integrityCheck(store.db);
  return finding(
    "integrity",
    problems.length === 0 ? null : {
      message: `the database's integrity check failed: ${problems.slice(0, 5).join("; ")}`,
      fix:
        "Restore the latest backup (`waymark backup FILE` makes one); export the sessions that still verify with `waymark sessions export --all -o DIR` first.",
      details: { problems },
    },
    "integrity check passed",
  );
}

/** Why a session could not be checked (or rebuilt), in words. */
const reasonOf = (error: unknown) =>
  `could not be read: ${error instanceof Error ? error.message : String(error)}`;

/**
 * Stored text that is not valid UTF-8, each value named by table, row, column and session; on
 * repair each is set aside in `quarantine` (its bytes, never deleted) and replaced by a readable
 * rendering, in one transaction, before the other checks read the rows.
 */
export async function textEncoding(
  store: MaintainedStore,
  options: StoreCheckOptions,
): Promise<DoctorFinding> {
  const now = systemClock.now();
  const found = options.repair
    ? await store.db.transaction().execute((tx) =>
      store.maintenance.badText(tx, { repair: true, now })
    )
    : await store.maintenance.badText(store.db, { repair: false, now });
  const named = found.map((b) =>
    `${b.table}.${b.column} of row ${b.row}${b.sessionId ? ` (${sessionLabel(b.sessionId)})` : ""}`
  );
  if (options.repair && found.length > 0) {
    options.repaired(
      `set aside ${found.length} text value(s) that were not UTF-8 in the quarantine table: ${
        named.slice(0, 5).join(", ")
      }`,
    );
  }
  return finding(
    "text_encoding",
    found.length === 0 ? null : {
      message: `${found.length} stored text value(s) are not valid UTF-8 (no tool can read them): ${
        named.slice(0, 5).join(", ")
      }${found.length > 5 ? ` and ${found.length - 5} more` : ""}`,
      fix:
        "Run `waymark doctor --repair`: each value is copied as its bytes into the quarantine table (nothing is deleted) and replaced by a readable rendering; then a projection is rebuilt from its log, and a log row so changed leaves its session marked corrupt.",
      details: { values: found },
    },
    "stored text is valid UTF-8",
  );
}

/**
 * Checks every session's log, each on its own (one that cannot even be read is a verdict for
 * that session, never the end of the check); sessions that fail are marked corrupt (and
 * returned). Their rows are left as they are: nothing is ever rebuilt from such a log.
 */
export async function eventLog(
  store: MaintainedStore,
  ids: string[],
): Promise<[DoctorFinding, string[]]> {
  const bad: { sessionId: string; reason: string }[] = [];
  for (const id of ids) {
    const reason = await logProblem(store.db, id).catch(reasonOf);
    if (!reason) continue;
    bad.push({ sessionId: sessionLabel(id), reason });
    await markCorrupt(store.db, id).catch(() => {});
  }
  const corrupt = bad.map((b) => b.sessionId.slice(4));
  return [
    finding(
      "event_log",
      bad.length === 0 ? null : {
        message: `${bad.length} session log(s) fail their checks and are marked corrupt: ${
          listSessions(corrupt)
        } (${bad[0]!.reason})`,
        fix:
          "Their rows are kept as they are (a log with a bad or missing row is never rebuilt from): execution tools refuse these sessions, read-only tools and the viewer still show them. A person decides: restore the database from a backup, or import an earlier bundle of each session, or leave them read-only.",
        details: { sessions: bad },
      },
      `${ids.length} session log(s) verify`,
    ),
    corrupt,
  ];
}

/** Pinned snapshots against their hashes; restored from the log on repair. */
export async function snapshots(
  store: MaintainedStore,
  options: StoreCheckOptions,
): Promise<DoctorFinding> {
  const found = await checkSnapshots(store.db, { repair: options.repair });
  for (const f of found.filter((f) => f.repaired)) {
    options.repaired(`restored pinned workflow ${f.workflowHash} from the log`);
  }
  const left = found.filter((f) => !f.repaired);
  return finding(
    "snapshots",
    left.length === 0 ? null : {
      message: `${left.length} pinned workflow snapshot(s) are missing or damaged: ${
        left.map((f) => `${f.workflowHash} (${f.problem})`).slice(0, 3).join(", ")
      }`,
      fix: options.repair
        ? "No event in the log carries them any more: restore from a backup."
        : "Run `waymark doctor --repair` to restore them from the log where it carries them.",
      details: { snapshots: left },
    },
    "pinned workflow snapshots match their hashes",
  );
}

/**
 * The full-text index's tables (missing, or failing their own check): nothing when sound; on
 * repair they are rebuilt from the sessions (derived data: no backup is needed).
 */
export async function searchTables(
  store: MaintainedStore,
  options: StoreCheckOptions,
): Promise<DoctorFinding[]> {
  const problems = await store.maintenance.searchProblems(store.db);
  if (problems.length === 0) return [];
  if (options.repair) {
    await store.maintenance.rebuildSearch(store.db);
    options.repaired(`rebuilt the search index from the sessions (${problems.join("; ")})`);
    return [];
  }
  return [{
    check: "search_index",
    ok: false,
    message: `the search index's tables are missing or damaged: ${problems.slice(0, 3).join("; ")}`,
    fix:
      "Run `waymark doctor --repair`: the index is derived from the sessions and is rebuilt from them; nothing is lost and no backup is needed. Until then searches in resume_session fail.",
    details: { problems },
  }];
}

/** Splits per-session findings into projection and full-text differences. */
function split(found: SessionFindings[]): { rows: SessionFindings[]; search: SessionFindings[] } {
  const rows = found.filter((f) => Object.keys(f.differences).some((t) => t !== "search"));
  const search = found.filter((f) => "search" in f.differences);
  return { rows, search };
}

/** A session whose rows could not be checked against its log, and why. */
interface Unchecked {
  sessionId: string;
  reason: string;
}

/**
 * Projections and full-text rows of every session whose log verifies, against that log, each
 * session on its own: one that cannot be rebuilt is its own verdict (its rows are left as they
 * were) and the others are still checked and repaired.
 */
export async function projections(
  store: MaintainedStore,
  options: StoreCheckOptions & { sessions: string[] },
): Promise<DoctorFinding[]> {
  const found: SessionFindings[] = [];
  const unchecked: Unchecked[] = [];
  for (const sessionId of options.sessions) {
    try {
      const f = await rebuildSession(store.db, store.dialect.search, {
        sessionId,
        repair: options.repair,
      });
      if (Object.keys(f.differences).length > 0) found.push(f);
    } catch (error) {
      unchecked.push({ sessionId: sessionLabel(sessionId), reason: reasonOf(error) });
    }
  }
  const orphans = await runOrphans(store.db, { remove: options.repair });
  const ftsOrphans = options.repair
    ? await store.dialect.search.dropOrphans(store.db)
    : await store.dialect.search.orphanCount(store.db);
  if (options.repair) {
    for (const f of found) {
      options.repaired(`rebuilt ${sessionLabel(f.sessionId)} from its log`);
    }
    if (Object.keys(orphans).length > 0 || ftsOrphans > 0) {
      options.repaired("removed rows whose run or source is gone");
    }
  }
  const { rows, search } = split(found);
  return [
    rowsFinding(rows, orphans, unchecked),
    searchFinding(search, ftsOrphans),
  ];
}

function rowsFinding(
  rows: SessionFindings[],
  orphans: Record<string, number>,
  unchecked: Unchecked[],
): DoctorFinding {
  const orphanCount = Object.values(orphans).reduce((a, b) => a + b, 0);
  const uncheckedFix = unchecked.length > 0
    ? ` ${unchecked.length} session(s) cannot be rebuilt from their logs and were left as they are: export what still reads (\`waymark sessions export ID\`), then restore them from a backup or leave them as they are.`
    : "";
  return finding(
    "projections",
    rows.length === 0 && orphanCount === 0 && unchecked.length === 0 ? null : {
      message: [
        rows.length > 0
          ? `${rows.length} session(s) disagree with their logs: ${
            listSessions(rows.map((r) => r.sessionId))
          }`
          : "",
        orphanCount > 0 ? `${orphanCount} row(s) belong to no run` : "",
        unchecked.length > 0
          ? `${unchecked.length} session(s) cannot be rebuilt from their logs: ${
            listSessions(unchecked.map((u) => u.sessionId.slice(4)))
          } (${unchecked[0]!.reason})`
          : "",
      ].filter(Boolean).join("; "),
      fix:
        `Run \`waymark doctor --repair\`: it rebuilds them from the log, one session per transaction.${uncheckedFix}`,
      details: { sessions: rows, orphans, unrebuildable: unchecked },
    },
    "projections agree with the log",
  );
}

function searchFinding(search: SessionFindings[], orphans: number): DoctorFinding {
  return finding(
    "search_index",
    search.length === 0 && orphans === 0 ? null : {
      message: [
        search.length > 0
          ? `the search index of ${search.length} session(s) disagrees with its sources: ${
            listSessions(search.map((r) => r.sessionId))
          }`
          : "",
        orphans > 0 ? `${orphans} index row(s) have no source` : "",
      ].filter(Boolean).join("; "),
      fix: "Run `waymark doctor --repair`: it rebuilds the index rows from the log.",
      details: { sessions: search.map((s) => s.sessionId), orphans },
    },
    "the search index agrees with its sources",
  );
}

/** The WAL's size; past the limit it is checkpointed on repair. */
export async function wal(
  store: MaintainedStore,
  options: StoreCheckOptions,
): Promise<DoctorFinding> {
  const bytes = await store.maintenance.walBytes();
  if (bytes === null) return { check: "wal", ok: true, message: "no write-ahead log file" };
  const mb = (bytes / 1_048_576).toFixed(1);
  if (bytes <= options.walLimitBytes) {
    return { check: "wal", ok: true, message: `write-ahead log ${mb} MB`, details: { bytes } };
  }
  if (options.repair) {
    await store.maintenance.checkpointWal(store.db);
    options.repaired(`checkpointed the ${mb} MB write-ahead log`);
  }
  return finding("wal", {
    message: `the write-ahead log is ${mb} MB (over ${
      (options.walLimitBytes / 1_048_576).toFixed(0)
    } MB)`,
    fix:
      "Run `waymark doctor --repair` to checkpoint it; a server that keeps a read open stops it from shrinking, so restart long-idle servers.",
    details: { bytes },
  }, "");
}

/** Every session id doctor looks at. */
export const sessionIds = (store: MaintainedStore): Promise<string[]> => knownSessionIds(store.db);
