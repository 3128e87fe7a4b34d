/**
 * The store port's reads of nested runs and node events: a (session, agent) stack, the
 * workspace's most recent stack, what was recorded at a node, and a branch's outputs.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import {
  type BranchOutput,
  isMember,
  type NodeEvent,
  RUN_STATUSES,
  type StackFrame,
  type StackView,
  StorageCorruptionError,
} from "../../engine/mod.ts";
import { ancestorsCte, type Executor } from "./graph_sql.ts";
import { prepare } from "./prepared.ts";
import { artifactsColumn, decodeJsonOr } from "./rows.ts";

function frames(ex: Executor, sessionId: string, agentId: string | null) {
  return ex.selectFrom("run_links as l")
    .innerJoin("runs as r", "r.run_id", "l.run_id")
    .leftJoin(
      "nodes as n",
      (j) => j.onRef("n.run_id", "=", "r.run_id").onRef("n.node_id", "=", "r.last_node_id"),
    )
    .select([
      "l.run_id",
      "l.session_id",
      "l.agent_id",
      "l.parent_run_id",
      "l.parent_node_id",
      "l.job_dir",
      "r.workflow_id",
      "r.workflow_hash",
      "r.status",
      "r.last_node_id",
      "n.pending_step_id",
    ])
    .where("l.session_id", "=", sessionId).where("l.agent_id", "=", agentId ?? "");
}

type FrameRow = Awaited<ReturnType<ReturnType<typeof frames>["execute"]>>[number];

function decodeFrame(row: FrameRow, depth: number): StackFrame {
  if (row.last_node_id === null || !isMember(RUN_STATUSES, row.status)) {
    throw new StorageCorruptionError(
      `Stacked run ${row.run_id} has no node or an unknown status`,
      row.session_id,
    );
  }
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    agentId: row.agent_id === "" ? null : row.agent_id,
    parentRunId: row.parent_run_id,
    parentNodeId: row.parent_node_id,
    depth,
    jobDir: row.job_dir,
    workflowId: row.workflow_id,
    workflowHash: row.workflow_hash,
    status: row.status,
    tipNodeId: row.last_node_id,
    pendingStepId: row.pending_step_id ?? null,
  };
}

type StackKey = { sessionId: string; agentId: string };

const runningFrames = prepare((db, p: StackKey) =>
  frames(db, p.sessionId, p.agentId).where("r.status", "=", "running").orderBy("l.created_seq")
);

const lastFinished = prepare((db, p: StackKey) =>
  frames(db, p.sessionId, p.agentId).where("r.status", "!=", "running")
    .orderBy("r.updated_at", "desc").orderBy("l.created_seq", "desc").limit(1)
);

/** The running frames of a stack (oldest push first) and the frame that left it last. */
export async function getStack(
  ex: Executor,
  at: { sessionId: string; agentId: string | null },
): Promise<StackView> {
  const key = { sessionId: at.sessionId, agentId: at.agentId ?? "" };
  const running = await runningFrames.all(ex, key);
  const last = await lastFinished.first(ex, key);
  return {
    frames: running.map((row, i) => decodeFrame(row, i)),
    lastFinished: last ? decodeFrame(last, -1) : null,
  };
}

/** Stacks of an agent, the one with a running run first, then the most recently changed. */
function stacksOf(db: Executor, agentId: string) {
  return db.selectFrom("run_links as l")
    .innerJoin("runs as r", "r.run_id", "l.run_id")
    .select("l.session_id")
    .where("l.agent_id", "=", agentId)
    .orderBy(sql`r.status = 'running'`, "desc")
    .orderBy("r.updated_at", "desc").orderBy("l.created_seq", "desc").limit(1);
}

const stackIn = prepare((db, p: { workspace: string; agentId: string }) =>
  stacksOf(db, p.agentId).where("r.workspace", "=", p.workspace)
);

const stackNowhere = prepare((db, p: { agentId: string }) =>
  stacksOf(db, p.agentId).where("r.workspace", "is", null)
);

/**
 * The session of an agent's stack in a workspace: the one with the most recently changed
 * running run, else the one whose run finished last.
 */
export async function findStackSession(
  ex: Executor,
  at: { workspace: string | null; agentId: string | null },
): Promise<string | null> {
  const agentId = at.agentId ?? "";
  const row = at.workspace === null
    ? await stackNowhere.first(ex, { agentId })
    : await stackIn.first(ex, { workspace: at.workspace, agentId });
  return row?.session_id ?? null;
}

const nodeEvents = prepare((db, p: { runId: string; nodeId: string }) =>
  db.selectFrom("node_events").select(["session_id", "payload"])
    .where("run_id", "=", p.runId).where("node_id", "=", p.nodeId).orderBy("seq")
);

/** Reviews, gaps and aborts recorded at a node, oldest first. */
export async function getNodeEvents(
  ex: Executor,
  at: { runId: string; nodeId: string },
): Promise<NodeEvent[]> {
  const rows = await nodeEvents.all(ex, at);
  return rows.map((r) => {
    try {
      return JSON.parse(r.payload) as NodeEvent;
    } catch {
      throw new StorageCorruptionError(
        `A recorded event of node ${at.nodeId} is not JSON`,
        r.session_id,
      );
    }
  });
}

const branchOutputs = prepare((_db, p: { runId: string; nodeId: string; limit: number }) =>
  sql<{ node_id: string; step_id: string | null; artifacts: string }>`
    ${ancestorsCte(p.runId, p.nodeId, p.limit)}
    SELECT up.node_id, o.step_id, o.artifacts FROM up
    JOIN outputs o ON o.run_id = ${p.runId} AND o.node_id = up.node_id
    ORDER BY up.hop DESC`
);

/** Outputs along the branch from the root to a node, root first. */
export async function getBranchOutputs(
  ex: Executor,
  at: { runId: string; nodeId: string; limit: number },
): Promise<BranchOutput[]> {
  const result = await branchOutputs.execute(ex, at);
  return result.rows.map((r) => ({
    nodeId: r.node_id,
    stepId: r.step_id,
    artifacts: decodeJsonOr(artifactsColumn, r.artifacts, []) as BranchOutput["artifacts"],
  }));
}
