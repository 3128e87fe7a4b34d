/**
 * The in-memory store's reads of nested runs and node events, as the libSQL store's
 * `stack_reads.ts` answers them (same orderings: pushes by sequence, the last frame to leave by
 * its run's last change).
 * @module
 */
import type { BranchOutput, NodeEvent, StackFrame, StackView } from "../../engine/mod.ts";
import { artifactsColumn, decodeJsonOr } from "../sql/rows.ts";
import { key, type RunLinkRow, type Tables } from "./tables.ts";

function frameOf(tables: Tables, link: RunLinkRow, depth: number): StackFrame | null {
  const run = tables.runs.get(link.runId);
  if (!run || run.lastNodeId === null) return null;
  return {
    runId: link.runId,
    sessionId: link.sessionId,
    agentId: link.agentId === "" ? null : link.agentId,
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
 * The session of an agent's stack in a workspace: the one with the most recently changed
 * running run, else the one whose run finished last.
 */
export function findStackSession(
  tables: Tables,
  at: { workspace: string | null; agentId: string | null },
): string | null {
  const mine = [...tables.runLinks.values()].filter((l) =>
    l.agentId === (at.agentId ?? "") && tables.runs.get(l.runId)?.workspace === at.workspace
  ).sort(newestFirst(tables));
  const running = mine.find((l) => tables.runs.get(l.runId)?.status === "running");
  return (running ?? mine[0])?.sessionId ?? null;
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
