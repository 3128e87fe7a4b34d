/**
 * Pinned workflow snapshots are content-addressed: each row must hash to its key, and every run
 * must find its own. They are shared between sessions (only the first run to pin a workflow
 * carries it in its log), so a damaged or missing one is restored from whichever event still
 * carries it, when one does.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import { hashJson } from "../../engine/common/hash.ts";
import { logDigest } from "../sql/log.ts";
import type { Database } from "../sql/database.ts";
import { systemClock } from "../system.ts";

/** A snapshot that is missing or does not match its hash. */
export interface SnapshotFinding {
  /** The `workflowHash`. */
  workflowHash: string;
  /** What is wrong. */
  problem: "missing" | "damaged";
  /** Whether it was restored from the log. */
  repaired: boolean;
}

async function matches(compiled: string, hash: string): Promise<boolean> {
  try {
    return await hashJson(JSON.parse(compiled)) === hash;
  } catch {
    return false;
  }
}

/** The compiled text of `hash` as some verified event of the log carries it, or `null`. */
async function fromLog(db: Kysely<Database>, hash: string): Promise<string | null> {
  const rows = await db.selectFrom("events").select(["kind", "payload", "digest"])
    .where("kind", "=", "workflow_pinned").where("payload", "like", `%${hash}%`).execute();
  for (const row of rows) {
    if (logDigest(row.kind, row.payload) !== row.digest) continue;
    const event = JSON.parse(row.payload) as { workflowHash?: string; compiled?: unknown };
    if (event.workflowHash !== hash || !event.compiled) continue;
    const text = JSON.stringify(event.compiled);
    if (await matches(text, hash)) return text;
  }
  return null;
}

async function restore(db: Kysely<Database>, hash: string): Promise<boolean> {
  const compiled = await fromLog(db, hash);
  if (!compiled) return false;
  const workflowId = String((JSON.parse(compiled) as { id?: unknown }).id ?? "");
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom("workflow_snapshots").where("workflow_hash", "=", hash).execute();
    await tx.insertInto("workflow_snapshots").values({
      workflow_hash: hash,
      workflow_id: workflowId,
      compiled,
      created_at: systemClock.now(),
    }).execute();
  });
  return true;
}

/** Snapshots that runs need but that are missing or damaged; restored from the log on `repair`. */
export async function checkSnapshots(
  db: Kysely<Database>,
  options: { repair: boolean },
): Promise<SnapshotFinding[]> {
  const rows = await db.selectFrom("workflow_snapshots").select(["workflow_hash", "compiled"])
    .execute();
  const stored = new Map(rows.map((r) => [r.workflow_hash, r.compiled]));
  const used = await db.selectFrom("runs").select("workflow_hash").distinct().execute();
  const findings: SnapshotFinding[] = [];
  const hashes = new Set([...stored.keys(), ...used.map((r) => r.workflow_hash)]);
  for (const hash of [...hashes].sort()) {
    const text = stored.get(hash);
    const problem = text === undefined ? "missing" : await matches(text, hash) ? null : "damaged";
    if (!problem) continue;
    findings.push({
      workflowHash: hash,
      problem,
      repaired: options.repair && await restore(db, hash),
    });
  }
  return findings;
}
