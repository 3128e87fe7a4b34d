/**
 * Lane layout of a run graph, git-log style: one row per node, one lane per branch. Rows are a
 * depth-first order in which a fork's side branches come right under the node they leave from
 * and the node's continuation comes after them (like `git log --graph --topo-order`), so a side
 * branch holds its lane only for its own rows, however late the rewind happened. The preferred
 * branch (root → preferred tip) is always lane 0 and ends on the last row, so the line the agent
 * carries on is straight; every other branch takes the lowest free lane.
 *
 * A run graph is a tree, so this O(n) pass replaces a general layered layout (dagre took
 * 0.6–1.4 s for a 1,000-node tree here, against a 100 ms budget for the whole page).
 * @module
 */

/** What the layout needs of a node. */
export interface LayoutInput {
  /** Node id. */
  id: string;
  /** Parent id (`null` for the root; a parent missing from the input counts as a cut). */
  parentId: string | null;
}

/** A chain of nodes drawn in one lane. */
export interface Branch {
  /** Index of the branch (0 is the preferred one). */
  index: number;
  /** Its lane. */
  lane: number;
  /** Node ids, top to bottom. */
  nodeIds: string[];
  /** The node it forks from (`null` for the root branch or a cut). */
  forkFromId: string | null;
  /** Whether this is the preferred branch (root → preferred tip). */
  preferred: boolean;
}

/** A placed node. */
export interface Placed {
  /** Node id. */
  id: string;
  /** Row (depth-first, side branches before the continuation). */
  row: number;
  /** Lane. */
  lane: number;
  /** The branch it belongs to. */
  branch: number;
  /** Whether it is on the preferred branch. */
  preferred: boolean;
  /** Whether its parent was cut off (not in the input). */
  cut: boolean;
}

/** An edge to draw. */
export interface PlacedEdge {
  /** Parent id. */
  from: string;
  /** Child id. */
  to: string;
  /** Whether the child starts a new branch here. */
  fork: boolean;
}

/** The layout. */
export interface Layout {
  /** Nodes in input (creation) order; sort by `row` to draw. */
  nodes: Placed[];
  /** Edges. */
  edges: PlacedEdge[];
  /** Branches, preferred first, then by starting row. */
  branches: Branch[];
  /** Lanes used. */
  laneCount: number;
}

/** The input as a tree, with the preferred path and each node's continuation. */
interface Tree {
  nodes: readonly LayoutInput[];
  /** Ids in the input (a parent not in it is a cut). */
  present: Set<string>;
  children: Map<string, string[]>;
  /** The preferred tip and its ancestors present in the input. */
  preferredPath: Set<string>;
  /** Each parent's continuation: the preferred child on the preferred path, else the first. */
  continuation: Map<string, string>;
}

/** A branch before lanes are assigned and branches renumbered. */
type Chain = { nodeIds: string[]; forkFromId: string | null; preferred: boolean };

function treeOf(nodes: readonly LayoutInput[], preferredTipId: string | null): Tree {
  const present = new Set(nodes.map((n) => n.id));
  const children = new Map<string, string[]>();
  for (const n of nodes) {
    if (n.parentId !== null && present.has(n.parentId)) {
      const list = children.get(n.parentId) ?? [];
      list.push(n.id);
      children.set(n.parentId, list);
    }
  }
  const parentOf = new Map(nodes.map((n) => [n.id, n.parentId]));
  const preferredPath = new Set<string>();
  let cursor: string | null = preferredTipId !== null && present.has(preferredTipId)
    ? preferredTipId
    : null;
  while (cursor !== null && present.has(cursor)) {
    preferredPath.add(cursor);
    cursor = parentOf.get(cursor) ?? null;
  }
  const continuation = new Map<string, string>();
  for (const [parent, kids] of children) {
    const next = preferredPath.has(parent) ? kids.find((k) => preferredPath.has(k)) : undefined;
    continuation.set(parent, next ?? kids[0]!);
  }
  return { nodes, present, children, preferredPath, continuation };
}

/**
 * Rows: depth first from each root (the preferred one last); at each node its side branches
 * first, in creation order, then its continuation (an explicit stack: runs can be deep).
 */
function rowsOf(tree: Tree): { rows: string[]; rowOf: Map<string, number> } {
  const { nodes, present, preferredPath, children, continuation } = tree;
  const roots = nodes.filter((n) => n.parentId === null || !present.has(n.parentId))
    .sort((a, b) => Number(preferredPath.has(a.id)) - Number(preferredPath.has(b.id)));
  const rows: string[] = [];
  const rowOf = new Map<string, number>();
  const stack: string[] = roots.map((r) => r.id).reverse();
  while (stack.length > 0) {
    const id = stack.pop()!;
    rowOf.set(id, rows.length);
    rows.push(id);
    const kids = children.get(id);
    if (!kids) continue;
    const next = continuation.get(id)!;
    stack.push(next);
    for (let i = kids.length - 1; i >= 0; i--) if (kids[i] !== next) stack.push(kids[i]!);
  }
  return { rows, rowOf };
}

/** Branches: a head is a root, a cut, or a child that is not its parent's continuation. */
function chainsOf(tree: Tree, rows: string[]): { chains: Chain[]; branchOf: Map<string, number> } {
  const byId = new Map(tree.nodes.map((n) => [n.id, n]));
  const branchOf = new Map<string, number>();
  const chains: Chain[] = [];
  for (const id of rows) {
    const n = byId.get(id)!;
    const parent = n.parentId;
    const hasParent = parent !== null && tree.present.has(parent);
    if (hasParent && tree.continuation.get(parent) === n.id) {
      const b = branchOf.get(parent)!;
      branchOf.set(n.id, b);
      chains[b]!.nodeIds.push(n.id);
    } else {
      branchOf.set(n.id, chains.length);
      chains.push({
        nodeIds: [n.id],
        forkFromId: hasParent ? parent : null,
        preferred: tree.preferredPath.has(n.id),
      });
    }
  }
  return { chains, branchOf };
}

/** Lanes: the preferred branch keeps lane 0; others take the lowest lane free over their rows. */
function lanesOf(chains: Chain[], rowOf: Map<string, number>): number[] {
  const laneOf: number[] = new Array(chains.length).fill(0);
  const busyUntil: number[] = [];
  const preferredIndex = chains.findIndex((c) => c.preferred);
  if (preferredIndex >= 0) busyUntil[0] = Infinity;
  const spans = chains.map((chain, i) => ({
    i,
    start: chain.forkFromId === null
      ? rowOf.get(chain.nodeIds[0]!)!
      : rowOf.get(chain.forkFromId)! + 1,
    end: rowOf.get(chain.nodeIds[chain.nodeIds.length - 1]!)!,
  })).filter((s) => s.i !== preferredIndex).sort((a, b) => a.start - b.start || a.i - b.i);
  for (const span of spans) {
    let lane = preferredIndex >= 0 ? 1 : 0;
    while ((busyUntil[lane] ?? -1) >= span.start) lane++;
    busyUntil[lane] = span.end;
    laneOf[span.i] = lane;
  }
  return laneOf;
}

/** Lays out a run graph given its nodes in creation order and the preferred tip. */
export function layoutRun(nodes: readonly LayoutInput[], preferredTipId: string | null): Layout {
  const tree = treeOf(nodes, preferredTipId);
  const { present, preferredPath, continuation } = tree;
  const { rows, rowOf } = rowsOf(tree);
  const { chains, branchOf } = chainsOf(tree, rows);
  const laneOf = lanesOf(chains, rowOf);
  const preferredIndex = chains.findIndex((c) => c.preferred);
  const order = chains.map((_, i) => i).sort((a, b) =>
    a === preferredIndex ? -1 : b === preferredIndex ? 1 : a - b
  );
  const renumber = new Map(order.map((old, i) => [old, i]));
  const placed = nodes.map((n): Placed => {
    const b = branchOf.get(n.id)!;
    const parent = n.parentId;
    return {
      id: n.id,
      row: rowOf.get(n.id)!,
      lane: laneOf[b]!,
      branch: renumber.get(b)!,
      preferred: preferredPath.has(n.id),
      cut: parent !== null && !present.has(parent),
    };
  });
  const edges: PlacedEdge[] = [];
  for (const n of nodes) {
    if (n.parentId !== null && present.has(n.parentId)) {
      edges.push({
        from: n.parentId,
        to: n.id,
        fork: continuation.get(n.parentId) !== n.id,
      });
    }
  }
  return {
    nodes: placed,
    edges,
    branches: order.map((old, i) => ({
      index: i,
      lane: laneOf[old]!,
      nodeIds: chains[old]!.nodeIds,
      forkFromId: chains[old]!.forkFromId,
      preferred: old === preferredIndex,
    })),
    laneCount: Math.max(1, ...laneOf.map((l) => l + 1)),
  };
}
