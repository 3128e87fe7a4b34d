/**
 * The `tasks/*` methods, hand-registered with explicit schemas on the SDK's low-level server
 * (SDK 2.4.0 has no tasks runtime), for both designs a client may speak:
 *
 * - 2026-07-28 extension (`io.modelcontextprotocol/tasks`), on requests that declare it:
 *   `tasks/get` (a `DetailedTask`: status, `pollIntervalMs`, the progress `_meta`, and the
 *   result, error or input requests), `tasks/update` (the user's answers to a step's user-only
 *   dependencies) and `tasks/cancel` (an empty ack). Without the declaration they answer
 *   `-32021`; `tasks/list` and `tasks/result` do not exist there (`-32601`, by the SDK).
 * - 2025-11-25 design: `tasks/get`, `tasks/list` (paged), `tasks/cancel` and `tasks/result`,
 *   which waits until the run ends, asking the user through the client (with the task's
 *   `related-task` metadata) when the run waits on them.
 *
 * Each answer takes the shape of its request's protocol revision (`revisions/`). Every answer is
 * read from the store when asked. The only wait is `tasks/result`'s, which
 * re-reads the store every poll interval while that request is open and ends with it.
 * @module
 */
import {
  type CallToolResult,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type Server,
  type ServerContext,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { z } from "npm:zod@4.6.7";
import type { EngineDeps } from "../../engine/model/ports.ts";
import { renderStepResponse } from "../../engine/answers/text.ts";
import { abortRun } from "../../engine/use_cases/abort_run.ts";
import { isTerminal, runIdOfTask } from "../../engine/run/task_status.ts";
import {
  listTasks,
  type TaskView,
  taskView,
  tipResponse,
} from "../../engine/use_cases/task_views.ts";
import { recordUserInput } from "../../engine/use_cases/user_input.ts";
import { callerDeps, type Connection } from "../server/connection.ts";
import type { TaskOwner } from "./owner.ts";
import { canElicit } from "../context/elicit.ts";
import { errorResult } from "../calls/error_envelope.ts";
import { elicitationForm, TASK_POLL_INTERVAL_MS, taskMeta, USER_INPUT_KEY } from "./wire.ts";
import { legacyTask, type Revision, revisionOf, type TaskOutcome } from "../revisions/mod.ts";

/** Tasks per `tasks/list` page. */
export const TASK_PAGE = 50;
const CANCELLED = "Cancelled through the MCP client (tasks/cancel).";
const taskIdParams = z.looseObject({ taskId: z.string() });
const listParams = z.looseObject({ cursor: z.string().optional() });

/**
 * The task `taskId` names, noted by the connection; an unknown one, or one another requestor
 * started (`task_owner.ts`), is `-32602`, alike, so another's task cannot even be confirmed.
 */
async function taskOf(
  connection: Connection,
  at: { taskId: string; revision: Revision },
): Promise<{ runId: string; view: TaskView }> {
  const { taskId, revision } = at;
  const found = runIdOfTask(taskId);
  const owned = found && (await connection.owner?.owns(connection.deps.store, found) ?? true);
  const runId = owned ? found : null;
  const view = runId ? await connection.tasks.observe(runId, revision) : null;
  if (!runId || !view) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `There is no task ${taskId}.`);
  }
  return { runId, view };
}

/** A finished run as a tool result: its tip's step response, or the error that ended it. */
async function finalResult(
  deps: EngineDeps,
  { runId, view }: { runId: string; view: TaskView },
): Promise<CallToolResult> {
  const response = view.status === "completed" ? await tipResponse(deps, runId) : null;
  if (response) {
    return {
      content: [{ type: "text", text: renderStepResponse(response) }],
      structuredContent: response,
    };
  }
  return errorResult(
    view.status === "cancelled"
      ? {
        code: "RUN_ABORTED",
        message: `Run ${view.runId} was aborted; it takes no more steps.`,
        retry: { kind: "not_retryable" },
      }
      : {
        code: "STORAGE_CORRUPTION_DETECTED",
        message: view.statusMessage,
        retry: { kind: "not_retryable" },
      },
  );
}

/** What a finished task's result or error is, for a revision that inlines it in `tasks/get`. */
async function outcomeOf(
  deps: EngineDeps,
  task: { runId: string; view: TaskView },
): Promise<TaskOutcome> {
  const { view } = task;
  if (view.status === "completed") return { result: await finalResult(deps, task) };
  if (view.status !== "failed") return {};
  return {
    error: {
      code: ProtocolErrorCode.InternalError,
      message: view.statusMessage,
      data: { code: "STORAGE_CORRUPTION_DETECTED" },
    },
  };
}

function registerGet(server: Server, connection: Connection): void {
  server.setRequestHandler("tasks/get", { params: taskIdParams }, async ({ taskId }, ctx) => {
    const revision = revisionOf(server, ctx);
    revision.requireTasks(server, ctx);
    const task = await taskOf(connection, { taskId, revision });
    return await revision.getTask(task.view, () => outcomeOf(connection.deps, task));
  });
}

function registerCancel(server: Server, connection: Connection): void {
  server.setRequestHandler("tasks/cancel", { params: taskIdParams }, async ({ taskId }, ctx) => {
    const revision = revisionOf(server, ctx);
    revision.requireTasks(server, ctx);
    const { runId, view } = await taskOf(connection, { taskId, revision });
    if (isTerminal(view.status)) return revision.cancelEnded(view, taskId);
    const done = await abortRun(callerDeps(connection, ctx), { runId, explanation: CANCELLED }, {
      onAppend: (sessionId) => void connection.notifier.sessionChanged(sessionId),
    });
    if (!done.ok) {
      await connection.notifier.health(done.error);
      throw new ProtocolError(ProtocolErrorCode.InternalError, done.error.message, done.error);
    }
    const after = await taskOf(connection, { taskId, revision });
    return revision.cancelled(after.view);
  });
}

/** Records the user's answers (an accepted form) for the run; `true` when any were new. */
async function recordAnswers(
  connection: Connection,
  at: { runId: string; answers: Record<string, unknown>; ctx: ServerContext },
): Promise<boolean> {
  const { ctx, ...input } = at;
  const done = await recordUserInput(callerDeps(connection, ctx), input, {
    onAppend: (sessionId) => void connection.notifier.sessionChanged(sessionId),
  });
  if (!done.ok) await connection.notifier.health(done.error);
  return done.ok && done.value.recorded.length > 0;
}

function registerUpdate(server: Server, connection: Connection): void {
  server.setRequestHandler("tasks/update", { params: taskIdParams }, async ({ taskId }, ctx) => {
    const revision = revisionOf(server, ctx);
    revision.requireTasks(server, ctx);
    const { runId, view } = await taskOf(connection, { taskId, revision });
    const answer = inputResponse(ctx.mcpReq.inputResponses, USER_INPUT_KEY);
    if (view.status === "input_required" && answer.kind === "elicit" && answer.content) {
      if (answer.action === "accept") {
        if (await recordAnswers(connection, { runId, answers: answer.content, ctx })) {
          await connection.tasks.observe(runId, revision);
        }
      }
    }
    return {};
  });
}

function registerList(server: Server, connection: Connection): void {
  // `tasks/list` is of the 2025-11-25 design only (the 2026-07-28 extension has none)
  server.setRequestHandler("tasks/list", { params: listParams }, async ({ cursor }) => {
    const offset = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isSafeInteger(offset) || offset < 0 || String(offset) !== (cursor ?? "0")) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor ${cursor}.`);
    }
    const page = connection.owner
      ? await ownedTasks(connection, { owner: connection.owner, offset })
      : await listTasks(connection.deps, { offset, limit: TASK_PAGE });
    return {
      tasks: page.tasks.map(legacyTask),
      ...(page.more ? { nextCursor: String(offset + TASK_PAGE) } : {}),
    };
  });
}

/** A page of the tasks a requestor started, newest first. */
async function ownedTasks(
  connection: Connection,
  at: { owner: TaskOwner; offset: number },
): Promise<{ tasks: TaskView[]; more: boolean }> {
  const { deps } = connection;
  const page = await at.owner.page(deps.store, { offset: at.offset, limit: TASK_PAGE });
  const tasks = await Promise.all(page.listings.map((listing) => taskView(deps, listing)));
  return { tasks, more: page.more };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/** Asks the user the questions a task waits on, through the `tasks/result` request. */
async function askThroughTask(
  connection: Connection,
  { runId, view }: { runId: string; view: TaskView },
  at: { ctx: ServerContext; revision: Revision },
) {
  const { ctx, revision } = at;
  const answer = await ctx.mcpReq.send({
    method: "elicitation/create",
    params: {
      ...elicitationForm(view.questions),
      _meta: { [RELATED_TASK_META_KEY]: { taskId: view.taskId } },
    },
  } as never) as { action?: string; content?: Record<string, unknown> };
  if (answer.action !== "accept" || !answer.content) return;
  if (await recordAnswers(connection, { runId, answers: answer.content, ctx })) {
    await connection.tasks.observe(runId, revision);
  }
}

/** `tasks/result`: waits until the run ends, asking the user once per step it waits on. */
function registerResult(server: Server, connection: Connection): void {
  server.setRequestHandler("tasks/result", { params: taskIdParams }, async ({ taskId }, ctx) => {
    const revision = revisionOf(server, ctx);
    let asked: string | null = null;
    for (;;) {
      const task = await taskOf(connection, { taskId, revision });
      const { view } = task;
      if (isTerminal(view.status)) {
        const result = await finalResult(connection.deps, task);
        return { ...result, _meta: { ...taskMeta(view, revision.relatedTask(view)) } };
      }
      const askable = view.status === "input_required" && view.questions.some((q) => !q.secret);
      if (
        askable && asked !== view.tipNodeId && canElicit(revision.clientCapabilities(server, ctx))
      ) {
        asked = view.tipNodeId;
        await askThroughTask(connection, task, { ctx, revision });
        continue;
      }
      await pause(TASK_POLL_INTERVAL_MS, ctx.mcpReq.signal);
    }
  });
}

/** Serves the `tasks/*` methods of both task designs. */
export function registerTasks(server: Server, connection: Connection): void {
  registerGet(server, connection);
  registerCancel(server, connection);
  registerUpdate(server, connection);
  registerList(server, connection);
  registerResult(server, connection);
}
