/**
 * The in-memory store's task reads: the same answers as `store/sql/task_reads.ts`, over the
 * tables.
 * @module
 */
import type { Artifact, BranchStep, RunListing, RunState } from "../../engine/mod.ts";
import { artifactsColumn, decodeJsonOr } from "../sql/rows.ts";
import { key, type RunRow, type Tables } from "./tables.ts";

/** The nodes from the root to a node (root first), at most the `limit` nearest to it. */
export function getBranchSteps(
  tables: Tables,
  at: { runId: string; nodeId: string; limit: number },
): BranchStep[] {
  const out: BranchStep[] = [];
  let row = tables.nodes.get(key(at.runId, at.nodeId));
  for (let hops = 0; row && hops < at.limit; hops++) {
    const output = tables.outputs.get(key(row.runId, row.nodeId));
    const parent = row.parentId === null
      ? undefined
      : tables.nodes.get(key(at.runId, row.parentId));
    out.unshift({
      nodeId: row.nodeId,
      nodeKind: row.nodeKind,
      state: JSON.parse(row.state) as RunState,
      pendingStepId: row.pendingStepId,
      completedStepId: row.nodeKind === "step" && hops + 1 < at.limit
        ? parent?.pendingStepId ?? null
        : null,
      notesMarkdown: output?.notesMarkdown ?? null,
      artifacts: decodeJsonOr(artifactsColumn, output?.artifacts, []) as Artifact[],
    });
    row = parent;
  }
  return out;
}

function toListing(tables: Tables, run: RunRow): RunListing {
  const session = tables.sessions.get(run.sessionId)!;
  return {
    runId: run.runId,
    sessionId: run.sessionId,
    sessionKind: session.kind,
    workflowId: run.workflowId,
    workflowHash: run.workflowHash,
    goal: run.goal,
    status: run.status,
    corrupt: session.health === "corrupt",
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    tipNodeId: run.lastNodeId,
  };
}

/** A run with its timestamps, goal and preferred tip, or `null`. */
export function getRunListing(tables: Tables, runId: string): RunListing | null {
  const run = tables.runs.get(runId);
  return run && tables.sessions.has(run.sessionId) ? toListing(tables, run) : null;
}

/** Runs of workflow sessions, most recently changed first. */
export function listRuns(tables: Tables, page: { limit: number; offset: number }): RunListing[] {
  return [...tables.runs.values()]
    .filter((r) => tables.sessions.get(r.sessionId)?.kind !== "notes")
    .sort((a, b) =>
      a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.runId < b.runId ? -1 : 1
    )
    .slice(page.offset, page.offset + page.limit)
    .map((r) => toListing(tables, r));
}

/** The log's highest sequence number. */
export function changeCounter(tables: Tables): number {
  return tables.events.at(-1)?.seq ?? 0;
}
