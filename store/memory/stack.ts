/**
 * The in-memory store's reads of nested runs and node events, as the libSQL store's
 * `stack_reads.ts` answers them (same orderings: pushes by sequence, the last frame to leave by
 * its run's last change).
 * @module
 */
import type {
  BranchOutput,
  NodeEvent,
  StackFrame,
  StackSummary,
  StackView,
} from "../../engine/mod.ts";
import { artifactsColumn, decodeJsonOr } from "../sql/rows.ts";
import { key, type RunLinkRow, type Tables } from "./tables.ts";

function frameOf(tables: Tables, link: RunLinkRow, depth: number): StackFrame | null {
  const run = tables.runs.get(link.runId);
  if (!run || run.lastNodeId === null) return null;
  return {
    runId: link.runId,
    sessionId: link.sessionId,
    agentId: link.agentId === "" ? null : link.agentId,
    owner: link.owner,
    parentRunId: link.parentRunId,
    parentNodeId: link.parentNodeId,
    depth,
    jobDir: link.jobDir,
    workflowId: run.workflowId,
    workflowHash: run.workflowHash,
    status: run.status,
    tipNodeId: run.lastNodeId,
    pendingStepId: tables.nodes.get(key(run.runId, run.lastNodeId))?.pendingStepId ?? null,
  };
}

/** Newest change first, then newest push: the order the SQL reads use. */
function newestFirst(tables: Tables) {
  return (a: RunLinkRow, b: RunLinkRow): number => {
    const ua = tables.runs.get(a.runId)?.updatedAt ?? "";
    const ub = tables.runs.get(b.runId)?.updatedAt ?? "";
    return ua < ub ? 1 : ua > ub ? -1 : b.createdSeq - a.createdSeq;
  };
}

/** A (session, agent) stack. */
export function getStack(
  tables: Tables,
  at: { sessionId: string; agentId: string | null },
): StackView {
  const links = [...tables.runLinks.values()].filter((l) =>
    l.sessionId === at.sessionId && l.agentId === (at.agentId ?? "")
  );
  const status = (l: RunLinkRow) => tables.runs.get(l.runId)?.status;
  const running = links.filter((l) => status(l) === "running")
    .sort((a, b) => a.createdSeq - b.createdSeq)
    .map((l, i) => frameOf(tables, l, i)).filter((f): f is StackFrame => f !== null);
  const last = links.filter((l) => status(l) !== "running").sort(newestFirst(tables))[0];
  return { frames: running, lastFinished: last ? frameOf(tables, last, -1) : null };
}

/**
 * The session of an agent's stack in a workspace (held by `owner`, when given): the one with the
 * most recently changed running run, else the one whose run finished last.
 */
export function findStackSession(
  tables: Tables,
  at: { workspace: string | null; agentId: string | null; owner: string | null },
): string | null {
  const mine = [...tables.runLinks.values()].filter((l) =>
    l.agentId === (at.agentId ?? "") && (at.owner === null || l.owner === at.owner) &&
    tables.runs.get(l.runId)?.workspace === at.workspace
  ).sort(newestFirst(tables));
  const running = mine.find((l) => tables.runs.get(l.runId)?.status === "running");
  return (running ?? mine[0])?.sessionId ?? null;
}

/** An agent's stacks with a running run in a workspace, by top run, newest change first. */
export function listStacks(
  tables: Tables,
  at: { workspace: string | null; agentId: string | null; limit: number },
): StackSummary[] {
  const running = [...tables.runLinks.values()].filter((l) => {
    const run = tables.runs.get(l.runId);
    return l.agentId === (at.agentId ?? "") && run?.status === "running" &&
      run.workspace === at.workspace;
  }).sort(newestFirst(tables)).slice(0, at.limit);
  const tops = new Map<string, RunLinkRow>();
  for (const l of running) {
    const seen = tops.get(l.sessionId);
    if (!seen || l.createdSeq > seen.createdSeq) tops.set(l.sessionId, l);
  }
  return [...tops.values()].sort(newestFirst(tables)).map((l) => {
    const run = tables.runs.get(l.runId)!;
    return {
      sessionId: l.sessionId,
      agentId: l.agentId === "" ? null : l.agentId,
      owner: l.owner,
      runId: l.runId,
      workflowId: run.workflowId,
      pendingStepId: run.lastNodeId === null
        ? null
        : tables.nodes.get(key(run.runId, run.lastNodeId))?.pendingStepId ?? null,
      updatedAt: run.updatedAt,
    };
  });
}

/** A run's frame on its stack, whatever its status, or `null`. */
export function getStackFrame(tables: Tables, runId: string): StackFrame | null {
  const link = tables.runLinks.get(runId);
  return link ? frameOf(tables, link, -1) : null;
}

/** Reviews, gaps and aborts recorded at a node, oldest first. */
export function getNodeEvents(tables: Tables, at: { runId: string; nodeId: string }): NodeEvent[] {
  return tables.nodeEvents.filter((e) => e.runId === at.runId && e.nodeId === at.nodeId)
    .map((e) => JSON.parse(e.payload) as NodeEvent);
}

/** Outputs along the branch from the root to a node, root first. */
export function getBranchOutputs(
  tables: Tables,
  at: { runId: string; nodeId: string; limit: number },
): BranchOutput[] {
  const out: BranchOutput[] = [];
  let row = tables.nodes.get(key(at.runId, at.nodeId));
  for (let hops = 0; row && hops < at.limit; hops++) {
    const output = tables.outputs.get(key(row.runId, row.nodeId));
    if (output) {
      out.unshift({
        nodeId: row.nodeId,
        stepId: output.stepId,
        artifacts: decodeJsonOr(artifactsColumn, output.artifacts, []) as BranchOutput["artifacts"],
      });
    }
    row = row.parentId === null ? undefined : tables.nodes.get(key(at.runId, row.parentId));
  }
  return out;
}
