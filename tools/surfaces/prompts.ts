/**
 * Each workflow as a prompt: getting it starts a run and returns its first step, with the
 * run's tokens in `_meta["waymark/run"]` and its task (id, status, progress) beside them. The
 * messages stay a plain prompt, so every host can show them: a task-aware host reads the task
 * from `_meta`.
 * @module
 */
import {
  type GetPromptResult,
  type ListPromptsResult,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { parseRunLabel } from "../../engine/model/ids.ts";
import type { EngineDeps } from "../../engine/model/ports.ts";
import { renderStepResponse } from "../../engine/answers/text.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { screenArguments } from "../calls/argument_guard.ts";
import { callerDeps, type Connection } from "../server/connection.ts";
import { callMeta } from "../tasks/wire.ts";
import { type Revision, revisionOf } from "../revisions/mod.ts";

/** Serves every workflow as a prompt that starts it. */
export function registerPrompts(server: Server, connection: Connection): void {
  server.setRequestHandler("prompts/list", () => listPrompts(connection.deps));
  server.setRequestHandler("prompts/get", (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    return getPrompt(connection, {
      workflowId: name,
      args,
      ctx,
      revision: revisionOf(server, ctx),
    });
  });
}

async function listPrompts(deps: EngineDeps): Promise<ListPromptsResult> {
  const set = await deps.workflows.load();
  return {
    prompts: set.workflows.map((w) => ({
      name: w.id,
      title: w.compiled.name,
      description: `Start the ${w.compiled.name} workflow and get its first step. ${
        w.compiled.description.split("\n")[0]
      }`.slice(0, 500),
      arguments: [
        {
          name: "goal",
          description: "What this run is for (the session title).",
          required: false,
        },
        {
          name: "context",
          description: "A JSON object of facts the workflow's conditions and placeholders read.",
          required: false,
        },
      ],
    })),
  };
}

/** The `context` prompt argument as an object; a protocol error when it is not one. */
function contextArgument(text: string | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return value;
  } catch {
    // answered below
  }
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    'The `context` argument must be a JSON object, e.g. {"ticket": "ABC-1"}.',
  );
}

async function getPrompt(
  connection: Connection,
  request: {
    workflowId: string;
    args: Record<string, string>;
    ctx: ServerContext;
    revision: Revision;
  },
): Promise<GetPromptResult> {
  const { workflowId, args, ctx, revision } = request;
  const { notifier } = connection;
  const deps = callerDeps(connection, ctx);

  const context = contextArgument(args.context);
  const refused = screenArguments(workflowId, { goal: args.goal, context });
  if (refused) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, refused.message, { error: refused });
  }
  const result = await startWorkflow(
    deps,
    { workflowId, goal: args.goal || undefined, context },
    {
      workspace: await connection.workspace(ctx),
      onAppend: (sessionId) => void notifier.sessionChanged(sessionId),
    },
  );
  if (!result.ok) {
    await notifier.health(result.error);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, result.error.message, {
      error: result.error,
    });
  }
  const r = result.value;
  // a start always carries the run's facts
  const [workflow, session] = [r.workflow!, r.session!];
  const runId = parseRunLabel(session.runId);
  if (runId) connection.owner?.adopt(runId);
  const view = runId ? await connection.tasks.observe(runId, revision).catch(() => null) : null;
  return {
    description: `${workflow.name}: started (${session.sessionId}, ${session.runId})`,
    messages: [{
      role: "user" as const,
      content: {
        type: "text" as const,
        text:
          `Run the waymark workflow ${workflow.id} one step at a time, acknowledging each step with continue_workflow.\n\n${
            renderStepResponse(r)
          }`,
      },
    }],
    _meta: {
      "waymark/run": {
        sessionId: session.sessionId,
        runId: session.runId,
        stateToken: r.stateToken,
        ackToken: r.ackToken,
        checkpointToken: r.checkpointToken,
        pendingStepId: r.pending?.stepId ?? null,
      },
      ...(view ? callMeta(view, revision.relatedTask(view)) : {}),
    },
  };
}
