/**
 * The store port's reads of nested runs and node events: a (session, agent) stack, the
 * workspace's most recent stack, what was recorded at a node, and a branch's outputs.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import type {
  BranchOutput,
  NodeEvent,
  StackFrame,
  StackSummary,
  StackView,
} from "../../engine/model/ports.ts";
import { StorageCorruptionError } from "../../engine/model/result.ts";
import { isMember, RUN_STATUSES } from "../../engine/model/vocabulary.ts";
import { ancestorsCte, type Executor } from "./graph_sql.ts";
import { prepare, type Prepared } from "./prepared.ts";
import { artifactsColumn, decodeJsonOr, runTotalColumn } from "./rows.ts";
import type { TokenUsage } from "../../engine/cost/usage.ts";

/** Linked runs with what a frame needs. */
function linkedRuns(ex: Executor) {
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
      "l.owner",
      "r.workflow_id",
      "r.workflow_hash",
      "r.status",
      "r.last_node_id",
      "n.pending_step_id",
    ]);
}

function frames(ex: Executor, sessionId: string, agentId: string | null) {
  return linkedRuns(ex).where("l.session_id", "=", sessionId).where(
    "l.agent_id",
    "=",
    agentId ?? "",
  );
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
    owner: row.owner,
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

type Where = { workspace: string | null; agentId: string; owner: string; anyOwner: number };

/** Two statements, for a workspace and for none (`IS NULL`), since a statement never branches. */
function perWorkspace<P extends { workspace: string | null }, R>(
  build: (nowhere: boolean) => Prepared<P, R>,
): (p: P) => Prepared<P, R> {
  const [some, none] = [build(false), build(true)];
  return (p: P) => p.workspace === null ? none : some;
}

const stackSession = perWorkspace((nowhere) =>
  prepare((db, p: Where) => {
    const q = stacksOf(db, p.agentId).where((eb) =>
      eb.or([eb("l.owner", "=", p.owner), eb(eb.val(p.anyOwner), "=", 1)])
    );
    return nowhere ? q.where("r.workspace", "is", null) : q.where("r.workspace", "=", p.workspace);
  })
);

/**
 * The session of an agent's stack in a workspace (held by `owner`, when given): the one with the
 * most recently changed running run, else the one whose run finished last.
 */
export async function findStackSession(
  ex: Executor,
  at: { workspace: string | null; agentId: string | null; owner: string | null },
): Promise<string | null> {
  const p: Where = {
    workspace: at.workspace,
    agentId: at.agentId ?? "",
    owner: at.owner ?? "",
    anyOwner: at.owner === null ? 1 : 0,
  };
  const row = await stackSession(p).first(ex, p);
  return row?.session_id ?? null;
}

type Running = { workspace: string | null; agentId: string; limit: number };

const runningIn = perWorkspace((nowhere) =>
  prepare((db, p: Running) => {
    const q = linkedRuns(db).select(["r.updated_at", "l.created_seq"])
      .where("l.agent_id", "=", p.agentId).where("r.status", "=", "running");
    return (nowhere ? q.where("r.workspace", "is", null) : q.where("r.workspace", "=", p.workspace))
      .orderBy("r.updated_at", "desc").orderBy("l.created_seq", "desc").limit(p.limit);
  })
);

/**
 * An agent's stacks with a running run in a workspace, each by its top run (the one pushed
 * last), most recently changed first. Reads at most `limit` running runs.
 */
export async function listStacks(
  ex: Executor,
  at: { workspace: string | null; agentId: string | null; limit: number },
): Promise<StackSummary[]> {
  const p: Running = { ...at, agentId: at.agentId ?? "" };
  const rows = await runningIn(p).all(ex, p);
  const tops = new Map<string, (typeof rows)[number]>();
  for (const row of rows) {
    const seen = tops.get(row.session_id);
    if (!seen || Number(row.created_seq) > Number(seen.created_seq)) tops.set(row.session_id, row);
  }
  return [...tops.values()].map((row) => ({
    sessionId: row.session_id,
    agentId: row.agent_id === "" ? null : row.agent_id,
    owner: row.owner,
    runId: row.run_id,
    workflowId: row.workflow_id,
    pendingStepId: row.pending_step_id ?? null,
    updatedAt: row.updated_at,
  })).sort((a, b) => a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0);
}

const runFrame = prepare((db, p: { runId: string }) =>
  linkedRuns(db).where("l.run_id", "=", p.runId)
);

/** A run's frame on its stack, whatever its status, or `null`. */
export async function getStackFrame(ex: Executor, runId: string): Promise<StackFrame | null> {
  const row = await runFrame.first(ex, { runId });
  return row ? decodeFrame(row, -1) : null;
}

const nodeEvents = prepare((db, p: { runId: string; nodeId: string }) =>
  db.selectFrom("node_events").select(["session_id", "payload"])
    .where("run_id", "=", p.runId).where("node_id", "=", p.nodeId).orderBy("seq")
);

const latestUsage = prepare((db, p: { runId: string }) =>
  db.selectFrom("node_events").select("payload")
    .where("run_id", "=", p.runId).where("kind", "=", "usage_recorded")
    .orderBy("seq", "desc").limit(1)
);

/** The run's tokens as its latest `usage_recorded` event totals them; `null` when none. */
export async function getRunTokens(ex: Executor, runId: string): Promise<TokenUsage | null> {
  const row = await latestUsage.first(ex, { runId });
  return row ? decodeJsonOr(runTotalColumn, row.payload, null)?.runTotal ?? null : null;
}

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
