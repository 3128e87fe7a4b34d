/**
 * A session page's session-wide reads: the session with its runs, its timeline, its
 * checkpoint notes, and the versions the live updates compare.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type { Principal } from "../../../engine/access/principal.ts";
import { decodePrincipal } from "../rows.ts";
import { deriveStatus, type SessionSummary, type ViewerDb } from "./sessions_list.ts";

/** Most runs listed in a session's sidebar. */
export const MAX_RUNS = 100;
/** Most nodes on the session timeline (the newest are kept). */
export const MAX_TIMELINE_NODES = 2_000;
/** Most session notes (checkpoint notes) shown. */
export const MAX_SESSION_NOTES = 20;

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
  /** The preferred tip: the newest node that is not a blocked attempt. */
  lastNodeId: string | null;
  /** ISO time. */
  createdAt: string;
  /** ISO time. */
  updatedAt: string;
  /** Who started it; `null` when an unauthenticated call did. */
  startedBy: Principal | null;
  /** Who besides its starter may continue it (`owner`, `team`); `null` without an owner. */
  access: string | null;
  /** For a run nested on a workflow stack: the run below it and the node it stood at. */
  parentRunId: string | null;
  /** See `parentRunId`. */
  parentNodeId: string | null;
  /** The sub-agent whose stack the run is on, when not the main agent's. */
  agentId: string | null;
  /**
   * For a child run a parallel step opened (not a stacked run: see `parentRunId`): its parent
   * run, the node and step that opened it, and its delegation's position from 0.
   */
  delegatedFrom:
    | { parentRunId: string; parentNodeId: string; stepId: string; index: number }
    | null;
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

/** Characters read from the start of a pinned snapshot to find its workflow's name. */
const SNAPSHOT_HEAD_CHARS = 1024;
/** A JSON string literal. */
const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
/** The top-level scalar members that precede `name` in a compiled workflow, then `name`. */
const NAME_IN_HEAD = new RegExp(
  String.raw`^\{(?:${STRING}:(?:${STRING}|-?[\d.eE+-]+|true|false|null),)*"name":(${STRING})`,
);

/**
 * A workflow's name from the start of its pinned snapshot: compiled workflows put their scalar
 * members (`format`, `id`, `kind`, `name`, ...) first, so a short head holds it and a page never
 * reads a whole (possibly multi-megabyte) snapshot, nor needs a dialect's JSON function in SQL.
 */
export function workflowNameOf(head: string | null): string | null {
  const literal = head === null ? null : NAME_IN_HEAD.exec(head)?.[1];
  if (!literal) return null;
  try {
    return JSON.parse(literal) as string;
  } catch {
    return null;
  }
}

/** A session's runs with what the list shows of each, one more than the page holds. */
function runRows(db: ViewerDb, sessionId: string) {
  return db.selectFrom("runs as r")
    .leftJoin("workflow_snapshots as w", "w.workflow_hash", "r.workflow_hash")
    .leftJoin("run_links as l", "l.run_id", "r.run_id")
    .leftJoin("run_delegations as d", "d.run_id", "r.run_id")
    .select([
      "d.parent_run_id as delegated_by",
      "d.parent_node_id as delegated_at",
      "d.step_id as delegated_step",
      "d.idx as delegated_idx",
      "l.parent_run_id",
      "l.parent_node_id",
      "l.agent_id",
      "r.run_id",
      "r.workflow_id",
      "r.workflow_hash",
      "r.goal",
      "r.status",
      "r.node_count",
      "r.last_node_id",
      "r.created_at",
      "r.updated_at",
      "r.owner",
      "r.access",
      sql<string | null>`substr(w.compiled, 1, ${SNAPSHOT_HEAD_CHARS})`.as("snapshot_head"),
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
    // children opened in one write share a time: they follow their delegation order
    .where("r.session_id", "=", sessionId).orderBy("r.created_at")
    .orderBy(sql`coalesce(d.idx, -1)`).orderBy("r.run_id")
    .limit(MAX_RUNS + 1).execute();
}

/** One run's row, as the list shows it. */
function runSummary(r: Awaited<ReturnType<typeof runRows>>[number]): RunSummary {
  return {
    runId: r.run_id,
    workflowId: r.workflow_id,
    workflowHash: r.workflow_hash,
    title: r.goal ?? workflowNameOf(r.snapshot_head) ?? r.workflow_id,
    goal: r.goal,
    status: r.status,
    nodeCount: Number(r.node_count),
    branchCount: Number(r.branch_count ?? 0),
    lastNodeId: r.last_node_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedBy: decodePrincipal(r.owner),
    access: r.owner === null ? null : r.access,
    parentRunId: r.parent_run_id ?? null,
    parentNodeId: r.parent_node_id ?? null,
    agentId: r.agent_id ? r.agent_id : null,
    delegatedFrom: r.delegated_by && r.delegated_at && r.delegated_step !== null
      ? {
        parentRunId: r.delegated_by,
        parentNodeId: r.delegated_at,
        stepId: r.delegated_step,
        index: Number(r.delegated_idx),
      }
      : null,
  };
}

/** A session and its runs, or `null`. */
export async function getSession(db: ViewerDb, sessionId: string): Promise<SessionDetail | null> {
  const row = await db.selectFrom("sessions").selectAll().where("session_id", "=", sessionId)
    .executeTakeFirst();
  if (!row) return null;
  const runs = await runRows(db, sessionId);
  const list = runs.slice(0, MAX_RUNS).map(runSummary);
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

/** Most review passes shown on a session page (the newest are kept). */
export const MAX_REVIEW_PASSES = 200;

/** A review pass, as a session page lists it. */
export interface ReviewPassRow {
  /** The review's id. */
  reviewId: string;
  /** The rule's name. */
  rule: string;
  /** The files and the SHA-256 of the content that passed. */
  files: { path: string; sha256: string }[];
  /** Who passed it (`displayName`), when the call was authenticated. */
  principal: string | null;
  /** ISO time. */
  createdAt: string;
}

/** The newest review passes recorded in a session (at most {@linkcode MAX_REVIEW_PASSES}). */
export async function getReviewPasses(db: ViewerDb, sessionId: string): Promise<ReviewPassRow[]> {
  const rows = await db.selectFrom("review_passes")
    .select(["review_id", "rule", "files", "principal", "created_at"])
    .where("session_id", "=", sessionId)
    .orderBy("created_seq", "desc").limit(MAX_REVIEW_PASSES).execute();
  const parse = <T>(text: string | null, fallback: T): T => {
    try {
      return text === null ? fallback : JSON.parse(text) as T;
    } catch {
      return fallback;
    }
  };
  return rows.map((r) => ({
    reviewId: r.review_id,
    rule: r.rule,
    files: parse(r.files, []),
    principal: parse<{ displayName?: string } | null>(r.principal, null)?.displayName ?? null,
    createdAt: r.created_at,
  }));
}

/** Who made a run's nodes: one principal's acknowledgements and checkpoints on one run. */
export interface RunActor {
  /** Run id. */
  runId: string;
  /** The principal. */
  principal: Principal;
  /** Nodes its calls made below the root (steps acknowledged, checkpoints, blocked attempts). */
  nodes: number;
}

/** Per run of a session, who acknowledged its steps (authenticated calls only), most first. */
export async function getSessionActors(db: ViewerDb, sessionId: string): Promise<RunActor[]> {
  const rows = await db.selectFrom("nodes")
    .select(["run_id", "made_by", sql<number>`count(*)`.as("nodes")])
    .where(
      "run_id",
      "in",
      db.selectFrom("runs").select("run_id").where("session_id", "=", sessionId),
    )
    .where("made_by", "is not", null).where("parent_id", "is not", null)
    .groupBy(["run_id", "made_by"]).execute();
  return rows.flatMap((r) => {
    const principal = decodePrincipal(r.made_by);
    return principal ? [{ runId: r.run_id, principal, nodes: Number(r.nodes) }] : [];
  }).sort((a, b) => b.nodes - a.nodes || a.principal.subject.localeCompare(b.principal.subject));
}
