/**
 * What the request handlers of one MCP connection share: the engine, the notifications they
 * send, and the client's workspace per request.
 * @module
 */
import type { ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { WaymarkError } from "../../engine/model/result.ts";
import type { WorkspaceObservation } from "../../engine/model/workspace.ts";
import type { TaskSurface } from "../tasks/surface.ts";
import type { TaskOwner } from "../tasks/owner.ts";
import { actingAs } from "../../engine/access/team_policy.ts";
import type { RunAccess } from "../../engine/model/vocabulary.ts";
import { principalOf } from "../context/principal.ts";

/** Notifications a connection sends besides answers. */
export interface Notifier {
  /** Logs a health problem (a corrupt session, a busy store) to the client; others pass. */
  health(error: WaymarkError): Promise<void>;
  /** Tells subscribers that a session (`ses_…`) changed. */
  sessionChanged(sessionLabel: string): Promise<void>;
  /** The resource URIs the client subscribed to. */
  readonly subscriptions: ReadonlySet<string>;
  /** Subscribes the client to a resource. */
  subscribe(uri: string): void;
  /** Ends a subscription. */
  unsubscribe(uri: string): void;
}

/** One connection's shared parts. */
export interface Connection {
  /** The engine. */
  deps: EngineDeps;
  /** Its notifications. */
  notifier: Notifier;
  /** Runs as tasks, as this connection sees them. */
  tasks: TaskSurface;
  /** Whose tasks `tasks/*` answer (HTTP: the runs this requestor started); none: every run. */
  owner?: TaskOwner;
  /** Who besides its starter may continue a run an authenticated call starts (`team_policy.ts`). */
  runAccess?: RunAccess;
  /**
   * The client's workspace for a request; asks the client through it when roots are stale.
   * `commandFolder` is where verification commands may run for it (`null`: nowhere).
   */
  workspace(ctx: ServerContext): Promise<WorkspaceObservation & { commandFolder?: string | null }>;
  /** Where to send log lines (never stdout). */
  log?: (line: string) => void;
  /** A `tools/call`'s arguments as they arrived on the wire, before the SDK copied them. */
  rawArguments?: (requestId: string | number) => unknown;
  /**
   * What tells this connection's requests apart for a retried start (`calls/replay_key.ts`):
   * a random id of the connection, and whether it ends with its one request (stateless HTTP).
   */
  replayScope?: { connection: string; stateless: boolean };
  /** Told each tool call: its tool, its error code (`null`: answered) and its time (metrics). */
  onToolCall?: (tool: string, code: string | null, ms: number) => void;
}

/**
 * The engine as the caller of `ctx` uses it: everything its call appends names its principal
 * (`tools/context/principal.ts`), and the team policy sees who it is; unauthenticated, the connection's.
 */
export function callerDeps(connection: Connection, ctx: ServerContext | undefined): EngineDeps {
  return actingAs(connection.deps, { principal: principalOf(ctx), access: connection.runAccess });
}
