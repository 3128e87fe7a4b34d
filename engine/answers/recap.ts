/**
 * Recaps: the notes along a branch, most recent first, cut to a byte budget, so an agent that
 * lost its context can carry on from what was written down.
 * @module
 */
import { runLabel } from "../model/ids.ts";
import type { NodeRecord, StoreReader } from "../model/ports.ts";
import { InvariantViolationError } from "../model/result.ts";
import type { Evidence } from "../verification/evidence.ts";
import type { Recap } from "./responses.ts";

/** Recap budget in bytes of notes. */
export const RECAP_BUDGET_BYTES = 4096;
/** How many ancestors a recap looks at; a recap never reads more of a run than this. */
export const RECAP_MAX_NODES = 64;

/** Options of {@linkcode buildRecap}. */
export interface RecapOptions {
  /** Stop below this ancestor (exclusive): a downstream recap from a fork point to a tip. */
  stopAt?: { nodeId: string; depth: number };
  /** Byte budget of the notes kept; default {@linkcode RECAP_BUDGET_BYTES}. */
  budgetBytes?: number;
}

/**
 * The notes along a branch up to a node, most recent first, kept while they fit the byte
 * budget (UTF-8 bytes of the notes). The first entry that does not fit ends the recap, so what
 * is kept is always an unbroken run of the most recent entries. Reads at most
 * {@linkcode RECAP_MAX_NODES} nodes, whatever the run's length; older entries count as omitted.
 */
export async function buildRecap(
  store: StoreReader,
  node: NodeRecord,
  options: RecapOptions = {},
): Promise<Recap> {
  const budget = options.budgetBytes ?? RECAP_BUDGET_BYTES;
  const read = await store.getAncestorNotes(node.runId, node.nodeId, RECAP_MAX_NODES);
  const stopId = options.stopAt?.nodeId;
  const stop = stopId === undefined ? -1 : read.findIndex((n) => n.nodeId === stopId);
  if (stop < 0 && read.length < Math.min(RECAP_MAX_NODES, node.depth + 1)) {
    // The walk ended short of both its window and the root: an ancestor is not stored.
    throw new InvariantViolationError(
      `Node ${node.nodeId} of run ${
        runLabel(node.runId)
      } is at depth ${node.depth}, but its ancestors end after ${read.length} node(s): the parent of ${
        read.at(-1)?.nodeId ?? node.nodeId
      } is missing`,
      {
        invariant: "parent_exists",
        runId: runLabel(node.runId),
        nodeId: node.nodeId,
        depth: node.depth,
        ancestorsFound: read.length,
        orphanNodeId: read.at(-1)?.nodeId ?? node.nodeId,
      },
    );
  }
  const ancestors = stop >= 0 ? read.slice(0, stop) : read;
  const withNotes = ancestors.filter((n) =>
    (n.notesMarkdown !== null || n.evidence) && n.nodeKind !== "blocked_attempt"
  );
  const encoder = new TextEncoder();
  const entries: Recap["entries"] = [];
  let used = 0;
  let cut = false;
  for (const n of withNotes) {
    const notes = n.notesMarkdown ?? "";
    const size = encoder.encode(notes).length;
    if (used + size > budget) {
      cut = true;
      break;
    }
    used += size;
    entries.push({
      nodeId: n.nodeId,
      kind: n.nodeKind === "checkpoint" ? "checkpoint" : "step",
      stepId: n.notesStepId,
      notesMarkdown: notes,
      ...(n.evidence ? { verification: verificationSummary(n.evidence) } : {}),
    });
  }
  // Nodes beyond the read window: the walk stopped before the root (or the stop node).
  const span = options.stopAt ? node.depth - options.stopAt.depth : node.depth + 1;
  const unread = stop >= 0 ? 0 : Math.max(0, span - read.length);
  const omitted = withNotes.length - entries.length + unread;
  return {
    entries,
    truncated: cut || unread > 0,
    omitted,
    omittedExact: unread === 0,
    policy: "most_recent_first",
    budgetBytes: budget,
    usedBytes: used,
  };
}

/** What a recap says of a node's verification: the verdict and where it was taken. */
function verificationSummary(e: Evidence): NonNullable<Recap["entries"][number]["verification"]> {
  const { verdict, commandLine, exitCode, gitHead, gitDirty } = e;
  return { verdict, commandLine, exitCode, gitHead, gitDirty };
}
