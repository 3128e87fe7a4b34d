/**
 * Context stored once per change. The engine hands every `node_created` event the whole
 * context in effect at that node; most nodes carry their parent's unchanged, so the log and the
 * node rows would otherwise grow with history × context. As logged, a `node_created` names its
 * context by id (`contextId`, the SHA-256 of its JSON), and carries the context itself only the
 * first time its run logs that id; the `contexts` table keeps each one once and node rows point
 * at it. The log stays the whole truth: replayed in order, it rebuilds every context. Readers
 * see nodes with their context as before.
 * @module
 */
import type { DomainEvent } from "../../engine/model/events.ts";
import { digest } from "./rows.ts";

type NodeCreated = Extract<DomainEvent, { kind: "node_created" }>;

/**
 * `node_created` as logged: its context by id, the context itself only where the run first
 * logged that id. Events logged before context ids existed carry `context` and no id.
 */
export type LoggedNodeCreated = Omit<NodeCreated, "context"> & {
  contextId?: string;
  context?: Record<string, unknown>;
};

/** An event as the log holds it. */
export type LoggedEvent = Exclude<DomainEvent, NodeCreated> | LoggedNodeCreated;

/** A context's id: the SHA-256 of its JSON text. */
export function contextId(context: Record<string, unknown>): string {
  return digest(JSON.stringify(context));
}

/**
 * The events as logged. `known(runId, contextId)` says whether the run already logged that
 * context; contexts first seen earlier in the same batch count as known. `idOf` gives a
 * context's id (a caller that already hashed the batch's contexts passes its own).
 */
export function loggedEvents(
  events: readonly DomainEvent[],
  known: (runId: string, contextId: string) => boolean,
  idOf: (context: Record<string, unknown>) => string = contextId,
): LoggedEvent[] {
  const seen = new Set<string>();
  const out: LoggedEvent[] = [];
  for (const event of events) {
    if (event.kind !== "node_created") {
      out.push(event);
      continue;
    }
    const { context, ...rest } = event;
    const id = idOf(context);
    const batchKey = `${event.runId}:${id}`;
    const first = !seen.has(batchKey) && !known(event.runId, id);
    seen.add(batchKey);
    out.push({ ...rest, contextId: id, ...(first ? { context } : {}) });
  }
  return out;
}
