/**
 * The viewer's reads of delegation: the child runs a run's parallel steps opened, grouped by
 * the node and step that opened them, each with where it stands (an abort's explanation too),
 * and which child's end settled each group. Read-only and bounded.
 * @module
 */
import { delegationStatusOf } from "../../../engine/run/delegations.ts";
import {
  type DelegationStatus,
  isMember,
  RUN_STATUSES,
  type RunStatus,
} from "../../../engine/model/vocabulary.ts";
import { decodeJsonOr, eventColumn } from "../rows.ts";
import type { ViewerDb } from "./sessions_list.ts";

/** Most child runs listed for one run (the oldest are kept). */
export const MAX_CHILD_RUNS = 200;

/** A child run as its parent's page lists it. */
export interface ChildRun {
  /** The child run (hex). */
  runId: string;
  /** Its delegation's position in the parallel step, from 0. */
  index: number;
  /** Its workflow. */
  workflowId: string;
  /** The delegation's goal. */
  goal: string | null;
  /** `open`, `complete` or `aborted`. */
  status: DelegationStatus;
  /** Why it was abandoned, when it was. */
  abortExplanation: string | null;
}

/** The children one parallel step opened at one node of the parent run. */
export interface ChildGroup {
  /** The parent node whose pending step opened them. */
  parentNodeId: string;
  /** The parallel step. */
  stepId: string;
  /** The children, in delegation order. */
  children: ChildRun[];
  /** The child whose end settled the group, once every child ended. */
  settledBy: string | null;
}

/** The child runs of a run, grouped by the node and step that opened them (oldest first). */
export async function getChildRuns(
  db: ViewerDb,
  runId: string,
): Promise<{ groups: ChildGroup[]; truncated: boolean }> {
  const rows = await db.selectFrom("run_delegations as d")
    .innerJoin("runs as r", "r.run_id", "d.run_id")
    .select([
      "d.run_id",
      "d.parent_node_id",
      "d.step_id",
      "d.idx",
      "r.workflow_id",
      "r.goal",
      "r.status",
      (eb) =>
        eb.selectFrom("node_events as e").select("e.payload").whereRef("e.run_id", "=", "d.run_id")
          .where("e.kind", "=", "run_aborted").orderBy("e.seq", "desc").limit(1)
          .as("abort_payload"),
    ])
    .where("d.parent_run_id", "=", runId).orderBy("d.created_seq").orderBy("d.idx")
    .limit(MAX_CHILD_RUNS + 1).execute();
  if (rows.length === 0) return { groups: [], truncated: false };
  const settled = await db.selectFrom("node_events").select(["node_id", "payload"])
    .where("run_id", "=", runId).where("kind", "=", "delegations_settled").execute();
  const settledBy = new Map(settled.map((s) => {
    const by = decodeJsonOr(eventColumn, s.payload, null)?.by;
    return [s.node_id, typeof by === "string" ? by : null];
  }));
  const groups = new Map<string, ChildGroup>();
  for (const r of rows.slice(0, MAX_CHILD_RUNS)) {
    const key = `${r.parent_node_id}:${r.step_id}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        parentNodeId: r.parent_node_id,
        stepId: r.step_id,
        children: [],
        settledBy: settledBy.get(r.parent_node_id) ?? null,
      };
      groups.set(key, group);
    }
    const explanation = decodeJsonOr(eventColumn, r.abort_payload, null)?.explanation;
    group.children.push({
      runId: r.run_id,
      index: Number(r.idx),
      workflowId: r.workflow_id,
      goal: r.goal,
      status: delegationStatusOf(statusOf(r.status)),
      abortExplanation: typeof explanation === "string" ? explanation : null,
    });
  }
  return { groups: [...groups.values()], truncated: rows.length > MAX_CHILD_RUNS };
}

/** A stored run status; an unknown one reads as running (the viewer never fails a page on it). */
function statusOf(text: string): RunStatus {
  return isMember(RUN_STATUSES, text) ? text : "running";
}
