/**
 * The workflow-file cache ({@linkcode WorkflowCache}) on the store's `workflow_files` and
 * `workflow_outcomes` tables, in any dialect. Reads are two indexed selects; a write is one
 * transaction that upserts, then trims each table to its newest {@linkcode WORKFLOW_CACHE_ROWS}
 * rows (a library larger than that is kept in part, and the rest read and compiled each time).
 * @module
 */
import { type Kysely, sql } from "npm:kysely@0.29.9";
import {
  type IndexedFile,
  type ListedOutcome,
  parsed,
  seal,
  type StoredOutcome,
  unseal,
  WORKFLOW_CACHE_ROWS,
  type WorkflowCache,
} from "../workflow_files/cache.ts";
import type { SqlDialect } from "./dialect.ts";
import type { Executor } from "./graph_sql.ts";
import type { Database } from "./database.ts";
import { systemClock } from "../system.ts";

/** The cache over a SQL store's database. */
export function sqlWorkflowCache(
  store: { db: Kysely<Database>; dialect: Pick<SqlDialect, "transact"> },
  options: { now?: () => string } = {},
): WorkflowCache {
  const { db, dialect } = store;
  const now = options.now ?? systemClock.now;
  return {
    async files(paths) {
      if (paths.length === 0) return [];
      const rows = await db.selectFrom("workflow_files")
        .select(["source", "path", "version", "digest", "workflow_id"])
        .where("path", "in", paths).execute();
      return rows.map((r) => ({ ...r, workflowId: r.workflow_id }));
    },
    async outcomes(digests) {
      if (digests.length === 0) return [];
      const rows = await db.selectFrom("workflow_outcomes")
        .select(["digest", "routines_key", "outcome"])
        .where("digest", "in", digests).execute();
      return rows.flatMap((r) => {
        const value = unseal(r.outcome);
        return value ? [{ digest: r.digest, routinesKey: r.routines_key, value }] : [];
      });
    },
    async summaries(digests) {
      if (digests.length === 0) return [];
      const rows = await db.selectFrom("workflow_outcomes")
        .select(["digest", "routines_key", "summary"])
        .where("digest", "in", digests).execute();
      return rows.flatMap((r) => {
        const value = parsed<ListedOutcome>(r.summary);
        return value ? [{ digest: r.digest, routinesKey: r.routines_key, value }] : [];
      });
    },
    async save({ files, outcomes }) {
      if (files.length === 0 && outcomes.length === 0) return;
      const at = now();
      await dialect.transact(db, async (tx) => {
        if (files.length > 0) await saveFiles(tx, files, at);
        if (outcomes.length > 0) await saveOutcomes(tx, outcomes, at);
      });
    },
  };
}

/** Rows per insert, well under every dialect's limit on bound parameters. */
const BATCH = 200;

function batches<T>(rows: readonly T[]): T[][] {
  const out = [];
  for (let i = 0; i < rows.length; i += BATCH) out.push(rows.slice(i, i + BATCH));
  return out;
}

async function saveFiles(tx: Executor, files: readonly IndexedFile[], at: string): Promise<void> {
  for (const batch of batches(files)) await upsertFiles(tx, batch, at);
  await trim(tx, "workflow_files");
}

async function upsertFiles(tx: Executor, files: readonly IndexedFile[], at: string): Promise<void> {
  await tx.insertInto("workflow_files").values(files.map((f) => ({
    source: f.source,
    path: f.path,
    version: f.version,
    digest: f.digest,
    workflow_id: f.workflowId,
    written_at: at,
  }))).onConflict((oc) =>
    oc.columns(["path", "source"]).doUpdateSet((eb) => ({
      version: eb.ref("excluded.version"),
      digest: eb.ref("excluded.digest"),
      workflow_id: eb.ref("excluded.workflow_id"),
      written_at: eb.ref("excluded.written_at"),
    }))
  ).execute();
}

async function saveOutcomes(
  tx: Executor,
  outcomes: readonly StoredOutcome[],
  at: string,
): Promise<void> {
  for (const batch of batches(outcomes)) await upsertOutcomes(tx, batch, at);
  await trim(tx, "workflow_outcomes");
}

async function upsertOutcomes(
  tx: Executor,
  outcomes: readonly StoredOutcome[],
  at: string,
): Promise<void> {
  await tx.insertInto("workflow_outcomes").values(outcomes.map((o) => ({
    digest: o.digest,
    routines_key: o.routinesKey,
    written_at: at,
    summary: JSON.stringify(o.listed),
    outcome: seal(o.result),
  }))).onConflict((oc) =>
    oc.column("digest").doUpdateSet((eb) => ({
      routines_key: eb.ref("excluded.routines_key"),
      written_at: eb.ref("excluded.written_at"),
      summary: eb.ref("excluded.summary"),
      outcome: eb.ref("excluded.outcome"),
    }))
  ).execute();
}

/** Each table's key, the tie-break when rows were written at the same time. */
const KEYS = {
  workflow_files: ["path", "source"],
  workflow_outcomes: ["digest"],
} as const;

/** Deletes all but the newest {@linkcode WORKFLOW_CACHE_ROWS} rows (by time written, then key). */
async function trim(tx: Executor, table: keyof typeof KEYS): Promise<void> {
  const names = ["written_at", ...KEYS[table]];
  const columns = sql.join(names.map((c) => sql.ref(c)));
  const descending = sql.join(names.map((c) => sql`${sql.ref(c)} DESC`));
  const cutoff = await sql<Record<string, string>>`SELECT ${columns} FROM ${sql.table(table)}
    ORDER BY ${descending} LIMIT 1 OFFSET ${WORKFLOW_CACHE_ROWS - 1}`.execute(tx);
  const oldestKept = cutoff.rows[0];
  if (!oldestKept) return;
  const values = sql.join(names.map((c) => oldestKept[c]));
  await sql`DELETE FROM ${sql.table(table)} WHERE (${columns}) < (${values})`.execute(tx);
}
