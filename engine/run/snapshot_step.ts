/**
 * Snapshots on the way of a call: taken before the write transaction (never holding its lock),
 * recorded as a `snapshot_recorded` event on the node the call created, and said in the answer
 * when none was taken (a warning) or when the files on disk differ from the node a call forked
 * from or rehydrated (`workspaceDiffers`, with the call that restores them). Replays never get
 * here: they return the recorded answer.
 * @module
 */
import type { StepResponse } from "../answers/responses.ts";
import type { DomainEvent } from "../model/events.ts";
import { beforeAttempt } from "./node_events.ts";
import type { EngineDeps, NodeRecord, StoreReader } from "../model/ports.ts";
import type { SnapshotTaken, WorkspaceSnapshot } from "../model/snapshots.ts";
import { checkpointChain } from "./branches.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";

/** What a call says of its folders (`CallOptions`' fields). */
type Folders = { workspace?: WorkspaceObservation; commandFolder?: string | null };

/** What an attempt decided (`Recorded`'s fields this module reads). */
interface Decided {
  response: StepResponse;
  events: DomainEvent[];
  answered?: { node: Pick<NodeRecord, "nodeId"> };
}

/** Notices said once, at a run's start, not at every step (nothing to snapshot there). */
const SAID_AT_START = new Set(["SNAPSHOT_NOT_A_REPOSITORY", "SNAPSHOT_NO_GIT"]);

/**
 * The folder to snapshot for a call: its workspace, unless the call named no folder of its own
 * (an HTTP client with no root, whose observed folder is the server's).
 */
export function snapshotFolder(options: Folders): string | null {
  if (options.commandFolder === null) return null;
  return options.workspace?.workspace ?? null;
}

/** The snapshot recorded at a node, or `null` (none taken, or the node has none). */
export async function snapshotAt(
  store: StoreReader,
  node: Pick<NodeRecord, "runId" | "nodeId">,
): Promise<WorkspaceSnapshot | null> {
  const events = await store.getNodeEvents(node.runId, node.nodeId);
  for (const e of events) if (e.kind === "snapshot_recorded") return e.snapshot;
  return null;
}

/**
 * Takes the snapshot of a step's node (an acknowledgement's or a checkpoint's), with changes
 * since the node it will hang below; `null` when there is nothing to take (no snapshot port,
 * no workspace folder, or outside git after the start said so).
 */
export async function snapshotForStep(
  deps: Pick<EngineDeps, "snapshots" | "store">,
  at: { node: NodeRecord; workspace: string | null | undefined },
): Promise<SnapshotTaken | null> {
  if (!takesSnapshots(deps, at.workspace)) return null;
  const parent = async () => {
    const { end } = await checkpointChain(deps.store, at.node);
    return (await snapshotAt(deps.store, end))?.commit ?? null;
  };
  const taken = await deps.snapshots!.take(at.workspace, { runId: at.node.runId, parent });
  if (taken.snapshot.commit === null && SAID_AT_START.has(taken.notice?.code ?? "")) return null;
  return taken;
}

/** Whether a step's call in `workspace` takes a snapshot (see {@linkcode snapshotForStep}). */
export function takesSnapshots(
  deps: Pick<EngineDeps, "snapshots">,
  workspace: string | null | undefined,
): workspace is string {
  return deps.snapshots?.taking === true && !!workspace;
}

/** Takes the snapshot of a run's root; `null` without a snapshot port or a workspace folder. */
export function snapshotForStart(
  deps: Pick<EngineDeps, "snapshots">,
  at: { runId: string; workspace: string | null | undefined },
): Promise<SnapshotTaken | null> {
  if (!deps.snapshots?.taking || !at.workspace) return Promise.resolve(null);
  return deps.snapshots.take(at.workspace, { runId: at.runId, parent: null });
}

/**
 * Says in a rehydrate's `response` how the files differ from the node's snapshot, when they
 * do (the agent was rewound; its files were not). Nothing is recorded.
 */
export async function compareWorkspace(
  deps: Pick<EngineDeps, "snapshots" | "store">,
  response: StepResponse,
  at: { node: NodeRecord; stateToken: string; workspace: string | null | undefined },
): Promise<void> {
  if (!deps.snapshots?.taking || !at.workspace) return;
  const snapshot = await snapshotAt(deps.store, at.node);
  if (!snapshot?.commit || snapshot.workspace !== at.workspace) return;
  const diff = await deps.snapshots.compare(at.workspace, snapshot.commit);
  if (!diff) return;
  sayDiffers(response, {
    files: diff.files,
    lines: diff.linesAdded + diff.linesRemoved,
    stateToken: at.stateToken,
  });
}

/** The `snapshot_recorded` event of a node. */
export function snapshotEvent(
  taken: SnapshotTaken,
  at: Pick<NodeRecord, "sessionId" | "runId" | "nodeId">,
): DomainEvent {
  const event: DomainEvent = {
    kind: "snapshot_recorded",
    sessionId: at.sessionId,
    runId: at.runId,
    nodeId: at.nodeId,
    snapshot: taken.snapshot,
    changes: taken.changes,
  };
  if (taken.notice) event.notice = taken.notice;
  return event;
}

/** A notice as the answer's warning. */
export function noticeWarning(response: StepResponse, taken: SnapshotTaken | null): void {
  if (!taken?.notice) return;
  response.warnings = [...(response.warnings ?? []), {
    code: taken.notice.code,
    message: taken.notice.message,
  }];
}

/** Says in `response` that the files differ from the node `stateToken` names, when they do. */
export function sayDiffers(
  response: StepResponse,
  at: { files: number; lines: number; stateToken: string },
): void {
  if (at.files === 0) return;
  response.workspaceDiffers = {
    files: at.files,
    lines: at.lines,
    call: { name: "restore_workspace", arguments: { stateToken: at.stateToken } },
  };
}

/**
 * The attempt's record with its snapshot: the event on the node the attempt created, the
 * notice (and, for a fork, how the files differ from the node forked from) in the response and
 * so in the recorded response a replay returns.
 */
export function withSnapshot<R extends Decided>(
  recorded: R,
  at: {
    taken: SnapshotTaken | null;
    stateToken: string;
    node: Pick<NodeRecord, "sessionId" | "runId">;
  },
): R {
  const { taken } = at;
  if (!taken) return recorded;
  const { response } = recorded;
  const nodeId = response.blockedAttempt?.nodeId ?? recorded.answered?.node.nodeId ??
    response.checkpoint?.nodeId;
  if (nodeId === undefined) return recorded;
  noticeWarning(response, taken);
  if (response.forked && taken.changes) {
    const c = taken.changes;
    sayDiffers(response, {
      files: c.added + c.modified + c.deleted,
      lines: c.linesAdded + c.linesRemoved,
      stateToken: at.stateToken,
    });
  }
  const event = snapshotEvent(taken, {
    sessionId: at.node.sessionId,
    runId: at.node.runId,
    nodeId,
  });
  return beforeAttempt(recorded, event);
}
