/**
 * The joins and walks over a run graph that the store's reader and the viewer's reads share,
 * and the preferred-tip rule, written once.
 * @module
 */
import { type AliasedRawBuilder, type Kysely, type RawBuilder, sql } from "npm:kysely@0.29.9";
import type { NodeKind } from "../../engine/model/vocabulary.ts";
import { prepare } from "./prepared.ts";
import type { Database } from "./database.ts";

/** A connection or a transaction: reads run on either. */
export type Executor = Kysely<Database>;

const withOutputs = (ex: Executor) =>
  ex.selectFrom("nodes as n").leftJoin(
    "outputs as o",
    (j) => j.onRef("o.run_id", "=", "n.run_id").onRef("o.node_id", "=", "n.node_id"),
  ).leftJoin(
    "contexts as c",
    (j) => j.onRef("c.run_id", "=", "n.run_id").onRef("c.context_id", "=", "n.context_id"),
  );

/** A node's context text: its `contexts` row (`c`), or the row's own copy written before them. */
export const NODE_CONTEXT: AliasedRawBuilder<string, "context"> = sql<
  string
>`coalesce(c.context, n.context)`
  .as("context");
const withParent = (ex: Executor) =>
  withOutputs(ex).leftJoin(
    "nodes as p",
    (j) => j.onRef("p.run_id", "=", "n.run_id").onRef("p.node_id", "=", "n.parent_id"),
  );
const withEdges = (ex: Executor) =>
  withOutputs(ex).leftJoin(
    "edges as e",
    (j) => j.onRef("e.run_id", "=", "n.run_id").onRef("e.to_id", "=", "n.node_id"),
  );

/**
 * Nodes (`n`) with the output recorded on arrival at each (`o`) and their context row (`c`),
 * both left joined; select a node's context as {@linkcode NODE_CONTEXT}.
 */
export function nodesWithOutputs(ex: Executor): ReturnType<typeof withOutputs> {
  return withOutputs(ex);
}

/** {@linkcode nodesWithOutputs} with each node's parent (`p`, left joined). */
export function nodesWithParent(ex: Executor): ReturnType<typeof withParent> {
  return withParent(ex);
}

/** {@linkcode nodesWithOutputs} with the edge from each node's parent (`e`, left joined). */
export function nodesWithEdges(ex: Executor): ReturnType<typeof withEdges> {
  return withEdges(ex);
}

/**
 * `WITH RECURSIVE up(node_id, parent_id, node_kind, hop)`: a node (hop 0) and its ancestors,
 * nearest first, `limit` rows at most. Follow it with a `SELECT` from `up`; `up` carries the
 * node's kind so that a read needing no more of the node joins nothing but its outputs (a join
 * back to `nodes` lets SQLite's planner scan the run's nodes instead of following `up`).
 */
export function ancestorsCte(runId: string, nodeId: string, limit: number): RawBuilder<unknown> {
  return sql`WITH RECURSIVE up(node_id, parent_id, node_kind, hop) AS (
      SELECT node_id, parent_id, node_kind, 0 FROM nodes
      WHERE run_id = ${runId} AND node_id = ${nodeId}
      UNION ALL
      SELECT p.node_id, p.parent_id, p.node_kind, up.hop + 1 FROM nodes p JOIN up
        ON p.run_id = ${runId} AND p.node_id = up.parent_id
      WHERE up.hop + 1 < ${limit}
    )`;
}

/**
 * The kind of node that is never a branch nor a tip: a blocked attempt records a refusal and
 * leads nowhere.
 */
export const NOT_A_BRANCH: NodeKind = "blocked_attempt";

/**
 * The preferred-tip rule: the preferred tip under a node is its most recently created
 * descendant that is not a blocked attempt (itself if none). `runs.last_node_id` keeps the
 * rule's answer for the whole run as nodes are projected; this is the rule for any subtree.
 */
export function isTipCandidate(kind: NodeKind): boolean {
  return kind !== NOT_A_BRANCH;
}

const tipUnder = prepare((_db, p: { runId: string; nodeId: string }) =>
  sql<{ node_id: string }>`
    WITH RECURSIVE sub(node_id) AS (
      SELECT CAST(${p.nodeId} AS text)
      UNION ALL
      SELECT c.node_id FROM nodes c JOIN sub ON c.run_id = ${p.runId} AND c.parent_id = sub.node_id
    )
    SELECT n.node_id FROM sub JOIN nodes n ON n.run_id = ${p.runId} AND n.node_id = sub.node_id
    WHERE n.node_kind != ${NOT_A_BRANCH}
    ORDER BY n.created_seq DESC LIMIT 1`
);

const stepAnchor = prepare((_db, p: { runId: string; nodeId: string }) =>
  sql<{ node_id: string }>`
    WITH RECURSIVE up(node_id, parent_id, node_kind) AS (
      SELECT node_id, parent_id, node_kind FROM nodes WHERE run_id = ${p.runId} AND node_id = ${p.nodeId}
      UNION ALL
      SELECT n.node_id, n.parent_id, n.node_kind FROM nodes n JOIN up
        ON n.run_id = ${p.runId} AND n.node_id = up.parent_id
      WHERE up.node_kind != ${STEP_KIND}
    )
    SELECT node_id FROM up WHERE node_kind = ${STEP_KIND} LIMIT 1`
);

const STEP_KIND: NodeKind = "step";

/**
 * The step node a node hangs below: itself when it is one, else the nearest step ancestor (a
 * checkpoint or a blocked attempt is made at a step), in one statement however long the chain.
 */
export async function stepAnchorId(ex: Executor, runId: string, nodeId: string): Promise<string> {
  return (await stepAnchor.first(ex, { runId, nodeId }))?.node_id ?? nodeId;
}

/** The preferred tip's id under a node (see {@linkcode isTipCandidate}). */
export async function preferredTipId(ex: Executor, runId: string, nodeId: string): Promise<string> {
  return (await tipUnder.first(ex, { runId, nodeId }))?.node_id ?? nodeId;
}
