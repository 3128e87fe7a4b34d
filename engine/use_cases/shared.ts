/**
 * Pieces the execution use-cases share: ids, token minting for a node, recaps, the guard that
 * turns adapter failures into structured errors, and the disk-drift check.
 * @module
 */
import { sha256Hex, toHex } from "../hash.ts";
import type { AttemptRecord, EngineDeps, NodeRecord, StoreReader } from "../ports.ts";
import { fail, ok, type Result, StorageBusyError, StorageCorruptionError } from "../result.ts";
import type { Recap, StepResponse } from "../responses.ts";
import { mintToken } from "../tokens.ts";
import type { CompiledWorkflow } from "../workflow/compile.ts";
import type { Warning } from "../workflow/catalog.ts";
import { isComplete, pendingStep, readState } from "../workflow/interpreter.ts";

/** Random hex id of `bytes` bytes. */
export function randomHex(deps: Pick<EngineDeps, "random">, bytes: number): string {
  return toHex(deps.random.bytes(bytes));
}

/** A node id derived from its origin, so racing writers compute the same id for the same attempt. */
export async function deriveNodeId(parts: readonly string[]): Promise<string> {
  return (await sha256Hex(parts.join(":"))).slice(0, 16);
}

/** The session id shown to agents for a run's session hex. */
export function sessionLabel(sessionId: string): string {
  return `ses_${sessionId}`;
}

/** The run id shown to agents. */
export function runLabel(runId: string): string {
  return `run_${runId}`;
}

/** Fresh tokens for a node: a state token and new ack/checkpoint attempts. */
export function tokensFor(
  deps: Pick<EngineDeps, "keyring" | "random">,
  node: Pick<NodeRecord, "runId" | "nodeId">,
  complete: boolean,
): { stateToken: string; ackToken?: string; checkpointToken: string } {
  const { keyring } = deps;
  const base = { runId: node.runId, nodeId: node.nodeId };
  const stateToken = mintToken(keyring, { kind: "state", ...base });
  const checkpointToken = mintToken(keyring, {
    kind: "checkpoint",
    ...base,
    attemptId: randomHex(deps, 6),
  });
  if (complete) return { stateToken, checkpointToken };
  const ackToken = mintToken(keyring, {
    kind: "ack",
    ...base,
    attemptId: randomHex(deps, 6),
  });
  return { stateToken, ackToken, checkpointToken };
}

/** Builds the response for a node: fresh tokens, the pending step, session facts. */
export function responseFor(
  deps: Pick<EngineDeps, "keyring" | "random">,
  node: Pick<NodeRecord, "runId" | "nodeId" | "sessionId" | "state" | "context" | "preferences">,
  compiled: CompiledWorkflow,
  extra: { workflowHash: string; warnings: Warning[] },
): StepResponse {
  const complete = isComplete(compiled, node.state);
  const tokens = tokensFor(deps, node, complete);
  const response: StepResponse = {
    kind: "ok",
    ...tokens,
    pending: pendingStep(compiled, node.state, node.context),
    isComplete: complete,
    session: {
      sessionId: sessionLabel(node.sessionId),
      runId: runLabel(node.runId),
      nodeId: node.nodeId,
    },
    workflow: { id: compiled.id, name: compiled.name, hash: extra.workflowHash },
    preferences: node.preferences,
    warnings: extra.warnings,
  };
  const declared = Object.entries(compiled.capabilities ?? {});
  if (declared.length > 0) {
    const observed = readState(node.state).caps ?? {};
    response.capabilities = Object.fromEntries(
      declared.sort(([a], [b]) => a < b ? -1 : 1).map(([cap, requested]) => [cap, {
        requested: requested as "required" | "preferred",
        observed: observed[cap as keyof typeof observed] ?? "unknown",
      }]),
    );
  }
  return response;
}

/**
 * The recorded response of an attempt, returned as is (never recomputed). A session that failed
 * an integrity check is refused even for replays: execution tools do not serve it.
 */
export function replayRecorded(recorded: AttemptRecord): Result<StepResponse> {
  if (recorded.corrupt) {
    throw new StorageCorruptionError(
      `Session ${sessionLabel(recorded.sessionId)} failed an integrity check`,
      recorded.sessionId,
    );
  }
  return ok(JSON.parse(recorded.response) as StepResponse);
}

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
  const ancestors = stop >= 0 ? read.slice(0, stop) : read;
  const withNotes = ancestors.filter((n) =>
    n.notesMarkdown !== null && n.nodeKind !== "blocked_attempt"
  );
  const encoder = new TextEncoder();
  const entries: Recap["entries"] = [];
  let used = 0;
  let cut = false;
  for (const n of withNotes) {
    const notes = n.notesMarkdown as string;
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

/** The id of the built-in workflow behind checkpoint-only sessions (it has no file). */
export const SESSION_NOTES_ID = "waymark.session";

/** Warnings when the workflow on disk no longer matches the run's pinned snapshot. */
export async function driftWarnings(
  deps: Pick<EngineDeps, "workflows">,
  workflowId: string,
  pinnedHash: string,
): Promise<Warning[]> {
  if (workflowId === SESSION_NOTES_ID) return [];
  const current = (await deps.workflows.load()).workflows.find((w) => w.id === workflowId);
  if (!current) {
    return [{
      code: "WORKFLOW_FILE_GONE",
      message:
        `\`${workflowId}\` is no longer in any workflow source; this run continues on its pinned copy.`,
    }];
  }
  if (current.hash !== pinnedHash) {
    return [{
      code: "WORKFLOW_CHANGED_ON_DISK",
      message:
        `\`${workflowId}\` changed on disk since this run started; the run continues on its pinned copy (${
          pinnedHash.slice(0, 19)
        }…). Start a new run to use the new version.`,
    }];
  }
  return [];
}

/**
 * Runs a use-case body and turns adapter failures into structured errors, so nothing throws
 * across the boundary.
 */
export async function guard<T>(body: () => Promise<Result<T>>): Promise<Result<T>> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof StorageCorruptionError) {
      return fail(
        "STORAGE_CORRUPTION_DETECTED",
        `${error.message}. Read-only tools and the viewer still work; start a new run to carry on.`,
        {
          details: error.sessionId ? { sessionId: sessionLabel(error.sessionId) } : undefined,
        },
      );
    }
    if (error instanceof StorageBusyError) {
      return fail(
        "STORAGE_BUSY",
        "The database is busy with another waymark process; retry shortly.",
        {
          retry: { kind: "retryable_after_ms", afterMs: 250 },
        },
      );
    }
    return fail(
      "INTERNAL_ERROR",
      `waymark failed unexpectedly: ${
        error instanceof Error ? error.message : String(error)
      }. Nothing was recorded by this call; retrying is safe.`,
      {
        retry: { kind: "retryable_immediate" },
      },
    );
  }
}
