/**
 * Exporting a session: its log read back in order (every row checked against its digest), tokens
 * replaced by placeholders, the snapshots its runs pin (each checked against its hash), sealed
 * with a manifest. Generic over event kinds: whatever the log holds is carried.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import { hashJson } from "../../engine/common/hash.ts";
import { parseSessionLabel, sessionLabel } from "../../engine/model/ids.ts";
import { readTokenClaims, tokenPattern } from "../../engine/access/tokens.ts";
import { decodeLogRow, sessionLog } from "../sql/log.ts";
import type { Database } from "../sql/database.ts";
import {
  type Bundle,
  type BundleEvent,
  type BundleResult,
  type BundleSnapshot,
  bundleText,
  eventDigest,
  refuse,
  seal,
  tokenPlaceholder,
} from "./bundle_format.ts";

/** A session written as a bundle. */
export interface ExportedBundle {
  /** The session (`ses_…`). */
  sessionId: string;
  /** The bundle file's text. */
  text: string;
  /** The whole bundle's digest (hex), as recorded by an import. */
  digest: string;
  /** Events carried. */
  eventCount: number;
  /** Snapshots carried. */
  snapshotCount: number;
}

/** Where a session is read from: an open waymark, or anything holding a SQL store's database. */
export interface ExportSource {
  /** The store (only its database is read). */
  readonly store: { readonly db: Kysely<Database> };
}

/** Every token in a payload's text, replaced by its placeholder. */
export function redactTokens(text: string): string {
  return text.replace(tokenPattern(), (token) => {
    const claims = readTokenClaims(token);
    return claims ? tokenPlaceholder(claims.kind, claims.runId, claims.nodeId) : token;
  });
}

/** The session's events as bundle events, or why the log cannot be trusted. */
async function readEvents(
  db: Kysely<Database>,
  sessionId: string,
): Promise<BundleResult<BundleEvent[]>> {
  const events: BundleEvent[] = [];
  for await (const row of sessionLog(db, sessionId)) {
    const decoded = decodeLogRow(row, sessionId);
    if (!decoded.ok) {
      return refuse(
        "SESSION_CORRUPT",
        `Session ${
          sessionLabel(sessionId)
        } cannot be exported: its ${decoded.reason}. Run \`waymark doctor\`; restore the session from a backup or an earlier bundle.`,
        { seq: row.seq },
      );
    }
    const payload = JSON.parse(redactTokens(row.payload)) as Record<string, unknown>;
    const event = { n: events.length + 1, kind: row.kind, at: row.at, payload };
    events.push({ ...event, digest: eventDigest(event) });
  }
  return { ok: true, value: events };
}

/** The workflow hashes the events name (any event's `workflowHash`), sorted. */
export function pinnedHashes(events: readonly { payload: Record<string, unknown> }[]): string[] {
  const hashes = new Set<string>();
  for (const { payload } of events) {
    if (typeof payload.workflowHash === "string") hashes.add(payload.workflowHash);
  }
  return [...hashes].sort();
}

async function readSnapshots(
  db: Kysely<Database>,
  sessionId: string,
  hashes: string[],
): Promise<BundleResult<BundleSnapshot[]>> {
  const rows = hashes.length === 0 ? [] : await db.selectFrom("workflow_snapshots")
    .select(["workflow_hash", "workflow_id", "compiled"]).where("workflow_hash", "in", hashes)
    .orderBy("workflow_hash").execute();
  const out: BundleSnapshot[] = [];
  for (const hash of hashes) {
    const row = rows.find((r) => r.workflow_hash === hash);
    let compiled: Record<string, unknown> | null = null;
    try {
      compiled = row ? JSON.parse(row.compiled) : null;
    } catch { /* reported below */ }
    if (!row || !compiled || await hashJson(compiled) !== hash) {
      return refuse(
        "SESSION_CORRUPT",
        `Session ${sessionLabel(sessionId)} cannot be exported: its pinned workflow ${hash} is ${
          row ? "damaged" : "missing"
        }. Run \`waymark doctor\`.`,
        { workflowHash: hash },
      );
    }
    out.push({ workflowHash: hash, workflowId: row.workflow_id, compiled });
  }
  return { ok: true, value: out };
}

/** Builds the bundle of a session (`ses_…` or bare hex). */
export async function buildBundle(
  source: ExportSource,
  sessionId: string,
): Promise<BundleResult<Bundle>> {
  const id = parseSessionLabel(sessionId);
  const row = id
    ? await source.store.db.selectFrom("sessions").select(["title"]).where("session_id", "=", id)
      .executeTakeFirst()
    : undefined;
  if (!id || !row) {
    return refuse("SESSION_NOT_FOUND", `No session ${sessionId} here; \`waymark sessions list\`.`);
  }
  const events = await readEvents(source.store.db, id);
  if (!events.ok) return events;
  if (events.value.length === 0) {
    return refuse("SESSION_CORRUPT", `Session ${sessionLabel(id)} has no events in its log.`);
  }
  const snapshots = await readSnapshots(source.store.db, id, pinnedHashes(events.value));
  if (!snapshots.ok) return snapshots;
  const parts = {
    session: {
      sessionId: id,
      title: row.title,
      eventCount: events.value.length,
      firstAt: events.value[0]!.at,
      lastAt: events.value[events.value.length - 1]!.at,
    },
    events: events.value,
    snapshots: snapshots.value,
  };
  return {
    ok: true,
    value: { bundleSchemaVersion: 1, format: "waymark.session", manifest: seal(parts), ...parts },
  };
}

/**
 * Exports a session as a bundle: the same session always gives the same bytes. Refused when
 * the session is unknown, or when its log or a pinned snapshot fails its check.
 */
export async function exportSession(
  source: ExportSource,
  sessionId: string,
): Promise<BundleResult<ExportedBundle>> {
  const built = await buildBundle(source, sessionId);
  if (!built.ok) return built;
  const bundle = built.value;
  return {
    ok: true,
    value: {
      sessionId: sessionLabel(bundle.session.sessionId),
      text: bundleText(bundle),
      digest: bundle.manifest.whole,
      eventCount: bundle.events.length,
      snapshotCount: bundle.snapshots.length,
    },
  };
}
