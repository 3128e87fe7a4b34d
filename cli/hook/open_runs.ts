/**
 * The open runs of a workspace, read from the embedded database file without loading the store:
 * the runtime's own SQLite (`node:sqlite`, built into Deno) opened read-only, a few indexed
 * reads, so a host's hook answers in milliseconds and never writes to the store. A database
 * file is SQLite's format whichever of the two opens it.
 * @module
 */
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { CompiledNode, CompiledWorkflow } from "../../engine/workflow/compiled.ts";

/** One open run at its preferred tip. */
export interface OpenRun {
  /** Run id (hex). */
  runId: string;
  /** Session title. */
  title: string;
  /** Workflow id. */
  workflowId: string;
  /** The workflow's name, when its pinned snapshot is there. */
  workflowName: string | null;
  /** The goal given at start. */
  goal: string | null;
  /** Last change (ISO-8601). */
  updatedAt: string;
  /** The preferred tip. */
  tipNodeId: string;
  /** The tip's pending step. */
  pendingStepId: string;
  /** That step's title, when the pinned snapshot names it. */
  pendingTitle: string | null;
  /** Whether the session failed an integrity check (execution tools refuse it). */
  corrupt: boolean;
}

/** What {@linkcode readOpenRuns} found: at most `limit` runs, and whether there are more. */
export interface OpenRuns {
  /** The runs, most recently changed first. */
  runs: OpenRun[];
  /** Whether more open runs were found than returned. */
  more: boolean;
}

/** Runs read per workspace folder, newest first, before keeping the open ones. */
const RECENT_PER_FOLDER = 200;
/** Folders above the working directory looked at for the repository's root. */
const MAX_DEPTH = 64;

/**
 * The folders whose runs belong to `cwd`: `cwd` itself and, inside a git repository, each
 * folder up to the repository's root (a run's workspace is the folder its host started in).
 */
export function workspaceFolders(cwd: string): string[] {
  const folders = [cwd];
  for (let at = cwd, depth = 0; depth < MAX_DEPTH; depth++) {
    if (existsSync(join(at, ".git"))) return folders;
    const up = dirname(at);
    if (up === at) break;
    folders.push(at = up);
  }
  return [cwd];
}

interface RunRow {
  run_id: string;
  title: string;
  health: string;
  workflow_id: string;
  workflow_hash: string;
  goal: string | null;
  updated_at: string;
  last_node_id: string;
  pending_step_id: string;
}

/**
 * The open top-level runs of `folders`: running, a step pending, not a delegated child. Each
 * folder's recent runs by the minute first where the database has it, for its index
 * (`store/sql/activity_minutes.ts`; a file no server of this version has opened yet lacks it).
 */
function openRunsSql(folders: number, byMinute: boolean): string {
  const order = byMinute ? "updated_minute DESC, updated_at DESC" : "updated_at DESC";
  const recent = Array.from(
    { length: folders },
    () =>
      `SELECT * FROM (SELECT run_id FROM runs WHERE workspace = ?
      ORDER BY ${order} LIMIT ${RECENT_PER_FOLDER})`,
  ).join(" UNION ALL ");
  return `SELECT r.run_id, s.title, s.health, r.workflow_id, r.workflow_hash,
      r.goal, r.updated_at, r.last_node_id, n.pending_step_id
    FROM runs r
    JOIN sessions s ON s.session_id = r.session_id
    JOIN nodes n ON n.run_id = r.run_id AND n.node_id = r.last_node_id
    WHERE r.run_id IN (${recent})
      AND r.status = 'running' AND n.pending_step_id IS NOT NULL AND s.kind = 'workflow'
      AND NOT EXISTS (SELECT 1 FROM run_delegations d WHERE d.run_id = r.run_id)
    ORDER BY r.updated_at DESC, r.run_id DESC LIMIT ?`;
}

/** The title of step `stepId` in a compiled step tree. */
function stepTitle(nodes: readonly CompiledNode[], stepId: string): string | null {
  for (const node of nodes) {
    // by shape: format-1 snapshots have steps without a `kind`
    if ("body" in node && Array.isArray(node.body)) {
      const inner = stepTitle(node.body, stepId);
      if (inner !== null) return inner;
    } else if (node.id === stepId) return node.title;
  }
  return null;
}

/** The pinned snapshots of `hashes`, by hash (a snapshot that does not parse is left out). */
function snapshots(db: DatabaseSync, hashes: string[]): Map<string, CompiledWorkflow> {
  if (hashes.length === 0) return new Map();
  const rows = db.prepare(
    `SELECT workflow_hash, compiled FROM workflow_snapshots
      WHERE workflow_hash IN (${hashes.map(() => "?").join(", ")})`,
  ).all(...hashes) as unknown as { workflow_hash: string; compiled: string }[];
  const out = new Map<string, CompiledWorkflow>();
  for (const row of rows) {
    try {
      out.set(row.workflow_hash, JSON.parse(row.compiled) as CompiledWorkflow);
    } catch { /* shown without its step's title */ }
  }
  return out;
}

/** The open runs' statement, by the minute unless the file has no `updated_minute` yet. */
function prepareOpenRuns(db: DatabaseSync, folders: number) {
  try {
    return db.prepare(openRunsSql(folders, true));
  } catch {
    return db.prepare(openRunsSql(folders, false));
  }
}

/**
 * The open runs whose workspace is one of `folders`, most recently changed first, from the
 * database file at `path`; `null` when there is no database there yet. Opens it read-only.
 */
export function readOpenRuns(
  path: string,
  options: { folders: string[]; limit: number },
): OpenRuns | null {
  if (!existsSync(path)) return null;
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const migrated = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get("runs");
    if (!migrated) return null;
    const args: SQLInputValue[] = [...options.folders, options.limit + 1];
    const rows = prepareOpenRuns(db, options.folders.length).all(
      ...args,
    ) as unknown as RunRow[];
    const kept = rows.slice(0, options.limit);
    const pinned = snapshots(db, [...new Set(kept.map((r) => r.workflow_hash))]);
    const runs = kept.map((row): OpenRun => {
      const compiled = pinned.get(row.workflow_hash);
      return {
        runId: row.run_id,
        title: row.title,
        workflowId: row.workflow_id,
        workflowName: compiled?.name ?? null,
        goal: row.goal,
        updatedAt: row.updated_at,
        tipNodeId: row.last_node_id,
        pendingStepId: row.pending_step_id,
        pendingTitle: compiled ? stepTitle(compiled.steps ?? [], row.pending_step_id) : null,
        corrupt: row.health === "corrupt",
      };
    });
    return { runs, more: rows.length > options.limit };
  } finally {
    db.close();
  }
}
