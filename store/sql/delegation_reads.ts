/**
 * The store port's reads of delegation: the child runs a parallel step opened at a node, with
 * where each stands, and the parent a child run was opened for.
 * @module
 */
import type { DelegatedRun, DelegationLink } from "../../engine/model/ports.ts";
import { StorageCorruptionError } from "../../engine/model/result.ts";
import { isMember, RUN_STATUSES } from "../../engine/model/vocabulary.ts";
import type { Executor } from "./graph_sql.ts";
import { prepare } from "./prepared.ts";

const children = prepare((db, p: { runId: string; nodeId: string }) =>
  db.selectFrom("run_delegations as d")
    .innerJoin("runs as r", "r.run_id", "d.run_id")
    .select([
      "d.run_id",
      "d.session_id",
      "d.idx",
      "d.step_id",
      "r.workflow_id",
      "r.goal",
      "r.status",
      "r.last_node_id",
      (eb) =>
        eb.selectFrom("nodes as n").select("n.node_id").whereRef("n.run_id", "=", "d.run_id")
          .where("n.parent_id", "is", null).limit(1).as("root_node_id"),
      (eb) =>
        eb.selectFrom("nodes as n").select("n.node_id").whereRef("n.run_id", "=", "d.run_id")
          .where("n.is_complete", "=", 1).orderBy("n.created_seq", "desc").limit(1)
          .as("final_node_id"),
      (eb) =>
        eb.selectFrom("node_events as e").select("e.payload").whereRef("e.run_id", "=", "d.run_id")
          .where("e.kind", "=", "run_aborted").orderBy("e.seq", "desc").limit(1)
          .as("abort_payload"),
    ])
    .where("d.parent_run_id", "=", p.runId).where("d.parent_node_id", "=", p.nodeId)
    .orderBy("d.idx")
);

/** The child runs opened at a parent node, in delegation order. */
export async function getDelegations(
  ex: Executor,
  at: { runId: string; nodeId: string },
): Promise<DelegatedRun[]> {
  const rows = await children.all(ex, at);
  return rows.map((r) => {
    if (!isMember(RUN_STATUSES, r.status)) {
      throw new StorageCorruptionError(`Run ${r.run_id} has an unknown status`, r.session_id);
    }
    if (!r.root_node_id) {
      throw new StorageCorruptionError(`Run ${r.run_id} has no root node`, r.session_id);
    }
    return {
      runId: r.run_id,
      sessionId: r.session_id,
      index: Number(r.idx),
      stepId: r.step_id,
      workflowId: r.workflow_id,
      goal: r.goal,
      status: r.status,
      tipNodeId: r.last_node_id,
      rootNodeId: r.root_node_id,
      finalNodeId: r.final_node_id ?? null,
      abortExplanation: abortExplanation(r.abort_payload ?? null, r.session_id),
    };
  });
}

function abortExplanation(payload: string | null, sessionId: string): string | null {
  if (payload === null) return null;
  try {
    const event = JSON.parse(payload) as { explanation?: unknown };
    return typeof event.explanation === "string" ? event.explanation : null;
  } catch {
    throw new StorageCorruptionError("A recorded abort is not JSON", sessionId);
  }
}

const link = prepare((db, p: { runId: string }) =>
  db.selectFrom("run_delegations").selectAll().where("run_id", "=", p.runId)
);

/** The parent of a delegated child run, or `null` for a run no parallel step opened. */
export async function getDelegationLink(
  ex: Executor,
  runId: string,
): Promise<DelegationLink | null> {
  const row = await link.first(ex, { runId });
  if (!row) return null;
  return {
    runId: row.run_id,
    parentRunId: row.parent_run_id,
    parentNodeId: row.parent_node_id,
    stepId: row.step_id,
    index: Number(row.idx),
  };
}
