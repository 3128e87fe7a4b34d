/**
 * The viewer's read-only queries, typed with Kysely over the store's schema. Nothing here
 * writes. Every list is bounded (a page, or a cap with a `truncated` flag), so a request costs
 * the same whether the database holds ten sessions or ten thousand.
 * @module
 */
import { type ExpressionBuilder, type Kysely, sql } from "npm:kysely@0.29.9";
import type { CompiledWorkflow } from "../engine/mod.ts";
import type { Database, SessionsTable } from "../store/sql/schema.ts";

/** The typed database the viewer reads. */
export type ViewerDb = Kysely<Database>;

/** Nodes (`n`) with the output recorded on arrival at each (`o`, left joined). */
function nodesWithOutputs(db: ViewerDb) {
  return db.selectFrom("nodes as n").leftJoin(
    "outputs as o",
    (j) => j.onRef("o.run_id", "=", "n.run_id").onRef("o.node_id", "=", "n.node_id"),
  );
}

/** {@linkcode nodesWithOutputs} with each node's parent (`p`, left joined). */
function nodesWithParent(db: ViewerDb) {
  return nodesWithOutputs(db).leftJoin(
    "nodes as p",
    (j) => j.onRef("p.run_id", "=", "n.run_id").onRef("p.node_id", "=", "n.parent_id"),
  );
}

/** Sessions per page in the list. */
export const SESSIONS_PAGE_SIZE = 50;
/** Most runs listed in a session's sidebar. */
export const MAX_RUNS = 100;
/** Most nodes of one run drawn in its graph (the newest are kept). */
export const MAX_GRAPH_NODES = 2_000;
/** Most entries on the "steps on this branch" list (the nearest the focused node are kept). */
export const MAX_BRANCH_STEPS = 100;
/** Most nodes on the session timeline (the newest are kept). */
export const MAX_TIMELINE_NODES = 2_000;
/** Most session notes (checkpoint notes) shown. */
export const MAX_SESSION_NOTES = 20;
/** Most attempts listed for one node. */
export const MAX_ATTEMPTS = 50;
/** Most nodes of one run in a Markdown export. */
export const MAX_EXPORT_NODES = 20_000;

/** Session status as the list shows it. */
export type SessionStatus = "running" | "complete" | "corrupt" | "empty";

/** Filters of the sessions list. Every field is optional; each adds one `WHERE` clause. */
export interface SessionFilters {
  /** Free text over the title, the session id, workflow ids and goals. */
  q?: string;
  /** Only sessions with a run of this workflow. */
  workflow?: string;
  /** Only sessions with a run in this workspace (the folder recorded from MCP roots). */
  workspace?: string;
  /** Only sessions in this status. */
  status?: Exclude<SessionStatus, "empty">;
  /** Last activity: within a day, a week, a month, or older than a month. */
  age?: AgeFilter;
}

/** The age filter's values. */
export type AgeFilter = "1d" | "7d" | "30d" | "older30d";

/** Every age filter value, in the order the form offers them. */
export const AGE_FILTERS: readonly AgeFilter[] = ["1d", "7d", "30d", "older30d"];
/** Every status filter value. */
export const STATUS_FILTERS: readonly Exclude<SessionStatus, "empty">[] = [
  "running",
  "complete",
  "corrupt",
];

/** One row of the sessions list. */
export interface SessionSummary {
  /** Session id (hex). */
  sessionId: string;
  /** Title (the goal of its first run, or the workflow's name). */
  title: string;
  /** ISO time. */
  createdAt: string;
  /** ISO time of the last event. */
  updatedAt: string;
  /** `healthy` or `corrupt`. */
  health: string;
  /** Events in the log. */
  eventCount: number;
  /** Derived status. */
  status: SessionStatus;
  /** Runs in the session. */
  runCount: number;
  /** Distinct workflow ids of its runs. */
  workflows: string[];
}

/** A page of sessions. */
export interface SessionPage {
  /** The rows. */
  sessions: SessionSummary[];
  /** Offset of the first row. */
  offset: number;
  /** Page size. */
  limit: number;
  /** Whether another page follows. */
  hasMore: boolean;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function ageCutoff(age: AgeFilter, now: Date): string {
  const days = age === "1d" ? 1 : age === "7d" ? 7 : 30;
  return new Date(now.getTime() - days * 86_400_000).toISOString();
}

function deriveStatus(health: string, statuses: string[]): SessionStatus {
  if (health === "corrupt") return "corrupt";
  if (statuses.length === 0) return "empty";
  return statuses.includes("running") ? "running" : "complete";
}

/** A page of sessions, most recently active first. */
export async function listSessions(
  db: ViewerDb,
  filters: SessionFilters,
  page: { offset: number; limit?: number },
  now: Date = new Date(),
): Promise<SessionPage> {
  const limit = Math.min(Math.max(page.limit ?? SESSIONS_PAGE_SIZE, 1), 200);
  const offset = Math.max(0, Math.floor(page.offset));
  let query = db.selectFrom("sessions as s").select([
    "s.session_id",
    "s.title",
    "s.created_at",
    "s.updated_at",
    "s.health",
    "s.event_count",
  ]);
  const q = filters.q?.trim();
  if (q) {
    const like = `%${escapeLike(q)}%`;
    const idPrefix = `${escapeLike(q.replace(/^ses_/, "").toLowerCase())}%`;
    query = query.where((eb) =>
      eb.or([
        sql<boolean>`s.title LIKE ${like} ESCAPE '\\'`,
        sql<boolean>`s.session_id LIKE ${idPrefix} ESCAPE '\\'`,
        eb.exists(
          eb.selectFrom("runs as r").select(sql`1`.as("one"))
            .whereRef("r.session_id", "=", "s.session_id")
            .where((rb) =>
              rb.or([
                sql<boolean>`r.workflow_id LIKE ${like} ESCAPE '\\'`,
                sql<boolean>`r.goal LIKE ${like} ESCAPE '\\'`,
              ])
            ),
        ),
      ])
    );
  }
  if (filters.workflow) {
    const workflow = filters.workflow;
    query = query.where((eb) =>
      eb.exists(
        eb.selectFrom("runs as r").select(sql`1`.as("one"))
          .whereRef("r.session_id", "=", "s.session_id").where("r.workflow_id", "=", workflow),
      )
    );
  }
  if (filters.workspace) {
    const workspace = filters.workspace;
    query = query.where((eb) =>
      eb.exists(
        eb.selectFrom("runs as r").select(sql`1`.as("one"))
          .whereRef("r.session_id", "=", "s.session_id").where("r.workspace", "=", workspace),
      )
    );
  }
  if (filters.status === "corrupt") query = query.where("s.health", "=", "corrupt");
  if (filters.status === "running" || filters.status === "complete") {
    const running = (eb: ExpressionBuilder<Database & { s: SessionsTable }, "s">) =>
      eb.exists(
        eb.selectFrom("runs as r").select(sql`1`.as("one"))
          .whereRef("r.session_id", "=", "s.session_id").where("r.status", "=", "running"),
      );
    query = query.where("s.health", "!=", "corrupt");
    query = filters.status === "running"
      ? query.where((eb) => running(eb))
      : query.where((eb) =>
        eb.and([
          eb.not(running(eb)),
          eb.exists(
            eb.selectFrom("runs as r").select(sql`1`.as("one"))
              .whereRef("r.session_id", "=", "s.session_id"),
          ),
        ])
      );
  }
  if (filters.age) {
    const cutoff = ageCutoff(filters.age, now);
    query = filters.age === "older30d"
      ? query.where("s.updated_at", "<", cutoff)
      : query.where("s.updated_at", ">=", cutoff);
  }
  const rows = await query.orderBy("s.updated_at", "desc").orderBy("s.session_id")
    .limit(limit + 1).offset(offset).execute();
  const pageRows = rows.slice(0, limit);
  const ids = pageRows.map((r) => r.session_id);
  const runs = ids.length === 0 ? [] : await db.selectFrom("runs")
    .select(["session_id", "workflow_id", "status"])
    .where("session_id", "in", ids).orderBy("created_at").execute();
  const bySession = new Map<string, { workflow_id: string; status: string }[]>();
  for (const run of runs) {
    const list = bySession.get(run.session_id) ?? [];
    list.push(run);
    bySession.set(run.session_id, list);
  }
  return {
    sessions: pageRows.map((r) => {
      const own = bySession.get(r.session_id) ?? [];
      return {
        sessionId: r.session_id,
        title: r.title,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        health: r.health,
        eventCount: Number(r.event_count),
        status: deriveStatus(r.health, own.map((x) => x.status)),
        runCount: own.length,
        workflows: [...new Set(own.map((x) => x.workflow_id))],
      };
    }),
    offset,
    limit,
    hasMore: rows.length > limit,
  };
}

/** Workflow ids that have runs, for the list's filter (at most 200). */
export async function workflowIdsWithRuns(db: ViewerDb): Promise<string[]> {
  const rows = await db.selectFrom("runs").select("workflow_id").distinct()
    .orderBy("workflow_id").limit(200).execute();
  return rows.map((r) => r.workflow_id);
}

/** Workspaces that have runs, for the list's filter (at most 200). */
export async function workspacesWithRuns(db: ViewerDb): Promise<string[]> {
  const rows = await db.selectFrom("runs").select("workspace").distinct()
    .where("workspace", "is not", null).orderBy("workspace").limit(200).execute();
  return rows.map((r) => r.workspace as string);
}

/** A run in a session's sidebar. */
export interface RunSummary {
  /** Run id (hex). */
  runId: string;
  /** Workflow id. */
  workflowId: string;
  /** Pinned workflow hash. */
  workflowHash: string;
  /** Human title: the goal, else the workflow's name. */
  title: string;
  /** The goal the run was started with. */
  goal: string | null;
  /** `running` or `complete`. */
  status: string;
  /** Nodes in the run. */
  nodeCount: number;
  /** Branch tips (nodes without children). */
  branchCount: number;
  /** The newest node: the preferred tip. */
  lastNodeId: string | null;
  /** ISO time. */
  createdAt: string;
  /** ISO time. */
  updatedAt: string;
}

/** A session with its runs. */
export interface SessionDetail {
  /** The session's list row. */
  session: SessionSummary;
  /** Its runs, oldest first (at most {@linkcode MAX_RUNS}). */
  runs: RunSummary[];
  /** Whether runs were left out. */
  runsTruncated: boolean;
}

/** A session and its runs, or `null`. */
export async function getSession(db: ViewerDb, sessionId: string): Promise<SessionDetail | null> {
  const row = await db.selectFrom("sessions").selectAll().where("session_id", "=", sessionId)
    .executeTakeFirst();
  if (!row) return null;
  const runs = await db.selectFrom("runs as r")
    .leftJoin("workflow_snapshots as w", "w.workflow_hash", "r.workflow_hash")
    .select([
      "r.run_id",
      "r.workflow_id",
      "r.workflow_hash",
      "r.goal",
      "r.status",
      "r.node_count",
      "r.last_node_id",
      "r.created_at",
      "r.updated_at",
      sql<string | null>`json_extract(w.compiled, '$.name')`.as("workflow_name"),
      (eb) =>
        eb.selectFrom("nodes as n").select(sql<number>`count(*)`.as("tips"))
          .whereRef("n.run_id", "=", "r.run_id")
          .where((nb) =>
            nb.not(nb.exists(
              nb.selectFrom("nodes as c").select(sql`1`.as("one"))
                .whereRef("c.run_id", "=", "n.run_id").whereRef("c.parent_id", "=", "n.node_id"),
            ))
          ).as("branch_count"),
    ])
    .where("r.session_id", "=", sessionId).orderBy("r.created_at").orderBy("r.run_id")
    .limit(MAX_RUNS + 1).execute();
  const list = runs.slice(0, MAX_RUNS).map((r): RunSummary => ({
    runId: r.run_id,
    workflowId: r.workflow_id,
    workflowHash: r.workflow_hash,
    title: r.goal ?? r.workflow_name ?? r.workflow_id,
    goal: r.goal,
    status: r.status,
    nodeCount: Number(r.node_count),
    branchCount: Number(r.branch_count ?? 0),
    lastNodeId: r.last_node_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }));
  return {
    session: {
      sessionId: row.session_id,
      title: row.title,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      health: row.health,
      eventCount: Number(row.event_count),
      status: deriveStatus(row.health, list.map((r) => r.status)),
      runCount: list.length,
      workflows: [...new Set(list.map((r) => r.workflowId))],
    },
    runs: list,
    runsTruncated: runs.length > MAX_RUNS,
  };
}

/** What changes when an agent writes to a session: compared by the live-update poller. */
export async function sessionVersion(db: ViewerDb, sessionId: string): Promise<string | null> {
  const row = await db.selectFrom("sessions").select(["updated_at", "event_count"])
    .where("session_id", "=", sessionId).executeTakeFirst();
  return row ? `${row.event_count}@${row.updated_at}` : null;
}

/** What changes when any session changes: compared by the sessions list's poller. */
export async function globalVersion(db: ViewerDb): Promise<string> {
  const row = await db.selectFrom("sessions").select([
    sql<number>`count(*)`.as("n"),
    sql<number>`coalesce(sum(event_count), 0)`.as("events"),
    sql<string | null>`max(updated_at)`.as("latest"),
  ]).executeTakeFirst();
  return `${row?.n ?? 0}/${row?.events ?? 0}@${row?.latest ?? ""}`;
}

/** One node as the run graph draws it. */
export interface GraphNodeRow {
  /** Node id (hex). */
  nodeId: string;
  /** Parent node id. */
  parentId: string | null;
  /** `step`, `checkpoint` or `blocked_attempt`. */
  kind: string;
  /** Pending step at this node (`null` once the run is complete). */
  pendingStepId: string | null;
  /** The parent's pending step: the step whose acknowledgement led here. */
  parentPendingStepId: string | null;
  /** Whether the run is complete at this node. */
  isComplete: boolean;
  /** ISO time. */
  createdAt: string;
  /** The first characters of its notes. */
  notesPreview: string | null;
}

/**
 * A run's nodes for its graph, oldest first; the newest {@linkcode MAX_GRAPH_NODES} at most.
 * Six columns only: at a thousand rows the client's per-cell cost is most of the query's time.
 */
export async function getRunNodes(
  db: ViewerDb,
  runId: string,
  max: number = MAX_GRAPH_NODES,
): Promise<{ nodes: GraphNodeRow[]; truncated: boolean }> {
  const rows = await nodesWithOutputs(db)
    .select([
      "n.node_id",
      "n.parent_id",
      "n.node_kind",
      "n.pending_step_id",
      "n.created_at",
      sql<string | null>`substr(o.notes_markdown, 1, 160)`.as("notes_preview"),
    ])
    .where("n.run_id", "=", runId).orderBy("n.created_seq", "desc").limit(max + 1).execute();
  const truncated = rows.length > max;
  const kept = rows.slice(0, max).reverse();
  const pendingOf = new Map(kept.map((r) => [r.node_id, r.pending_step_id]));
  if (truncated) {
    // the parents of the oldest kept nodes may be cut off: read their pending steps
    const missing = [...new Set(kept.map((r) => r.parent_id))].filter(
      (id): id is string => id !== null && !pendingOf.has(id),
    );
    for (let i = 0; i < missing.length; i += 500) {
      const parents = await db.selectFrom("nodes").select(["node_id", "pending_step_id"])
        .where("run_id", "=", runId).where("node_id", "in", missing.slice(i, i + 500)).execute();
      for (const p of parents) pendingOf.set(p.node_id, p.pending_step_id);
    }
  }
  return {
    truncated,
    nodes: kept.map((r) => ({
      nodeId: r.node_id,
      parentId: r.parent_id,
      kind: r.node_kind,
      pendingStepId: r.pending_step_id,
      parentPendingStepId: r.parent_id === null ? null : pendingOf.get(r.parent_id) ?? null,
      isComplete: r.pending_step_id === null,
      createdAt: r.created_at,
      notesPreview: r.notes_preview,
    })),
  };
}

/** A run's row, or `null`. */
export async function getRun(
  db: ViewerDb,
  runId: string,
): Promise<
  { runId: string; sessionId: string; workflowId: string; workflowHash: string } | null
> {
  const row = await db.selectFrom("runs").select([
    "run_id",
    "session_id",
    "workflow_id",
    "workflow_hash",
  ]).where("run_id", "=", runId).executeTakeFirst();
  return row
    ? {
      runId: row.run_id,
      sessionId: row.session_id,
      workflowId: row.workflow_id,
      workflowHash: row.workflow_hash,
    }
    : null;
}

/** An attempt made on a node (an ack or a checkpoint) with what it returned. */
export interface AttemptRow {
  /** `ack` or `checkpoint`. */
  kind: string;
  /** `advanced`, `blocked` or `checkpointed`. */
  outcome: string;
  /** The node it produced. */
  resultNodeId: string;
  /** Log sequence. */
  createdSeq: number;
  /** Blockers in the recorded response, when it was blocked. */
  blockers: unknown[];
  /** Gaps in the recorded response, when there were any. */
  gaps: unknown[];
}

/** Everything about one node. */
export interface NodeDetailRow extends GraphNodeRow {
  /** Distance from the root. */
  depth: number;
  /** Log sequence of its creation. */
  createdSeq: number;
  /** Run id. */
  runId: string;
  /** Session id. */
  sessionId: string;
  /** Interpreter state (`{v, pc}`). */
  state: unknown;
  /** Context in effect. */
  context: Record<string, unknown>;
  /** Preferences in effect. */
  preferences: Record<string, unknown>;
  /** Full notes. */
  notesMarkdown: string | null;
  /** The step the notes describe. */
  notesStepId: string | null;
  /** Artifacts recorded with the notes. */
  artifacts: unknown[];
  /** The edge kind from its parent. */
  edgeKind: string | null;
  /** Direct children, oldest first. */
  children: { nodeId: string; kind: string; pendingStepId: string | null }[];
  /** Attempts made on this node, oldest first. */
  attempts: AttemptRow[];
}

function parseJsonOr<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** One node with its notes, artifacts, children and attempts, or `null`. */
export async function getNodeDetail(
  db: ViewerDb,
  runId: string,
  nodeId: string,
): Promise<NodeDetailRow | null> {
  const row = await nodesWithParent(db)
    .leftJoin(
      "edges as e",
      (j) => j.onRef("e.run_id", "=", "n.run_id").onRef("e.to_id", "=", "n.node_id"),
    )
    .select([
      "n.run_id",
      "n.session_id",
      "n.node_id",
      "n.parent_id",
      "n.node_kind",
      "n.depth",
      "n.state",
      "n.context",
      "n.preferences",
      "n.pending_step_id",
      "n.is_complete",
      "n.created_seq",
      "n.created_at",
      "p.pending_step_id as parent_pending",
      "o.notes_markdown",
      "o.step_id as notes_step_id",
      "o.artifacts",
      "e.edge_kind",
    ])
    .where("n.run_id", "=", runId).where("n.node_id", "=", nodeId).executeTakeFirst();
  if (!row) return null;
  const [children, attempts] = await Promise.all([
    db.selectFrom("nodes").select(["node_id", "node_kind", "pending_step_id"])
      .where("run_id", "=", runId).where("parent_id", "=", nodeId).orderBy("created_seq")
      .limit(200).execute(),
    db.selectFrom("attempts")
      .select(["attempt_kind", "outcome", "result_node_id", "response", "created_seq"])
      .where("run_id", "=", runId).where("node_id", "=", nodeId).orderBy("created_seq")
      .limit(MAX_ATTEMPTS).execute(),
  ]);
  const artifacts = parseJsonOr<unknown>(row.artifacts, []);
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    nodeId: row.node_id,
    parentId: row.parent_id,
    kind: row.node_kind,
    depth: Number(row.depth),
    pendingStepId: row.pending_step_id,
    parentPendingStepId: row.parent_pending,
    isComplete: Number(row.is_complete) === 1,
    createdSeq: Number(row.created_seq),
    createdAt: row.created_at,
    notesPreview: row.notes_markdown?.slice(0, 160) ?? null,
    state: parseJsonOr<unknown>(row.state, null),
    context: parseJsonOr<Record<string, unknown>>(row.context, {}),
    preferences: parseJsonOr<Record<string, unknown>>(row.preferences, {}),
    notesMarkdown: row.notes_markdown,
    notesStepId: row.notes_step_id,
    artifacts: Array.isArray(artifacts) ? artifacts : [],
    edgeKind: row.edge_kind,
    children: children.map((c) => ({
      nodeId: c.node_id,
      kind: c.node_kind,
      pendingStepId: c.pending_step_id,
    })),
    attempts: attempts.map((a) => {
      const response = parseJsonOr<Record<string, unknown>>(a.response, {});
      return {
        kind: a.attempt_kind,
        outcome: a.outcome,
        resultNodeId: a.result_node_id,
        createdSeq: Number(a.created_seq),
        blockers: Array.isArray(response.blockers) ? response.blockers : [],
        gaps: Array.isArray(response.gaps) ? response.gaps : [],
      };
    }),
  };
}

/** One entry of a branch's history: a node with its notes. */
export interface BranchEntry {
  /** Node id. */
  nodeId: string;
  /** Node kind. */
  kind: string;
  /** The step whose acknowledgement led here (its parent's pending step). */
  completedStepId: string | null;
  /** Pending step at this node. */
  pendingStepId: string | null;
  /** Notes. */
  notesMarkdown: string | null;
  /** Artifacts. */
  artifacts: unknown[];
  /** ISO time. */
  createdAt: string;
  /** Distance from the root. */
  depth: number;
}

/**
 * The branch from the root to a node, root first: the node and its nearest
 * {@linkcode MAX_BRANCH_STEPS} - 1 ancestors at most (`omitted` says how many older ones exist).
 */
export async function getBranch(
  db: ViewerDb,
  runId: string,
  nodeId: string,
  limit: number = MAX_BRANCH_STEPS,
): Promise<{ entries: BranchEntry[]; omitted: number }> {
  const result = await sql<{
    node_id: string;
    node_kind: string;
    pending_step_id: string | null;
    parent_pending: string | null;
    notes_markdown: string | null;
    artifacts: string | null;
    created_at: string;
    depth: number;
    hop: number;
  }>`
    WITH RECURSIVE up(node_id, parent_id, hop) AS (
      SELECT node_id, parent_id, 0 FROM nodes WHERE run_id = ${runId} AND node_id = ${nodeId}
      UNION ALL
      SELECT p.node_id, p.parent_id, up.hop + 1 FROM nodes p JOIN up
        ON p.run_id = ${runId} AND p.node_id = up.parent_id
      WHERE up.hop + 1 < ${limit}
    )
    SELECT n.node_id, n.node_kind, n.pending_step_id, n.created_at, n.depth, up.hop,
           pp.pending_step_id AS parent_pending, o.notes_markdown, o.artifacts
    FROM up JOIN nodes n ON n.run_id = ${runId} AND n.node_id = up.node_id
    LEFT JOIN nodes pp ON pp.run_id = n.run_id AND pp.node_id = n.parent_id
    LEFT JOIN outputs o ON o.run_id = n.run_id AND o.node_id = n.node_id
    ORDER BY up.hop DESC`.execute(db);
  const entries = result.rows.map((r): BranchEntry => ({
    nodeId: r.node_id,
    kind: r.node_kind,
    completedStepId: r.node_kind === "step" ? r.parent_pending : null,
    pendingStepId: r.pending_step_id,
    notesMarkdown: r.notes_markdown,
    artifacts: parseJsonOr<unknown[]>(r.artifacts, []),
    createdAt: r.created_at,
    depth: Number(r.depth),
  }));
  const first = entries[0];
  return { entries, omitted: first ? first.depth : 0 };
}

/** A pinned compiled workflow, or `null`. */
export async function getCompiled(db: ViewerDb, hash: string): Promise<CompiledWorkflow | null> {
  const row = await db.selectFrom("workflow_snapshots").select("compiled")
    .where("workflow_hash", "=", hash).executeTakeFirst();
  return row ? parseJsonOr<CompiledWorkflow | null>(row.compiled, null) : null;
}

/** One dot of the session timeline. */
export interface TimelineNode {
  /** Run id. */
  runId: string;
  /** Node id. */
  nodeId: string;
  /** Node kind. */
  kind: string;
  /** ISO time. */
  createdAt: string;
}

/** The session's nodes for its timeline, oldest first; the newest {@linkcode MAX_TIMELINE_NODES}. */
export async function getTimeline(
  db: ViewerDb,
  sessionId: string,
): Promise<{ nodes: TimelineNode[]; truncated: boolean }> {
  const rows = await db.selectFrom("nodes").select(["run_id", "node_id", "node_kind", "created_at"])
    .where(
      "run_id",
      "in",
      db.selectFrom("runs").select("run_id").where("session_id", "=", sessionId),
    )
    .orderBy("created_seq", "desc").limit(MAX_TIMELINE_NODES + 1).execute();
  return {
    truncated: rows.length > MAX_TIMELINE_NODES,
    nodes: rows.slice(0, MAX_TIMELINE_NODES).reverse().map((r) => ({
      runId: r.run_id,
      nodeId: r.node_id,
      kind: r.node_kind,
      createdAt: r.created_at,
    })),
  };
}

/** A note saved with a checkpoint, for the session notes. */
export interface SessionNote {
  /** Run id. */
  runId: string;
  /** Checkpoint node id. */
  nodeId: string;
  /** Notes. */
  notesMarkdown: string;
  /** ISO time. */
  createdAt: string;
}

/** The newest checkpoint notes of a session (at most {@linkcode MAX_SESSION_NOTES}). */
export async function getSessionNotes(db: ViewerDb, sessionId: string): Promise<SessionNote[]> {
  const rows = await db.selectFrom("nodes as n")
    .innerJoin(
      "outputs as o",
      (j) => j.onRef("o.run_id", "=", "n.run_id").onRef("o.node_id", "=", "n.node_id"),
    )
    .select(["n.run_id", "n.node_id", "o.notes_markdown", "n.created_at"])
    .where(
      "n.run_id",
      "in",
      db.selectFrom("runs").select("run_id").where("session_id", "=", sessionId),
    )
    .where("n.node_kind", "=", "checkpoint").where("o.notes_markdown", "is not", null)
    .orderBy("n.created_seq", "desc").limit(MAX_SESSION_NOTES).execute();
  return rows.map((r) => ({
    runId: r.run_id,
    nodeId: r.node_id,
    notesMarkdown: r.notes_markdown ?? "",
    createdAt: r.created_at,
  }));
}

/** A node with everything the Markdown export prints. */
export interface ExportNode extends GraphNodeRow {
  /** Log sequence of its creation. */
  createdSeq: number;
  /** Full notes. */
  notesMarkdown: string | null;
  /** Artifacts. */
  artifacts: unknown[];
}

/** A run's nodes with notes and artifacts, oldest first, for the export. */
export async function getExportNodes(
  db: ViewerDb,
  runId: string,
): Promise<{ nodes: ExportNode[]; truncated: boolean }> {
  const rows = await nodesWithParent(db)
    .select([
      "n.node_id",
      "n.parent_id",
      "n.node_kind",
      "n.pending_step_id",
      "n.is_complete",
      "n.created_seq",
      "n.created_at",
      "p.pending_step_id as parent_pending",
      "o.notes_markdown",
      "o.artifacts",
    ])
    .where("n.run_id", "=", runId).orderBy("n.created_seq").limit(MAX_EXPORT_NODES + 1)
    .execute();
  return {
    truncated: rows.length > MAX_EXPORT_NODES,
    nodes: rows.slice(0, MAX_EXPORT_NODES).map((r) => ({
      nodeId: r.node_id,
      parentId: r.parent_id,
      kind: r.node_kind,
      pendingStepId: r.pending_step_id,
      parentPendingStepId: r.parent_pending,
      isComplete: Number(r.is_complete) === 1,
      createdSeq: Number(r.created_seq),
      createdAt: r.created_at,
      notesPreview: r.notes_markdown?.slice(0, 160) ?? null,
      notesMarkdown: r.notes_markdown,
      artifacts: parseJsonOr<unknown[]>(r.artifacts, []),
    })),
  };
}
