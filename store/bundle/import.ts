/**
 * Importing a bundle: verified whole before anything is written, then in one transaction its
 * snapshots stored, its events appended (re-keyed when the session or a run id is taken here,
 * tokens minted afresh) and projected through the normal projection code, and the bundle's
 * digest recorded, so the same bundle twice is a no-op. Never merges into an existing session.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import {
  type Clock,
  type DomainEvent,
  type Keyring,
  type Random,
  sessionLabel,
} from "../../engine/mod.ts";
import type { SqlDialect } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { logDigest, type LoggedEvent, projectLogged } from "../sql/log.ts";
import type { Database } from "../sql/schema.ts";
import { type Bundle, bundleDigestLabel, type BundleResult } from "./format.ts";
import { freshIds, mintPlaceholders, rekeyText } from "./rekey.ts";
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

async function isTaken(tx: Executor, id: string): Promise<boolean> {
  const session = await tx.selectFrom("sessions").select("session_id")
    .where("session_id", "=", id).executeTakeFirst();
  const run = session ?? await tx.selectFrom("runs").select("run_id")
    .where("run_id", "=", id).executeTakeFirst();
  // a log without its projections still owns its id
  const logged = run ?? await tx.selectFrom("events").select("seq")
    .where("session_id", "=", id).limit(1).executeTakeFirst();
  return logged !== undefined;
}

/** The run ids a bundle starts, in order. */
function runIds(bundle: Bundle): string[] {
  return bundle.events.filter((e) => e.kind === "run_started").map((e) => String(e.payload.runId));
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

/** Appends the events (rewritten for this store) and returns them with their new places. */
async function appendEvents(
  tx: Executor,
  bundle: Bundle,
  rewrite: (text: string) => string,
): Promise<LoggedEvent[]> {
  const logged: LoggedEvent[] = [];
  for (let i = 0; i < bundle.events.length; i += CHUNK) {
    const chunk = bundle.events.slice(i, i + CHUNK).map((e, j) => {
      const payload = rewrite(JSON.stringify(e.payload));
      const event = JSON.parse(payload) as DomainEvent;
      const row = {
        session_id: event.sessionId,
        run_id: "runId" in event ? event.runId : null,
        kind: e.kind,
        payload,
        digest: logDigest(e.kind, payload),
        at: e.at,
        // a new session here: its log starts at 1
        position: i + j + 1,
      };
      return { row, event };
    });
    const inserted = await tx.insertInto("events").values(chunk.map((c) => c.row))
      .returning("seq").execute();
    // one statement inside the write lock: sequence numbers follow row order
    const seqs = inserted.map((r) => Number(r.seq)).sort((a, b) => a - b);
    chunk.forEach((c, j) => logged.push({ seq: seqs[j]!, at: c.row.at, event: c.event }));
  }
  return logged;
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

/** Writes a verified bundle in `tx`. */
async function write(tx: Executor, target: ImportTarget, bundle: Bundle): Promise<ImportedSession> {
  const prior = await tx.selectFrom("bundle_imports").select("session_id")
    .where("bundle_digest", "=", bundle.manifest.whole).executeTakeFirst();
  if (prior) return outcome(bundle, "already_imported", prior.session_id);
  const source = [bundle.session.sessionId, ...runIds(bundle)];
  let ids = new Map<string, string>();
  for (const id of source) {
    if (!await isTaken(tx, id)) continue;
    ids = await freshIds(source, { random: target.deps.random, taken: (x) => isTaken(tx, x) });
    break;
  }
  const now = target.deps.clock.now();
  await storeSnapshots(tx, bundle, now);
  const rewrite = (text: string) => mintPlaceholders(rekeyText(text, ids), target.deps);
  const logged = await appendEvents(tx, bundle, rewrite);
  const sessionId = ids.get(bundle.session.sessionId) ?? bundle.session.sessionId;
  await projectLogged(tx, target.store.dialect.search, { sessionId, events: logged });
  await tx.insertInto("bundle_imports").values({
    bundle_digest: bundle.manifest.whole,
    session_id: sessionId,
    source_session_id: bundle.session.sessionId,
    imported_at: now,
  }).execute();
  return outcome(bundle, "imported", sessionId);
}

/**
 * Imports a bundle's text: verified whole first (refused with the reason, nothing written),
 * then written in one transaction. A session or run id already taken here imports under new
 * ids; a bundle imported before is a no-op that says so.
 */
export async function importBundle(
  target: ImportTarget,
  text: string,
): Promise<BundleResult<ImportedSession>> {
  const verified = await verifyBundle(text);
  if (!verified.ok) return verified;
  try {
    // the dialect's transaction: on a shared server, one refused for another's sake runs again
    const { db, dialect } = target.store;
    const value = await dialect.transact(db, (tx) => write(tx, target, verified.value));
    return { ok: true, value };
  } catch (error) {
    if (!target.store.dialect.isBusy(error)) throw error;
    return {
      ok: false,
      error: {
        code: "STORAGE_BUSY",
        message: "The database is busy with another waymark process; retry shortly.",
        retry: { kind: "retryable_after_ms", afterMs: 250 },
      },
    };
  }
}
