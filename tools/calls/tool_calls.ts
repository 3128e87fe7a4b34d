/**
 * `tools/list` and `tools/call` for a profile's tools. waymark validates arguments itself (on
 * the low-level SDK server), so every failure leaves as the structured error envelope.
 * @module
 */
import type {
  CallToolResult,
  InputRequiredResult,
  Server,
  ServerContext,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { parseRunLabel } from "../../engine/model/ids.ts";
import { verifyToken } from "../../engine/access/tokens.ts";
import type { ContinueInput } from "../../engine/use_cases/continue_workflow.ts";
import type { AnsweredNode } from "../../engine/run/record_attempt.ts";
import type { PublishedSchemas, ToolCall, ToolContext, ToolDefinition } from "./define_tool.ts";
import type { WorkspaceObservation } from "../../engine/model/workspace.ts";
import { callerDeps, type Connection } from "../server/connection.ts";
import { replayKeyOf } from "./replay_key.ts";
import { askBeforeAck } from "../context/elicit.ts";
import { errorResult } from "./error_envelope.ts";
import { unexpectedError } from "../../engine/run/error_guard.ts";
import { progressSender } from "../surfaces/notifications.ts";
import { executionOf, listedTool, toolSchemas } from "./publish.ts";
import { callMeta } from "../tasks/wire.ts";
import { type Revision, revisionOf } from "../revisions/mod.ts";

/** Serves `tools/list` (with `published` schemas where given) and `tools/call` for `tools`. */
export function registerTools(
  server: Server,
  connection: Connection,
  tools: readonly ToolDefinition[],
  published: Readonly<Record<string, PublishedSchemas>> = {},
): void {
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.setRequestHandler("tools/list", (_request, ctx) => {
    const revision = revisionOf(server, ctx);
    return {
      tools: tools.map((tool) =>
        revision.listedTool(
          listedTool(tool, published[tool.name] ?? toolSchemas(tool)),
          executionOf(tool),
        )
      ),
    };
  });
  server.setRequestHandler("tools/call", (request, ctx) => {
    const { name, arguments: args } = request.params;
    const raw = connection.rawArguments?.(ctx.mcpReq.id);
    const tool = byName.get(name);
    if (!tool) {
      return errorResult({
        code: "INVALID_ARGUMENTS",
        message: `There is no tool named \`${name}\`. Tools: ${
          tools.map((t) => t.name).join(", ")
        }.`,
        retry: { kind: "not_retryable" },
        details: { tool: name },
      });
    }
    const call = tool.parse((raw !== null && typeof raw === "object" ? raw : args) ?? {});
    if (!call.ok) return errorResult(call.error);
    // A task or input-required answer passes the SDK's tool-result check (see `server.ts`).
    return dispatch(connection, {
      server,
      tool,
      call: call.value,
      ctx,
      revision: revisionOf(server, ctx),
      params: request.params,
    }) as Promise<CallToolResult>;
  });
}

/** The run a call's `stateToken` names (hex), or `null`. */
function runOfInput(connection: Connection, input: unknown): string | null {
  const token = (input as { stateToken?: unknown } | null)?.stateToken;
  if (typeof token !== "string") return null;
  const claims = verifyToken(connection.deps.keyring, token, "state");
  return claims.ok ? claims.value.runId : null;
}

/**
 * The run an answer is about (hex), from its `session.runId` or else its `stateToken` (an
 * acknowledgement's answer leaves the session out), or `null`.
 */
function runOfAnswer(connection: Connection, answer: CallToolResult): string | null {
  if (answer.isError) return null;
  const session = (answer.structuredContent as { session?: { runId?: unknown } } | undefined)
    ?.session;
  return typeof session?.runId === "string"
    ? parseRunLabel(session.runId)
    : runOfInput(connection, answer.structuredContent);
}

/**
 * A validated call: asks the user first when its acknowledgement needs them, runs it, and
 * answers with its run's task in `_meta` (or, for a task-supporting tool asked for a task, as
 * a `CreateTaskResult`).
 */
async function dispatch(
  connection: Connection,
  at: {
    server: Server;
    tool: ToolDefinition;
    call: ToolCall;
    ctx: ServerContext;
    revision: Revision;
    params: unknown;
  },
): Promise<CallToolResult | InputRequiredResult | Record<string, unknown>> {
  const { server, tool, call, ctx, revision } = at;
  if (tool.elicits) {
    const input = call.input as ContinueInput;
    const asked = await askBeforeAck(connection, { server, ctx, revision, input });
    if (asked) return asked;
  }
  await revision.beforeTaskChange(async () => {
    const before = runOfInput(connection, call.input);
    // The task is extra: a store that fails to tell it never fails the call (the call says why).
    if (before) await connection.tasks.seed(before).catch(() => {});
  });
  const told: { answered?: AnsweredNode } = {};
  const t0 = performance.now();
  const answer = await runCall(connection, { name: tool.name, call, ctx, told });
  const code = answer.isError
    ? String((answer.structuredContent as { error?: { code?: unknown } } | undefined)?.error?.code)
    : null;
  connection.onToolCall?.(tool.name, code, performance.now() - t0);
  const runId = runOfAnswer(connection, answer);
  // a call that made a run's first node started it: its task is this requestor's
  if (runId && told.answered?.node.parentId === null) connection.owner?.adopt(runId);
  const view = runId
    ? await connection.tasks.observe(runId, revision, told.answered).catch(() => null)
    : null;
  if (!view) return answer;
  if (tool.taskSupport && revision.wantsTask(server, { ctx, params: at.params })) {
    return revision.createTaskResult(view, answer);
  }
  return { ...answer, _meta: { ...answer._meta, ...callMeta(view, revision.relatedTask(view)) } };
}

/** What a replay whose payload differs from the recorded one tells the agent, beside the answer. */
export const REPLAY_NOTICE =
  "Not recorded: these tokens were already used, so the answer above is the one recorded the first time, and the output, context and preferences sent with this call (which differ from that first call's) were not kept. To keep them, call checkpoint_workflow with the stateToken and checkpointToken above, or call continue_workflow with only the stateToken you used (rehydrate) and acknowledge again with the fresh ackToken it returns (a fork).";

/**
 * A replay's answer as recorded (structured content and first text unchanged), with
 * `_meta["waymark/replay"]` and a second text item saying the new payload was not recorded.
 */
function withReplayNotice(answer: CallToolResult): CallToolResult {
  return {
    ...answer,
    content: [...answer.content, { type: "text", text: REPLAY_NOTICE }],
    _meta: { ...answer._meta, "waymark/replay": { payloadDiffers: true } },
  };
}

/**
 * Runs a validated call, then sends what it changed; an exception becomes INTERNAL_ERROR. The
 * node the call created is left in `told`, for the task view.
 */
async function runCall(
  connection: Connection,
  request: { name: string; call: ToolCall; ctx: ServerContext; told: { answered?: AnsweredNode } },
): Promise<CallToolResult> {
  const { name, call, ctx, told } = request;
  const { notifier } = connection;
  const deps = callerDeps(connection, ctx);
  try {
    const appended = new Set<string>();
    const progress: Promise<void>[] = [];
    const sendProgress = progressSender(ctx);
    const replayed = { payloadDiffers: false };
    const context: ToolContext = {
      onAppend: (sessionId) => appended.add(sessionId),
      onReplay: (replay) => Object.assign(replayed, replay),
      onAnswered: (answered) => told.answered = answered,
      ...(name === "start_workflow" && connection.replayScope
        ? { replayKey: replayKeyOf(ctx, connection.replayScope) }
        : {}),
      ...hostCall(ctx),
      ...(sendProgress
        ? {
          onProgress: (p) => progress.push(sendProgress.step(p)),
          onVerificationWait: (w) => progress.push(sendProgress.waiting(w)),
        }
        : {}),
      ...(call.usesWorkspace ? workspaceOptions(await connection.workspace(ctx)) : {}),
    };
    const result = await call.run(deps, context);
    if (!result.ok) {
      await notifier.health(result.error);
      return errorResult(result.error);
    }
    await Promise.all(progress);
    for (const sessionId of appended) await notifier.sessionChanged(sessionId);
    const answer: CallToolResult = {
      content: [{ type: "text", text: result.value.text() }],
      structuredContent: result.value.value,
    };
    return replayed.payloadDiffers ? withReplayNotice(answer) : answer;
  } catch (error) {
    connection.log?.(
      `tool ${name} failed: ${error instanceof Error ? error.stack : String(error)}`,
    );
    return errorResult(unexpectedError(error));
  }
}

/** The host's id of the model's tool call behind this request, when it names one (Claude Code). */
function hostCall(ctx: ServerContext): Pick<ToolContext, "hostCallId"> {
  const id = ctx.mcpReq._meta?.["claudecode/toolUseId"];
  return typeof id === "string" && id.length <= 200 ? { hostCallId: id } : {};
}

/** The observation a call records, and where its verification commands may run when that differs. */
function workspaceOptions(
  observed: WorkspaceObservation & { commandFolder?: string | null },
): Pick<ToolContext, "workspace" | "commandFolder"> {
  const { commandFolder, ...workspace } = observed;
  return commandFolder === undefined ? { workspace } : { workspace, commandFolder };
}
