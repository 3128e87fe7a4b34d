/**
 * Importing a bundle: verified whole before anything is written (shape, digests, order and every
 * rule a session built over MCP satisfies), its events rewritten for this store (re-keyed when
 * the session or a run id is taken here, tokens of its own runs minted afresh), then written a
 * batch per transaction through the normal projection code, so a large bundle never holds the
 * write lock for long; the last batch records the bundle's digest, so the same bundle twice is
 * a no-op. Never merges into an existing session. An import cut short by a crash leaves the
 * part written as a session of its own (an earlier state of the same session; importing the
 * bundle again writes it whole under new ids).
 * @module
 */
import type { Insertable, Kysely } from "npm:kysely@0.29.9";
import type { DomainEvent } from "../../engine/model/events.ts";
import { sessionLabel } from "../../engine/model/ids.ts";
import type { Clock, Random } from "../../engine/model/ports.ts";
import type { Keyring } from "../../engine/access/tokens.ts";
import type { FullTextSearch, SqlDialect } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { logDigest, type LoggedEvent, projectLogged } from "../sql/log.ts";
import type { Database } from "../sql/database.ts";
import { deleteSession } from "../sql/tables.ts";
import { type Bundle, bundleDigestLabel, type BundleResult, refuse } from "./bundle_format.ts";
import { freshIds, mintPlaceholders, nodeKey, rekeyText } from "./rekey.ts";
import { verifyBundle } from "./verify.ts";

/** Where a bundle is imported: an open waymark, or its store and the parts that mint tokens. */
export interface ImportTarget {
  /** The store (its database and dialect). */
  readonly store: { readonly db: Kysely<Database>; readonly dialect: SqlDialect };
  /** This machine's key, randomness and clock. */
  readonly deps: { readonly keyring: Keyring; readonly random: Random; readonly clock: Clock };
}

/** What an import did. */
export interface ImportedSession {
  /** `imported`, or `already_imported` when this bundle was imported before (nothing written). */
  status: "imported" | "already_imported";
  /** The session here (`ses_…`). */
  sessionId: string;
  /** The session id inside the bundle (`ses_…`); differs from `sessionId` when re-keyed. */
  sourceSessionId: string;
  /** Whether the session and its runs got new ids because the bundle's were taken here. */
  rekeyed: boolean;
  /** The whole bundle's digest (`sha256:…`). */
  bundleDigest: string;
  /** Events in the session. */
  eventCount: number;
  /** Snapshots the bundle carried. */
  snapshotCount: number;
}

/** Rows inserted per statement. */
const CHUNK = 200;
/** Events written per transaction: the write lock is held for one batch, never the bundle. */
const BATCH = 1000;
/**
 * The pause between batches. A writer waiting for the lock (a live checkpoint) sleeps between
 * tries, up to 100 ms in SQLite's busy handler; were the next batch to start at once, it could
 * lose the lock again and again until its busy timeout. The pause lets it in.
 */
const YIELD_MS = 50;
/** Ids looked up per statement. */
const ID_CHUNK = 500;

/** Which of `ids` a session, a run or a session's log already owns here. */
async function takenAmong(ex: Executor, ids: readonly string[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const chunk = ids.slice(i, i + ID_CHUNK);
    const sessions = await ex.selectFrom("sessions").select("session_id as id")
      .where("session_id", "in", chunk).execute();
    const runs = await ex.selectFrom("runs").select("run_id as id")
      .where("run_id", "in", chunk).execute();
    // a log without its projections still owns its id
    const logged = await ex.selectFrom("events").select("session_id as id").distinct()
      .where("session_id", "in", chunk).execute();
    for (const row of [...sessions, ...runs, ...logged]) taken.add(row.id);
  }
  return taken;
}

/** The run ids a bundle starts, in order. */
function runIds(bundle: Bundle): string[] {
  return bundle.events.filter((e) => e.kind === "run_started").map((e) => String(e.payload.runId));
}

/** New ids for the session and its runs when any is taken here (none when all are free). */
async function chooseIds(ex: Executor, bundle: Bundle, random: Random): Promise<IdMap> {
  const source = [bundle.session.sessionId, ...runIds(bundle)];
  const taken = await takenAmong(ex, source);
  if (taken.size === 0) return new Map();
  for (;;) {
    const ids = freshIds(source, { random, avoid: taken });
    const clash = await takenAmong(ex, [...ids.values()]);
    if (clash.size === 0) return ids;
    for (const id of clash) taken.add(id);
  }
}

type IdMap = Map<string, string>;

/** One event rewritten for this store: its row and the event it holds. */
interface Row {
  row: Insertable<Database["events"]>;
  event: DomainEvent;
}

/**
 * Every event rewritten for this store, before any write: ids re-keyed, and placeholders of
 * the bundle's own runs and nodes minted as fresh tokens (any other placeholder stays text).
 */
function rewrite(target: ImportTarget, bundle: Bundle, ids: IdMap): Row[] {
  const own = new Set(
    bundle.events.filter((e) => e.kind === "node_created").map((e) => {
      const runId = String(e.payload.runId);
      return nodeKey(ids.get(runId) ?? runId, String(e.payload.nodeId));
    }),
  );
  const deps = { ...target.deps, own };
  return bundle.events.map((e, n) => {
    const payload = mintPlaceholders(rekeyText(JSON.stringify(e.payload), ids), deps);
    const event = JSON.parse(payload) as DomainEvent;
    const row = {
      session_id: event.sessionId,
      run_id: "runId" in event ? event.runId : null,
      kind: e.kind,
      payload,
      digest: logDigest(e.kind, payload),
      at: e.at,
      position: n + 1, // a new session here: its log starts at 1
    };
    return { row, event };
  });
}

async function storeSnapshots(tx: Executor, bundle: Bundle, now: string): Promise<void> {
  for (const snapshot of bundle.snapshots) {
    await tx.insertInto("workflow_snapshots").values({
      workflow_hash: snapshot.workflowHash,
      workflow_id: snapshot.workflowId,
      compiled: JSON.stringify(snapshot.compiled),
      created_at: now,
    }).onConflict((oc) => oc.doNothing()).execute();
  }
}

/** Appends rows and projects them; `counted` of the session's events came before. */
async function writeRows(
  tx: Executor,
  search: FullTextSearch,
  batch: { sessionId: string; rows: Row[]; counted: number },
): Promise<void> {
  const logged: LoggedEvent[] = [];
  for (let i = 0; i < batch.rows.length; i += CHUNK) {
    const chunk = batch.rows.slice(i, i + CHUNK);
    const inserted = await tx.insertInto("events").values(chunk.map((c) => c.row))
      .returning("seq").execute();
    // one statement inside the write lock: sequence numbers follow row order
    const seqs = inserted.map((r) => Number(r.seq)).sort((a, b) => a - b);
    chunk.forEach((c, j) => logged.push({ seq: seqs[j]!, at: c.row.at, event: c.event }));
  }
  await projectLogged(tx, search, { ...batch, events: logged });
}

function outcome(
  bundle: Bundle,
  status: ImportedSession["status"],
  sessionId: string,
): ImportedSession {
  return {
    status,
    sessionId: sessionLabel(sessionId),
    sourceSessionId: sessionLabel(bundle.session.sessionId),
    rekeyed: sessionId !== bundle.session.sessionId,
    bundleDigest: bundleDigestLabel(bundle.manifest.whole),
    eventCount: bundle.events.length,
    snapshotCount: bundle.snapshots.length,
  };
}

/** The session a bundle was imported as before, or `undefined`. */
async function priorImport(ex: Executor, bundle: Bundle): Promise<string | undefined> {
  const prior = await ex.selectFrom("bundle_imports").select("session_id")
    .where("bundle_digest", "=", bundle.manifest.whole).executeTakeFirst();
  return prior?.session_id;
}

/** Thrown when ids chosen before the first batch were taken by another writer meanwhile. */
class IdsTakenMeanwhile extends Error {}

/**
 * Writes a verified bundle a batch per transaction, every rewrite done first. The first batch
 * stores the snapshots; the last records the bundle's digest, unless another import of the
 * same bundle finished first (then this copy is removed and theirs reported). A failure
 * removes what earlier batches wrote.
 */
async function write(target: ImportTarget, bundle: Bundle): Promise<ImportedSession> {
  const { db, dialect } = target.store;
  const done = await priorImport(db, bundle);
  if (done !== undefined) return outcome(bundle, "already_imported", done);
  const ids = await chooseIds(db, bundle, target.deps.random);
  const sessionId = ids.get(bundle.session.sessionId) ?? bundle.session.sessionId;
  const rows = rewrite(target, bundle, ids);
  const now = target.deps.clock.now();
  const fresh = ids.size > 0 ? [...ids.values()] : [sessionId, ...runIds(bundle)];
  await dialect.transact(db, async (tx) => {
    if ((await takenAmong(tx, fresh)).size > 0) throw new IdsTakenMeanwhile();
    await storeSnapshots(tx, bundle, now);
  });
  try {
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = { sessionId, rows: rows.slice(i, i + BATCH), counted: i };
      const last = i + BATCH >= rows.length;
      const winner = await dialect.transact(db, async (tx) => {
        await writeRows(tx, dialect.search, batch);
        if (!last) return undefined;
        const other = await priorImport(tx, bundle);
        if (other !== undefined) return other;
        await tx.insertInto("bundle_imports").values({
          bundle_digest: bundle.manifest.whole,
          session_id: sessionId,
          source_session_id: bundle.session.sessionId,
          imported_at: now,
        }).execute();
        return undefined;
      });
      if (winner === undefined) {
        if (!last) await new Promise((resolve) => setTimeout(resolve, YIELD_MS));
        continue;
      }
      await dialect.transact(db, (tx) => deleteSession(tx, dialect.search, sessionId));
      return outcome(bundle, "already_imported", winner);
    }
  } catch (error) {
    await dialect.transact(db, (tx) => deleteSession(tx, dialect.search, sessionId))
      .catch(() => {});
    throw error;
  }
  return outcome(bundle, "imported", sessionId);
}

/**
 * Imports a bundle's text: verified whole first (refused with the reason, nothing written),
 * then written a batch of events per transaction. A session or run id already taken here
 * imports under new ids; a bundle imported before is a no-op that says so.
 */
export async function importBundle(
  target: ImportTarget,
  text: string,
): Promise<BundleResult<ImportedSession>> {
  const verified = await verifyBundle(text, { now: target.deps.clock.now() });
  if (!verified.ok) return verified;
  return await writeBundle(target, verified.value);
}

/**
 * Writes a bundle {@linkcode verifyBundle} accepted. Any failure is this bundle's verdict, as
 * data: busy (retry shortly), or the reason the store refused it (nothing of it kept).
 */
export async function writeBundle(
  target: ImportTarget,
  bundle: Bundle,
): Promise<BundleResult<ImportedSession>> {
  for (let tries = 1;; tries++) {
    try {
      return { ok: true, value: await write(target, bundle) };
    } catch (error) {
      if (error instanceof IdsTakenMeanwhile && tries < 3) continue;
      return failed(target, error);
    }
  }
}

function failed(target: ImportTarget, error: unknown): BundleResult<never> {
  if (target.store.dialect.isBusy(error)) {
    return {
      ok: false,
      error: {
        code: "STORAGE_BUSY",
        message: "The database is busy with another waymark process; retry shortly.",
        retry: { kind: "retryable_after_ms", afterMs: 250 },
      },
    };
  }
  const reason = error instanceof Error ? error.message : String(error);
  return refuse(
    "IMPORT_FAILED",
    `The bundle could not be written here (${reason}); nothing of it was kept. Run \`waymark doctor\`, then import it again.`,
  );
}
