/**
 * The store port over libSQL: Kysely for typed queries, one write transaction per call
 * (`BEGIN IMMEDIATE`, so writers in different processes queue on the busy timeout), events
 * appended and projections updated together.
 * @module
 */
import { type Client, createClient } from "npm:@libsql/client@0.18.0";
import { LibsqlDialect } from "npm:@libsql/kysely-libsql@0.4.1";
import { Kysely, type Selectable, sql, type Transaction } from "npm:kysely@0.29.9";
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
  type RunHit,
  type RunRecord,
  type RunState,
  type SearchLayer,
  type SearchQuery,
  type SessionRunSummary,
  type SessionSummary,
  StorageBusyError,
  StorageCorruptionError,
  type Store,
  type StoreWriter,
} from "../engine/mod.ts";
import { createHash } from "node:crypto";
import type { Database, NodesTable } from "./schema.ts";
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
  "n.step_count",
] as const;

/** A node row with its edge kind and the notes recorded on arrival (what node reads select). */
type NodeRow =
  & Pick<
    Selectable<NodesTable>,
    | "run_id"
    | "node_id"
    | "session_id"
    | "parent_id"
    | "node_kind"
    | "depth"
    | "state"
    | "context"
    | "preferences"
    | "pending_step_id"
    | "step_count"
  >
  & { edge_kind: string | null; notes_markdown: string | null; notes_step_id: string | null };

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
    stepCount: row.step_count,
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

/** Characters of an artifact preview in the search index. */
const ARTIFACT_PREVIEW_CHARS = 600;
/** Characters of a notes preview in search results and the session resource. */
const PREVIEW_CHARS = 160;

/** The indexed text of an output: its notes and a small preview of its artifacts. */
function searchText(notes: string | null, artifacts: readonly unknown[]): string {
  const preview = artifacts.length > 0
    ? JSON.stringify(artifacts).slice(0, ARTIFACT_PREVIEW_CHARS)
    : "";
  return [notes ?? "", preview].filter(Boolean).join("\n");
}

function preview(text: string | null): string | null {
  if (text === null) return null;
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 1)}…` : flat;
}

/** An FTS5 query that matches any of the words, each quoted (so no word is FTS syntax). */
export function ftsQuery(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}

interface HitRow {
  run_id: string;
  session_id: string;
  title: string;
  kind: string;
  health: string;
  workflow_id: string;
  updated_at: string;
  last_node_id: string;
  pending_step_id: string | null;
  workspace: string | null;
  git_branch: string | null;
  git_head_sha: string | null;
  tip_text: string | null;
}

/** Details of the given runs, keyed by run id: one indexed query, whatever the store holds. */
async function hydrate(ex: Executor, runIds: readonly string[]): Promise<Map<string, HitRow>> {
  if (runIds.length === 0) return new Map();
  const result = await sql<HitRow>`
    SELECT r.run_id, r.session_id, s.title, s.kind, s.health, r.workflow_id, r.updated_at,
      r.last_node_id, n.pending_step_id, r.workspace, r.git_branch, r.git_head_sha,
      t.text AS tip_text
    FROM runs r JOIN sessions s ON s.session_id = r.session_id
    JOIN nodes n ON n.run_id = r.run_id AND n.node_id = r.last_node_id
    LEFT JOIN search_tips t ON t.rowid = r.rowid
    WHERE r.run_id IN (${sql.join(runIds)})`.execute(ex);
  return new Map(result.rows.map((r) => [r.run_id, r]));
}

function toHit(row: HitRow, match: { relevance: number; snippet: string | null }): RunHit {
  const { relevance, snippet } = match;
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    title: row.title,
    sessionKind: row.kind === "notes" ? "notes" : "workflow",
    corrupt: row.health === "corrupt",
    workflowId: row.workflow_id,
    status: row.pending_step_id === null ? "complete" : "running",
    updatedAt: row.updated_at,
    tipNodeId: row.last_node_id,
    tipPendingStepId: row.pending_step_id,
    workspace: row.workspace,
    gitBranch: row.git_branch,
    gitHeadSha: row.git_head_sha,
    relevance,
    snippet: snippet ?? preview(row.tip_text),
  };
}

/** One search layer of `resume_session`: bounded reads through indexes and FTS5. */
async function searchRuns(
  ex: Executor,
  search: { layer: SearchLayer; query: SearchQuery },
): Promise<RunHit[]> {
  const { layer, query } = search;
  const found: { runId: string; relevance: number; snippet: string | null }[] = [];
  if (layer === "id") {
    if (query.ids.length === 0) return [];
    const rows = await sql<{ run_id: string }>`
      SELECT run_id FROM runs WHERE run_id IN (${sql.join(query.ids)})
      UNION SELECT run_id FROM runs WHERE session_id IN (${sql.join(query.ids)})
      LIMIT ${query.limit}`.execute(ex);
    for (const r of rows.rows) found.push({ runId: r.run_id, relevance: 0, snippet: null });
  } else if (layer === "recent") {
    const rows = await sql<{ run_id: string }>`
      SELECT run_id FROM (SELECT run_id FROM runs WHERE workspace = ${query.workspace}
        ORDER BY updated_at DESC LIMIT ${query.limit})
      UNION SELECT run_id FROM (SELECT run_id FROM runs ORDER BY updated_at DESC LIMIT ${query.limit})`
      .execute(ex);
    for (const r of rows.rows) found.push({ runId: r.run_id, relevance: 0, snippet: null });
  } else {
    if (query.terms.length === 0) return [];
    const match = ftsQuery(query.terms);
    const rows = layer === "title"
      ? await sql<{ run_id: string; relevance: number; snip: string }>`
        SELECT r.run_id, bm25(search_titles) AS relevance,
          snippet(search_titles, 0, '«', '»', '…', 12) AS snip
        FROM search_titles JOIN runs r ON r.rowid = search_titles.rowid
        WHERE search_titles MATCH ${match} ORDER BY relevance LIMIT ${query.limit}`.execute(ex)
      : layer === "tip_notes"
      ? await sql<{ run_id: string; relevance: number; snip: string }>`
        SELECT r.run_id, bm25(search_tips) AS relevance,
          snippet(search_tips, 0, '«', '»', '…', 12) AS snip
        FROM search_tips JOIN runs r ON r.rowid = search_tips.rowid
        WHERE search_tips MATCH ${match} ORDER BY relevance LIMIT ${query.limit}`.execute(ex)
      : await sql<{ run_id: string; relevance: number; snip: string }>`
        SELECT o.run_id, bm25(search_outputs) AS relevance,
          snippet(search_outputs, 0, '«', '»', '…', 12) AS snip
        FROM search_outputs JOIN outputs o ON o.rowid = search_outputs.rowid
        WHERE search_outputs MATCH ${match} ORDER BY relevance LIMIT ${query.limit * 4}`
        .execute(ex);
    const seen = new Set<string>();
    for (const r of rows.rows) {
      if (seen.has(r.run_id)) continue;
      seen.add(r.run_id);
      found.push({ runId: r.run_id, relevance: Number(r.relevance), snippet: r.snip });
      if (found.length >= query.limit) break;
    }
  }
  const rows = await hydrate(ex, found.map((f) => f.runId));
  const hits: RunHit[] = [];
  for (const f of found) {
    const row = rows.get(f.runId);
    if (row) hits.push(toHit(row, f));
  }
  return hits;
}

interface SessionRow {
  session_id: string;
  title: string;
  kind: string;
  health: string;
  event_count: number;
  created_at: string;
  updated_at: string;
}

async function sessionRuns(ex: Executor, sessionId: string): Promise<SessionRunSummary[]> {
  const result = await sql<{
    run_id: string;
    workflow_id: string;
    goal: string | null;
    status: string;
    node_count: number;
    last_node_id: string | null;
    pending_step_id: string | null;
    tip_text: string | null;
    workspace: string | null;
    git_branch: string | null;
    git_head_sha: string | null;
    created_at: string;
    updated_at: string;
  }>`
    SELECT r.run_id, r.workflow_id, r.goal, r.status, r.node_count, r.last_node_id,
      n.pending_step_id, t.text AS tip_text, r.workspace, r.git_branch, r.git_head_sha,
      r.created_at, r.updated_at
    FROM runs r
    LEFT JOIN nodes n ON n.run_id = r.run_id AND n.node_id = r.last_node_id
    LEFT JOIN search_tips t ON t.rowid = r.rowid
    WHERE r.session_id = ${sessionId} ORDER BY r.created_at, r.run_id LIMIT 50`.execute(ex);
  return result.rows.map((r) => ({
    runId: r.run_id,
    workflowId: r.workflow_id,
    goal: r.goal,
    status: r.status,
    nodeCount: r.node_count,
    tipNodeId: r.last_node_id,
    tipPendingStepId: r.pending_step_id,
    latestNotes: preview(r.tip_text),
    workspace: r.workspace,
    gitBranch: r.git_branch,
    gitHeadSha: r.git_head_sha,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }));
}

function toSession(row: SessionRow, runs: SessionRunSummary[]): SessionSummary {
  return {
    sessionId: row.session_id,
    title: row.title,
    sessionKind: row.kind === "notes" ? "notes" : "workflow",
    health: row.health,
    eventCount: row.event_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    runs,
  };
}

async function listSessions(
  ex: Executor,
  options: { limit: number; offset: number },
): Promise<SessionSummary[]> {
  const rows = await ex.selectFrom("sessions")
    .select(["session_id", "title", "kind", "health", "event_count", "created_at", "updated_at"])
    .orderBy("updated_at", "desc").orderBy("session_id")
    .limit(options.limit).offset(options.offset).execute();
  return rows.map((r) => toSession(r, []));
}

async function getSession(ex: Executor, sessionId: string): Promise<SessionSummary | null> {
  const row = await ex.selectFrom("sessions")
    .select(["session_id", "title", "kind", "health", "event_count", "created_at", "updated_at"])
    .where("session_id", "=", sessionId).executeTakeFirst();
  return row ? toSession(row, await sessionRuns(ex, sessionId)) : null;
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
          .select([
            "r.run_id",
            "r.session_id",
            "r.workflow_id",
            "r.workflow_hash",
            "s.health",
            "r.workspace",
            "r.git_branch",
            "r.git_head_sha",
          ])
          .where("r.run_id", "=", runId).executeTakeFirst();
        if (!row) return null;
        const observed = row.workspace !== null || row.git_branch !== null ||
          row.git_head_sha !== null;
        return {
          runId: row.run_id,
          sessionId: row.session_id,
          workflowId: row.workflow_id,
          workflowHash: row.workflow_hash,
          corrupt: row.health === "corrupt",
          observed: observed
            ? {
              workspace: row.workspace,
              gitBranch: row.git_branch,
              gitHeadSha: row.git_head_sha,
            }
            : null,
        };
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
      searchRuns: (layer, query) => searchRuns(ex, { layer, query }),
      listSessions: (options) => listSessions(ex, options),
      getSession: (sessionId) => getSession(ex, sessionId),
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
          kind: event.sessionKind ?? "workflow",
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
        await sql`INSERT INTO search_titles(rowid, text)
          SELECT r.rowid, s.title || ' ' || CASE WHEN r.goal = s.title THEN '' ELSE coalesce(r.goal, '') END
            || ' ' || r.workflow_id
          FROM runs r JOIN sessions s ON s.session_id = r.session_id
          WHERE r.run_id = ${event.runId}`.execute(tx);
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
          // step nodes from the root: the parent's count, plus one for a step node
          step_count: sql<number>`coalesce((SELECT p.step_count FROM nodes p
            WHERE p.run_id = ${event.runId} AND p.node_id = ${event.parentId}), 0)
            + ${event.nodeKind === "step" ? 1 : 0}`,
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
      case "output_recorded": {
        const inserted = await tx.insertInto("outputs").values({
          run_id: event.runId,
          node_id: event.nodeId,
          step_id: event.stepId,
          notes_markdown: event.notesMarkdown,
          artifacts: JSON.stringify(event.artifacts),
          created_seq: seq,
        }).executeTakeFirstOrThrow();
        const text = searchText(event.notesMarkdown, event.artifacts);
        await tx.insertInto("search_outputs")
          .values({ rowid: Number(inserted.insertId), text }).execute();
        // The run's tip text, keyed by the run's rowid: one statement (FTS5 honours REPLACE).
        await sql`INSERT OR REPLACE INTO search_tips (rowid, text)
          SELECT rowid, ${text} FROM runs WHERE run_id = ${event.runId}`.execute(tx);
        return;
      }
      case "observation_recorded":
        await tx.insertInto("observations").values({
          seq,
          session_id: event.sessionId,
          run_id: event.runId,
          node_id: event.nodeId,
          workspace: event.workspace,
          git_branch: event.gitBranch,
          git_head_sha: event.gitHeadSha,
          at,
        }).execute();
        await tx.updateTable("runs").set({
          workspace: event.workspace,
          git_branch: event.gitBranch,
          git_head_sha: event.gitHeadSha,
        }).where("run_id", "=", event.runId).execute();
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
