/**
 * The store port over libSQL: Kysely for typed queries, one write transaction per call
 * (`BEGIN IMMEDIATE`, so writers in different processes queue on the busy timeout), events
 * appended and projections updated together.
 * @module
 */
import { type Client, createClient } from "npm:@libsql/client@0.18.0";
import { LibsqlDialect } from "npm:@libsql/kysely-libsql@0.4.1";
import { Kysely, sql, type Transaction } from "npm:kysely@0.29.9";
import {
  type AttemptRecord,
  autonomySchema,
  type CompiledWorkflow,
  type DomainEvent,
  type EdgeKind,
  type NodeKind,
  type NodeRecord,
  type Preferences,
  riskPolicySchema,
  type RunRecord,
  type RunState,
  StorageBusyError,
  StorageCorruptionError,
  type Store,
  type StoreWriter,
} from "../engine/mod.ts";
import { createHash } from "node:crypto";
import type { Database } from "./schema.ts";
import { migrateToLatest } from "./migrations.ts";

/** Options for {@linkcode openStore}. */
export interface OpenStoreOptions {
  /** How long a writer waits for a lock held by another process, in ms. */
  busyTimeoutMs?: number;
  /** Current time, for event timestamps. */
  now?: () => string;
}

/** The libSQL store: the port plus what adapters (viewer, CLI) need besides. */
export interface SqliteStore extends Store {
  /** The typed query builder, for read-only adapters. */
  readonly db: Kysely<Database>;
  /** The underlying client. */
  readonly client: Client;
  /** Row counts of every table (diagnostics and tests). */
  counts(): Promise<Record<keyof Database, number>>;
  /** Closes the database. */
  close(): Promise<void>;
}

type Executor = Kysely<Database> | Transaction<Database>;

const NODE_COLUMNS = [
  "n.run_id",
  "n.node_id",
  "n.session_id",
  "n.parent_id",
  "n.node_kind",
  "n.depth",
  "n.state",
  "n.context",
  "n.preferences",
  "n.pending_step_id",
  "e.edge_kind",
  "o.notes_markdown",
  "o.step_id as notes_step_id",
] as const;

interface NodeRow {
  run_id: string;
  node_id: string;
  session_id: string;
  parent_id: string | null;
  node_kind: string;
  depth: number;
  state: string;
  context: string;
  preferences: string;
  pending_step_id: string | null;
  edge_kind: string | null;
  notes_markdown: string | null;
  notes_step_id: string | null;
}

const AUTONOMY = new Set<unknown>(autonomySchema.options);
const RISK = new Set<unknown>(riskPolicySchema.options);

/** SHA-256 hex, synchronously: digests are computed on every append and replay. */
function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function parseJson<T>(text: string, what: string, sessionId: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new StorageCorruptionError(`Stored ${what} is not valid JSON`, sessionId);
  }
}

function toNode(row: NodeRow): NodeRecord {
  const where = `node ${row.node_id} of run run_${row.run_id}`;
  const state = parseJson<RunState>(row.state, `state of ${where}`, row.session_id);
  const context = parseJson<Record<string, unknown>>(
    row.context,
    `context of ${where}`,
    row.session_id,
  );
  const preferences = parseJson<Preferences>(
    row.preferences,
    `preferences of ${where}`,
    row.session_id,
  );
  const kinds = ["step", "checkpoint", "blocked_attempt"];
  if (
    !AUTONOMY.has(preferences?.autonomy) || !RISK.has(preferences?.riskPolicy) ||
    typeof state?.pc !== "number" || !kinds.includes(row.node_kind) ||
    context === null || typeof context !== "object" || Array.isArray(context)
  ) {
    throw new StorageCorruptionError(`Stored ${where} fails its shape check`, row.session_id);
  }
  return {
    sessionId: row.session_id,
    runId: row.run_id,
    nodeId: row.node_id,
    parentId: row.parent_id,
    nodeKind: row.node_kind as NodeKind,
    depth: row.depth,
    state,
    context,
    preferences: { autonomy: preferences.autonomy, riskPolicy: preferences.riskPolicy },
    pendingStepId: row.pending_step_id,
    edgeKind: row.edge_kind as EdgeKind | null,
    notesMarkdown: row.notes_markdown,
    notesStepId: row.notes_step_id,
  };
}

function isBusy(error: unknown): boolean {
  const text = String((error as { code?: string })?.code ?? "") +
    String((error as Error)?.message ?? "");
  return /SQLITE_BUSY|database is locked/i.test(text);
}

/**
 * Runs `fn`, retrying while the database is locked by another process, for up to `timeoutMs`.
 * Setting WAL mode on a new file can report "locked" at once instead of waiting.
 */
async function withBusyRetry(timeoutMs: number, fn: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 10;; wait = Math.min(wait * 2, 200)) {
    try {
      return await fn();
    } catch (error) {
      if (!isBusy(error) || Date.now() + wait > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Opens (creating and migrating if needed) a libSQL database as a waymark store. */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<SqliteStore> {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const client = createClient(
    { url, timeout: busyTimeoutMs } as Parameters<typeof createClient>[0],
  );
  await withBusyRetry(busyTimeoutMs, async () => {
    if (url.startsWith("file:")) {
      await client.execute("PRAGMA journal_mode = WAL");
      await client.execute("PRAGMA synchronous = NORMAL");
    }
    await migrateToLatest(client);
  });
  const db = new Kysely<Database>({ dialect: new LibsqlDialect({ client: client as never }) });
  const now = options.now ?? (() => new Date().toISOString());
  const snapshots = new Map<string, CompiledWorkflow>();

  function nodeQuery(ex: Executor) {
    return ex.selectFrom("nodes as n")
      .leftJoin(
        "edges as e",
        (j) => j.onRef("e.run_id", "=", "n.run_id").onRef("e.to_id", "=", "n.node_id"),
      )
      .leftJoin(
        "outputs as o",
        (j) => j.onRef("o.run_id", "=", "n.run_id").onRef("o.node_id", "=", "n.node_id"),
      )
      .select(NODE_COLUMNS);
  }

  function reader(ex: Executor): Omit<StoreWriter, "append"> {
    return {
      async getRun(runId): Promise<RunRecord | null> {
        const row = await ex.selectFrom("runs as r")
          .innerJoin("sessions as s", "s.session_id", "r.session_id")
          .select(["r.run_id", "r.session_id", "r.workflow_id", "r.workflow_hash", "s.health"])
          .where("r.run_id", "=", runId).executeTakeFirst();
        return row
          ? {
            runId: row.run_id,
            sessionId: row.session_id,
            workflowId: row.workflow_id,
            workflowHash: row.workflow_hash,
            corrupt: row.health === "corrupt",
          }
          : null;
      },
      async getNode(runId, nodeId) {
        const row = await nodeQuery(ex).where("n.run_id", "=", runId).where(
          "n.node_id",
          "=",
          nodeId,
        )
          .executeTakeFirst();
        return row ? toNode(row as NodeRow) : null;
      },
      async getAttempt(runId, nodeId, attemptId, kind): Promise<AttemptRecord | null> {
        const row = await ex.selectFrom("attempts as a")
          .innerJoin("runs as r", "r.run_id", "a.run_id")
          .innerJoin("sessions as s", "s.session_id", "r.session_id")
          .select([
            "a.node_id",
            "a.attempt_id",
            "a.outcome",
            "a.response",
            "a.response_digest",
            "s.session_id",
            "s.health",
          ])
          .where("a.run_id", "=", runId).where("a.node_id", "=", nodeId)
          .where("a.attempt_id", "=", attemptId).where("a.attempt_kind", "=", kind)
          .executeTakeFirst();
        if (!row) return null;
        if (digest(row.response) !== row.response_digest) {
          // Outside a transaction, record the finding; inside one it would roll back with the error.
          if (ex === db) {
            await db.updateTable("sessions").set({ health: "corrupt" })
              .where("session_id", "=", row.session_id).execute().catch(() => {});
          }
          throw new StorageCorruptionError(
            `The recorded response of attempt ${attemptId} on node ${nodeId} fails its digest check`,
            row.session_id,
          );
        }
        return {
          nodeId: row.node_id,
          attemptId: row.attempt_id,
          outcome: row.outcome as AttemptRecord["outcome"],
          response: row.response,
          sessionId: row.session_id,
          corrupt: row.health === "corrupt",
        };
      },
      async getChildren(runId, nodeId) {
        const rows = await nodeQuery(ex).where("n.run_id", "=", runId).where(
          "n.parent_id",
          "=",
          nodeId,
        )
          .where("n.node_kind", "!=", "blocked_attempt")
          .orderBy("n.created_seq").execute();
        return rows.map((r) => toNode(r as NodeRow));
      },
      async getAncestorNotes(runId, nodeId, limit) {
        const result = await sql<{
          node_id: string;
          node_kind: string;
          notes_markdown: string | null;
          step_id: string | null;
        }>`
          WITH RECURSIVE up(node_id, parent_id, hop) AS (
            SELECT node_id, parent_id, 0 FROM nodes WHERE run_id = ${runId} AND node_id = ${nodeId}
            UNION ALL
            SELECT p.node_id, p.parent_id, up.hop + 1 FROM nodes p JOIN up
              ON p.run_id = ${runId} AND p.node_id = up.parent_id
            WHERE up.hop + 1 < ${limit}
          )
          SELECT n.node_id, n.node_kind, o.notes_markdown, o.step_id
          FROM up CROSS JOIN nodes n ON n.run_id = ${runId} AND n.node_id = up.node_id
          LEFT JOIN outputs o ON o.run_id = n.run_id AND o.node_id = n.node_id
          ORDER BY up.hop`.execute(ex);
        return result.rows.map((r) => ({
          nodeId: r.node_id,
          nodeKind: r.node_kind as NodeKind,
          notesMarkdown: r.notes_markdown,
          notesStepId: r.step_id,
        }));
      },
      async getPreferredTip(runId, nodeId) {
        // Only rehydrates of a node that is not a tip come here; it reads that node's subtree.
        const result = await sql<{ node_id: string }>`
          WITH RECURSIVE sub(node_id) AS (
            SELECT ${nodeId}
            UNION ALL
            SELECT c.node_id FROM nodes c JOIN sub ON c.run_id = ${runId} AND c.parent_id = sub.node_id
          )
          SELECT n.node_id FROM sub JOIN nodes n ON n.run_id = ${runId} AND n.node_id = sub.node_id
          WHERE n.node_kind != 'blocked_attempt'
          ORDER BY n.created_seq DESC LIMIT 1`.execute(ex);
        const tipId = result.rows[0]?.node_id ?? nodeId;
        const row = await nodeQuery(ex).where("n.run_id", "=", runId).where("n.node_id", "=", tipId)
          .executeTakeFirstOrThrow();
        return toNode(row as NodeRow);
      },
      async getSnapshot(hash) {
        const cached = snapshots.get(hash);
        if (cached) return cached;
        const row = await ex.selectFrom("workflow_snapshots").select(["compiled", "workflow_id"])
          .where("workflow_hash", "=", hash).executeTakeFirst();
        if (!row) return null;
        let compiled: CompiledWorkflow;
        try {
          compiled = JSON.parse(row.compiled) as CompiledWorkflow;
        } catch {
          throw new StorageCorruptionError(`The pinned workflow ${hash} is not valid JSON`, null);
        }
        // Content-addressed and immutable: safe to keep for the life of the process.
        snapshots.set(hash, compiled);
        return compiled;
      },
    };
  }

  async function append(tx: Transaction<Database>, events: readonly DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const at = now();
    const rows = events.map((event) => {
      const payload = JSON.stringify(event);
      return {
        session_id: event.sessionId,
        run_id: "runId" in event ? event.runId : null,
        kind: event.kind,
        payload,
        digest: digest(`${event.kind}\n${payload}`),
        at,
      };
    });
    // One statement for the whole batch: inside the write lock SQLite hands out consecutive
    // sequence numbers in row order, so each event's seq follows from the last one.
    const inserted = await tx.insertInto("events").values(rows).executeTakeFirstOrThrow();
    const first = Number(inserted.insertId) - events.length + 1;
    for (const [i, event] of events.entries()) await project(tx, event, first + i, at);
    await tx.updateTable("sessions")
      .set((eb) => ({ updated_at: at, event_count: eb("event_count", "+", events.length) }))
      .where("session_id", "=", events[0]!.sessionId).execute();
  }

  async function project(
    tx: Transaction<Database>,
    event: DomainEvent,
    seq: number,
    at: string,
  ): Promise<void> {
    switch (event.kind) {
      case "session_created":
        await tx.insertInto("sessions").values({
          session_id: event.sessionId,
          title: event.title,
          created_at: at,
          updated_at: at,
          health: "healthy",
          event_count: 0,
        }).execute();
        return;
      case "run_started":
        await tx.insertInto("runs").values({
          run_id: event.runId,
          session_id: event.sessionId,
          workflow_id: event.workflowId,
          workflow_hash: event.workflowHash,
          goal: event.goal,
          created_at: at,
          updated_at: at,
          last_node_id: null,
          status: "running",
          node_count: 0,
        }).execute();
        return;
      case "workflow_pinned":
        if (event.compiled) {
          await tx.insertInto("workflow_snapshots").values({
            workflow_hash: event.workflowHash,
            workflow_id: event.compiled.id,
            compiled: JSON.stringify(event.compiled),
            created_at: at,
          }).onConflict((oc) => oc.doNothing()).execute();
        }
        return;
      case "node_created":
        await tx.insertInto("nodes").values({
          run_id: event.runId,
          node_id: event.nodeId,
          session_id: event.sessionId,
          parent_id: event.parentId,
          node_kind: event.nodeKind,
          depth: event.depth,
          state: JSON.stringify(event.state),
          context: JSON.stringify(event.context),
          preferences: JSON.stringify(event.preferences),
          pending_step_id: event.pendingStepId,
          is_complete: event.pendingStepId === null ? 1 : 0,
          created_seq: seq,
          created_at: at,
        }).execute();
        await tx.updateTable("runs").set((eb) => ({
          updated_at: at,
          ...(event.nodeKind === "blocked_attempt" ? {} : { last_node_id: event.nodeId }),
          node_count: eb("node_count", "+", 1),
          ...(event.pendingStepId === null ? { status: "complete" } : {}),
        })).where("run_id", "=", event.runId).execute();
        return;
      case "edge_created":
        await tx.insertInto("edges").values({
          run_id: event.runId,
          from_id: event.fromId,
          to_id: event.toId,
          edge_kind: event.edgeKind,
          created_seq: seq,
        }).execute();
        return;
      case "output_recorded":
        await tx.insertInto("outputs").values({
          run_id: event.runId,
          node_id: event.nodeId,
          step_id: event.stepId,
          notes_markdown: event.notesMarkdown,
          artifacts: JSON.stringify(event.artifacts),
          created_seq: seq,
        }).execute();
        return;
      case "preference_changed":
      case "gap_recorded":
      case "capability_observed":
      case "divergence_recorded":
        // The log is their record; the viewer's projections of them come with the viewer.
        return;
      case "advance_recorded":
      case "checkpoint_recorded":
        await tx.insertInto("attempts").values({
          run_id: event.runId,
          node_id: event.nodeId,
          attempt_id: event.attemptId,
          attempt_kind: event.kind === "advance_recorded" ? "ack" : "checkpoint",
          outcome: event.kind === "advance_recorded" ? event.outcome : "checkpointed",
          result_node_id: event.resultNodeId,
          response: event.response,
          response_digest: digest(event.response),
          created_seq: seq,
        }).execute();
        return;
    }
  }

  const base = reader(db);
  return {
    ...base,
    db,
    client,
    async write<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
      try {
        return await db.transaction().execute((tx) =>
          fn({ ...reader(tx), append: (events) => append(tx, events) })
        );
      } catch (error) {
        if (isBusy(error)) throw new StorageBusyError(String((error as Error).message));
        throw error;
      }
    },
    async counts() {
      const tables = [
        "events",
        "sessions",
        "runs",
        "workflow_snapshots",
        "nodes",
        "edges",
        "attempts",
        "outputs",
      ] as const;
      const out = {} as Record<keyof Database, number>;
      for (const table of tables) {
        const row = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(
          db,
        );
        out[table] = Number(row.rows[0]?.n ?? 0);
      }
      return out;
    },
    async close() {
      await db.destroy();
      client.close();
    },
  };
}
