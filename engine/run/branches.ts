/**
 * Branches of a run graph: the checkpoint chain an ack or checkpoint attaches to, and the
 * summary of the branches that already left a node (a fork).
 * @module
 */
import type { NodeRecord, StoreReader } from "../model/ports.ts";
import type { Branch, StepResponse } from "../answers/responses.ts";
import { buildRecap } from "../answers/recap.ts";

const PREVIEW_CHARS = 160;

/** Summaries of a node's existing children. */
export function branchSummaries(children: readonly NodeRecord[]): Branch[] {
  return children.map((child) => ({
    nodeId: child.nodeId,
    kind: child.nodeKind,
    pendingStepId: child.pendingStepId,
    notesPreview: child.notesMarkdown === null
      ? null
      : child.notesMarkdown.length > PREVIEW_CHARS
      ? `${child.notesMarkdown.slice(0, PREVIEW_CHARS - 1)}…`
      : child.notesMarkdown,
  }));
}

/**
 * A node's checkpoint chain: the node, then its newest checkpoint child, then that one's, and so
 * on. Checkpoints and acks attach at the chain's end (so a checkpoint never forks), and the step
 * children anywhere along it are the branches that already left this snapshot.
 */
export async function checkpointChain(
  store: StoreReader,
  node: NodeRecord,
): Promise<{ end: NodeRecord; branches: NodeRecord[] }> {
  let end = node;
  const branches: NodeRecord[] = [];
  for (;;) {
    const children = await store.getChildren(end.runId, end.nodeId);
    branches.push(...children.filter((c) => c.nodeKind === "step"));
    const checkpoints = children.filter((c) => c.nodeKind === "checkpoint");
    const next = checkpoints[checkpoints.length - 1];
    if (!next) return { end, branches };
    end = next;
  }
}

/**
 * What a response says about a fork at `node`: the branches already there, and the notes from
 * `node` down to the preferred `tip` (what the other branch did).
 */
export async function forkSummary(
  store: StoreReader,
  fork: { node: NodeRecord; branches: readonly NodeRecord[]; tip: NodeRecord },
): Promise<NonNullable<StepResponse["forked"]>> {
  return {
    existingBranches: branchSummaries(fork.branches),
    preferredTipNodeId: fork.tip.nodeId,
    downstreamRecap: await buildRecap(store, fork.tip, { stopAt: fork.node }),
  };
}
