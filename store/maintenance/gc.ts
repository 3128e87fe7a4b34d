/**
 * Retention: removes sessions whose last activity (their last event, or their import here) is
 * older than a limit, one session per transaction, so servers sharing the database keep
 * answering between them. Each transaction checks the session again under the write lock (a
 * session that an agent just advanced stays) and removes its log, projections, full-text rows,
 * import records and the snapshots no other run uses.
 * @module
 */
import { type Expression, type Kysely, sql, type SqlBool } from "npm:kysely@0.29.9";
import { sessionLabel } from "../../engine/model/ids.ts";
import type { SqlDialect } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import type { Database } from "../sql/database.ts";
import { deleteSession } from "../sql/tables.ts";

/** What to remove. */
export interface GcOptions {
  /** Sessions idle longer than this many milliseconds go. */
  olderThanMs: number;
  /** The current time. */
  now: Date;
  /** List what would go, remove nothing. */
  dryRun?: boolean;
  /** Keep sessions with a run still in progress, however old. */
  keepRunning?: boolean;
  /** Told each session as it is removed (or would be, on a dry run). */
  onSession?: (session: GcSession) => void;
}

/** One session gc removed (or would remove). */
export interface GcSession {
  /** `ses_…`. */
  sessionId: string;
  /** Its title. */
  title: string;
  /** Its last activity (ISO-8601). */
  lastActivity: string;
  /** About how many bytes of rows it held (log, projections, snapshots only it used). */
  bytes: number;
}

/** What a gc did. */
export interface GcReport {
  /** Sessions idle since before this time were candidates (ISO-8601). */
  cutoff: string;
  /** Whether nothing was removed. */
  dryRun: boolean;
  /** The sessions removed (or that would be). */
  sessions: GcSession[];
  /** Their bytes, added up. */
  bytes: number;
  /** The runs with workspace snapshots among them, by workspace: their git refs go too. */
  snapshots: SnapshotRuns[];
  /** Candidates that became active (or otherwise stopped qualifying) before their turn. */
  kept: number;
}

type Scope = { cutoff: string; keepRunning: boolean };

/** Sessions idle since before the cutoff (an import counts as activity). */
function idle(db: Executor, scope: Scope) {
  return db.selectFrom("sessions as s")
    .select(["s.session_id", "s.title", "s.updated_at"])
    .where("s.updated_at", "<", scope.cutoff)
    .where((eb) => {
      const conditions: Expression<SqlBool>[] = [
        eb.not(eb.exists(
          eb.selectFrom("bundle_imports as i").select(sql`1`.as("one"))
            .whereRef("i.session_id", "=", "s.session_id")
            .where("i.imported_at", ">=", scope.cutoff),
        )),
      ];
      if (scope.keepRunning) {
        conditions.push(eb.not(eb.exists(
          eb.selectFrom("runs as r").select(sql`1`.as("one"))
            .whereRef("r.session_id", "=", "s.session_id").where("r.status", "=", "running"),
        )));
      }
      return eb.and(conditions);
    });
}

/** The snapshots only this session's runs use. */
function ownSnapshots(ex: Executor, sessionId: string) {
  return ex.selectFrom("workflow_snapshots as w")
    .where(
      "w.workflow_hash",
      "in",
      ex.selectFrom("runs").select("workflow_hash")
        .where("session_id", "=", sessionId),
    )
    .where((eb) =>
      eb.not(eb.exists(
        eb.selectFrom("runs as r").select(sql`1`.as("one"))
          .whereRef("r.workflow_hash", "=", "w.workflow_hash")
          .where("r.session_id", "!=", sessionId),
      ))
    );
}

/** About how many bytes a session's rows take (text lengths; the file keeps some slack). */
export async function sessionBytes(ex: Executor, sessionId: string): Promise<number> {
  const runs = sql`SELECT run_id FROM runs WHERE session_id = ${sessionId}`;
  const row = await sql<{ n: number }>`SELECT
    (SELECT coalesce(sum(length(payload) + length(digest) + length(kind) + length(at)), 0)
      FROM events WHERE session_id = ${sessionId})
    + (SELECT coalesce(sum(length(state) + length(context) + length(preferences)), 0)
      FROM nodes WHERE run_id IN (${runs}))
    + (SELECT coalesce(sum(length(response)), 0) FROM attempts WHERE run_id IN (${runs}))
    + (SELECT coalesce(sum(coalesce(length(notes_markdown), 0) + length(artifacts)), 0)
      FROM outputs WHERE run_id IN (${runs})) AS n`.execute(ex);
  const own = await ownSnapshots(ex, sessionId)
    .select(sql<number>`coalesce(sum(length(w.compiled)), 0)`.as("n")).executeTakeFirst();
  return Number(row.rows[0]?.n ?? 0) + Number(own?.n ?? 0);
}

/**
 * Removes one session if it still qualifies, in one transaction (the dialect's: on PostgreSQL
 * tried again while a live server's writes conflict with it); returns it, or `null`.
 */
async function removeOne(
  db: Kysely<Database>,
  dialect: SqlDialect,
  at: { sessionId: string; scope: Scope },
): Promise<GcSession | null> {
  return await dialect.transact(db, async (tx) => {
    const row = await idle(tx, at.scope).where("s.session_id", "=", at.sessionId)
      .executeTakeFirst();
    if (!row) return null;
    const bytes = await sessionBytes(tx, at.sessionId);
    const hashes = (await ownSnapshots(tx, at.sessionId).select("w.workflow_hash").execute())
      .map((r) => r.workflow_hash);
    await deleteSession(tx, dialect.search, at.sessionId);
    if (hashes.length > 0) {
      await tx.deleteFrom("workflow_snapshots").where("workflow_hash", "in", hashes).execute();
    }
    return toGcSession(row, bytes);
  });
}

function toGcSession(
  row: { session_id: string; title: string; updated_at: string },
  bytes: number,
): GcSession {
  return {
    sessionId: sessionLabel(row.session_id),
    title: row.title,
    lastActivity: row.updated_at,
    bytes,
  };
}

/** Runs `fn`, trying again a few times while another process holds the database past its timeout. */
async function patiently<T>(dialect: SqlDialect, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= 4 || !dialect.isBusy(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}

/** Removes (or, on a dry run, lists) the sessions idle longer than the limit. */
export async function collectGarbage(
  store: { readonly db: Kysely<Database>; readonly dialect: SqlDialect },
  options: GcOptions,
): Promise<GcReport> {
  const scope = {
    cutoff: new Date(options.now.getTime() - options.olderThanMs).toISOString(),
    keepRunning: options.keepRunning === true,
  };
  const report: GcReport = {
    cutoff: scope.cutoff,
    dryRun: options.dryRun === true,
    sessions: [],
    snapshots: [],
    bytes: 0,
    kept: 0,
  };
  let after = "";
  for (;;) {
    const page = await idle(store.db, scope).where("s.session_id", ">", after)
      .orderBy("s.session_id").limit(100).execute();
    for (const row of page) {
      const runs = await snapshotRuns(store.db, row.session_id);
      const done = report.dryRun
        ? toGcSession(row, await sessionBytes(store.db, row.session_id))
        : await patiently(store.dialect, () =>
          removeOne(store.db, store.dialect, { sessionId: row.session_id, scope }));
      if (!done) {
        report.kept += 1;
        continue;
      }
      report.sessions.push(done);
      report.snapshots = mergeRuns(report.snapshots, runs);
      report.bytes += done.bytes;
      options.onSession?.(done);
    }
    if (page.length < 100) return report;
    after = page[page.length - 1]!.session_id;
  }
}

/** The runs of a session that recorded snapshots, by workspace. */
export interface SnapshotRuns {
  /** The workspace folder whose repository holds the refs. */
  workspace: string;
  /** The runs (hex): `refs/waymark/<run>/` each. */
  runIds: string[];
}

type SnapshotPayload = { snapshot?: { commit?: unknown; workspace?: unknown } };

/** A session's runs with snapshots, by workspace (read before the session goes). */
async function snapshotRuns(db: Kysely<Database>, sessionId: string): Promise<SnapshotRuns[]> {
  const rows = await db.selectFrom("node_events").select(["run_id", "payload"])
    .where("session_id", "=", sessionId).where("kind", "=", "snapshot_recorded").execute();
  const found: SnapshotRuns[] = [];
  for (const row of rows) {
    const { snapshot } = JSON.parse(row.payload) as SnapshotPayload;
    if (typeof snapshot?.workspace !== "string" || typeof snapshot.commit !== "string") continue;
    found.push({ workspace: snapshot.workspace, runIds: [row.run_id] });
  }
  return mergeRuns([], found);
}

function mergeRuns(into: SnapshotRuns[], more: SnapshotRuns[]): SnapshotRuns[] {
  const by = new Map(into.map((r) => [r.workspace, new Set(r.runIds)]));
  for (const r of more) {
    const set = by.get(r.workspace) ?? new Set<string>();
    r.runIds.forEach((id) => set.add(id));
    by.set(r.workspace, set);
  }
  return [...by].map(([workspace, ids]) => ({ workspace, runIds: [...ids].sort() }));
}
