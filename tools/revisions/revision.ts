/**
 * What differs between the MCP protocol revisions waymark speaks, as one interface: each
 * revision is a sibling module implementing it (`rev2026_07_28.ts`, `rev2025_11_25.ts`,
 * `rev2025_06_18.ts`), and `mod.ts` chooses one per request (or per connection, for what is
 * settled at the handshake). Nothing else in `tools/` asks which revision it is serving.
 * @module
 */
import type {
  CallToolResult,
  ClientCapabilities,
  Server,
  ServerCapabilities,
  ServerContext,
  Tool,
} from "npm:@modelcontextprotocol/server@2.4.0";
import type { TaskView } from "../../engine/use_cases/task_views.ts";

/** What a 2026-07-28 `DetailedTask` inlines for a finished task: its result or its error. */
export interface TaskOutcome {
  /** A completed task's result. */
  result?: CallToolResult;
  /** A failed task's error. */
  error?: { code: number; message: string; data?: unknown };
}

/** One protocol revision's wire: capabilities, listings, and runs as tasks. */
export interface Revision {
  /** The revision's name, as negotiated. */
  readonly version: string;
  /** The server's capabilities on this revision, from the SDK's `base`. */
  capabilities(base: ServerCapabilities): ServerCapabilities;
  /** The capabilities the client declared (per request, or at the handshake). */
  clientCapabilities(server: Server, ctx: ServerContext): ClientCapabilities | undefined;
  /** A tool as `tools/list` shows it: with `execution` where the revision has the field. */
  listedTool<T extends object>(tool: T, execution: Tool["execution"]): T;
  /** Whether this tool call asks to be answered as a task. */
  wantsTask(server: Server, at: { ctx: ServerContext; params: unknown }): boolean;
  /** The `_meta` that ties an answer to its run's task (`related-task`), where it exists. */
  relatedTask(view: TaskView): Record<string, unknown>;
  /** The `CreateTaskResult` that answers a start asked for as a task, with the start's answer. */
  createTaskResult(view: TaskView, answer: CallToolResult): Record<string, unknown>;
  /** Refuses a `tasks/*` request that did not opt in to tasks (throws a protocol error). */
  requireTasks(server: Server, ctx: ServerContext): void;
  /** `tasks/get`: the task; `outcome` is read only where the answer inlines it. */
  getTask(view: TaskView, outcome: () => Promise<TaskOutcome>): Promise<Record<string, unknown>>;
  /** `tasks/cancel` of a task that had already ended (an answer, or a thrown protocol error). */
  cancelEnded(view: TaskView, taskId: string): Record<string, unknown>;
  /** `tasks/cancel`'s answer once the task is cancelled (`view`: the task after). */
  cancelled(view: TaskView): Record<string, unknown>;
  /** Tells the client that a task's status changed, where the revision has the notification. */
  taskStatusChanged(server: Server, view: TaskView): Promise<void>;
  /**
   * Before a call that may change a task's status: runs `note` (which notes the status it had)
   * where the client is told of changes; elsewhere nothing needs the status before.
   */
  beforeTaskChange(note: () => Promise<void>): Promise<void>;
}
