/**
 * The MCP server: tools, prompts and resources on the low-level SDK server, so waymark owns
 * argument validation and every tool failure leaves as the structured error envelope. Besides
 * the tools: each workflow is a prompt that starts it; each session is a resource
 * (`waymark://sessions/{id}`) with `notifications/resources/updated` after each append made
 * through this connection; progress notifications on advance when the request carries a
 * progress token; logging notifications for health problems; the workspace from MCP roots.
 * @module
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { z } from "npm:zod@4.6.7";
import process from "node:process";
import {
  allSteps,
  type EngineDeps,
  remainingSteps,
  renderStepResponse,
  startWorkflow,
  type StepResponse,
  type WaymarkError,
  type WorkspaceObservation,
} from "../engine/mod.ts";
import { type ToolContext, type ToolDefinition, TOOLS } from "./definitions.ts";
import { errorEnvelopeSchema, errorResult, invalidArguments } from "./errors.ts";
import { observeWorkspace, type Root, RootsCache } from "./workspace.ts";

/** Options for {@linkcode createMcpServer}. */
export interface McpServerOptions {
  /** Server version reported to clients. */
  version: string;
  /** Where to send log lines (never stdout). */
  log?: (line: string) => void;
  /** List `start_session` (checkpoint-only sessions). Off by default. */
  enableStartSession?: boolean;
  /** The fallback workspace when the client has no roots; default the working directory. */
  cwd?: string;
}

const INSTRUCTIONS = [
  "waymark runs structured workflows one step at a time.",
  "list_workflows, then start_workflow; do the pending step; then continue_workflow with the stateToken and ackToken exactly as returned, plus output.notesMarkdown (and output.artifacts when the step names an output contract).",
  "A blocked answer lists what is missing; fix it and retry with the new ackToken.",
  "Tokens are opaque: never edit them. If you lose your place, call continue_workflow with only the stateToken.",
  "In a new chat, resume_session finds earlier work by words from its notes.",
].join(" ");

/** The URI of a session resource. */
export const SESSION_URI_PREFIX = "waymark://sessions/";
const SESSION_PAGE = 50;

type JsonSchema = Record<string, unknown>;
type ObjectSchema = { type: "object"; [key: string]: unknown };

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** The published JSON Schemas of a tool: input, and output as success-or-error-envelope. */
export function toolSchemas(
  tool: ToolDefinition,
): { inputSchema: ObjectSchema; outputSchema: ObjectSchema } {
  return {
    inputSchema: { ...jsonSchema(tool.input, "input"), type: "object" },
    outputSchema: {
      type: "object",
      anyOf: [jsonSchema(tool.output, "output"), jsonSchema(errorEnvelopeSchema, "output")],
    },
  };
}

/** Tools whose use-case records or ranks by the workspace. */
const WORKSPACE_TOOLS = new Set([
  "start_workflow",
  "continue_workflow",
  "checkpoint_workflow",
  "resume_session",
  "start_session",
]);

const HEALTH_CODES: Partial<Record<WaymarkError["code"], "error" | "warning">> = {
  STORAGE_CORRUPTION_DETECTED: "error",
  STORAGE_BUSY: "warning",
};

/** Creates an MCP server exposing waymark's tools, prompts and resources. */
export function createMcpServer(deps: EngineDeps, options: McpServerOptions): Server {
  const server = new Server(
    { name: "waymark", version: options.version },
    {
      capabilities: {
        tools: {},
        prompts: {},
        resources: { subscribe: true },
        logging: {},
        completions: {},
      },
      instructions: INSTRUCTIONS,
    },
  );
  const tools = TOOLS.filter((t) =>
    !t.flag || (t.flag === "startSession" && options.enableStartSession)
  );
  const listed = tools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    ...toolSchemas(tool),
    annotations: {
      readOnlyHint: tool.readOnly,
      idempotentHint: tool.name !== "start_workflow" && tool.name !== "start_session",
    },
  }));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const roots = new RootsCache(options.cwd ?? process.cwd(), options.log);
  const subscriptions = new Set<string>();

  const hasRoots = () => server.getClientCapabilities()?.roots !== undefined;
  const fetchRoots = () => roots.refresh(() => server.listRoots(undefined, { timeout: 5000 }));
  server.oninitialized = () => {
    if (hasRoots()) void fetchRoots();
  };
  server.setNotificationHandler("notifications/roots/list_changed", () => {
    if (hasRoots()) void fetchRoots();
  });

  /** The workspace for a request; `send` asks the client through that request if needed. */
  async function workspace(
    send?: (request: { method: "roots/list" }) => Promise<{ roots: Root[] }>,
  ): Promise<WorkspaceObservation> {
    const related = hasRoots() && send ? () => send({ method: "roots/list" }) : undefined;
    return observeWorkspace(await roots.folder(related));
  }

  async function health(error: WaymarkError): Promise<void> {
    const level = HEALTH_CODES[error.code];
    if (!level) return;
    options.log?.(`health ${level}: ${error.code}: ${error.message}`);
    await server.sendLoggingMessage({
      level,
      logger: "waymark.health",
      data: { code: error.code, message: error.message, details: error.details },
    }).catch(() => {});
  }

  async function sessionChanged(sessionLabel: string): Promise<void> {
    const uri = `${SESSION_URI_PREFIX}${sessionLabel}`;
    if (subscriptions.has(uri)) await server.sendResourceUpdated({ uri }).catch(() => {});
  }

  async function progress(
    response: StepResponse,
    to: {
      send: (n: { method: string; params: Record<string, unknown> }) => Promise<void>;
      progressToken: string | number;
    },
  ): Promise<void> {
    const { send, progressToken } = to;
    const runId = response.session.runId.replace(/^run_/, "");
    const node = await deps.store.getNode(runId, response.session.nodeId);
    const compiled = await deps.store.getSnapshot(response.workflow.hash);
    if (!node || !compiled) return;
    // step nodes only: the root is the first step node, each acknowledged step adds one
    const done = Math.max(0, (node.stepCount ?? 1) - 1);
    const total = done + remainingSteps(compiled, node.state);
    const title = allSteps(compiled).find((s) => s.id === node.notesStepId)?.title;
    await send({
      method: "notifications/progress",
      params: {
        progressToken,
        progress: done,
        total,
        message: `Completed step ${done} of ${total}${title ? `: ${title}` : ""}`,
      },
    }).catch(() => {});
  }

  server.setRequestHandler("tools/list", () => ({ tools: listed as never }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: args } = request.params;
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
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) return errorResult(invalidArguments(name, parsed.error.issues));
    try {
      const advancing = name === "continue_workflow" &&
        (parsed.data as { ackToken?: string }).ackToken !== undefined;
      const needsWorkspace = WORKSPACE_TOOLS.has(name) &&
        (name !== "continue_workflow" || advancing);
      const appended = new Set<string>();
      const context: ToolContext = {
        onAppend: (sessionId) => appended.add(sessionId),
        ...(needsWorkspace
          ? { workspace: await workspace((r) => ctx.mcpReq.send(r, { timeout: 5000 })) }
          : {}),
      };
      const result = await tool.run(deps, parsed.data, context);
      if (!result.ok) {
        await health(result.error);
        return errorResult(result.error);
      }
      const token = ctx.mcpReq._meta?.progressToken;
      if (advancing && token !== undefined) {
        await progress(result.value as StepResponse, {
          send: ctx.mcpReq.notify,
          progressToken: token,
        });
      }
      for (const sessionId of appended) await sessionChanged(sessionId);
      return {
        content: [{ type: "text" as const, text: tool.render(result.value) }],
        structuredContent: result.value as Record<string, unknown>,
      };
    } catch (error) {
      options.log?.(`tool ${name} failed: ${error instanceof Error ? error.stack : String(error)}`);
      return errorResult({
        code: "INTERNAL_ERROR",
        message:
          "waymark failed unexpectedly; nothing was recorded by this call. Retrying is safe.",
        retry: { kind: "retryable_immediate" },
      });
    }
  });

  // ---- prompts: each workflow starts itself --------------------------------------------------
  server.setRequestHandler("prompts/list", async () => {
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
  });
  server.setRequestHandler("prompts/get", async (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    let context: Record<string, unknown> | undefined;
    if (args.context) {
      try {
        const value = JSON.parse(args.context);
        if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error();
        context = value;
      } catch {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          'The `context` argument must be a JSON object, e.g. {"ticket": "ABC-1"}.',
        );
      }
    }
    const result = await startWorkflow(
      deps,
      { workflowId: name, goal: args.goal || undefined, context },
      {
        workspace: await workspace((r) => ctx.mcpReq.send(r, { timeout: 5000 })),
        onAppend: (sessionId) => void sessionChanged(sessionId),
      },
    );
    if (!result.ok) {
      await health(result.error);
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, result.error.message, {
        error: result.error,
      });
    }
    const r = result.value;
    return {
      description: `${r.workflow.name}: started (${r.session.sessionId}, ${r.session.runId})`,
      messages: [{
        role: "user" as const,
        content: {
          type: "text" as const,
          text:
            `Run the waymark workflow ${r.workflow.id} one step at a time, acknowledging each step with continue_workflow.\n\n${
              renderStepResponse(r)
            }`,
        },
      }],
      _meta: {
        "waymark/run": {
          sessionId: r.session.sessionId,
          runId: r.session.runId,
          stateToken: r.stateToken,
          ackToken: r.ackToken,
          checkpointToken: r.checkpointToken,
          pendingStepId: r.pending?.stepId ?? null,
        },
      },
    };
  });

  // ---- resources: each session ---------------------------------------------------------------
  server.setRequestHandler("resources/list", async (request) => {
    const offset = Number(request.params?.cursor ?? 0) || 0;
    const sessions = await deps.store.listSessions({ limit: SESSION_PAGE + 1, offset });
    return {
      resources: sessions.slice(0, SESSION_PAGE).map((s) => ({
        uri: `${SESSION_URI_PREFIX}ses_${s.sessionId}`,
        name: `ses_${s.sessionId}`,
        title: s.title,
        description: `${
          s.sessionKind === "notes" ? "Notes session" : "Session"
        } updated ${s.updatedAt}`,
        mimeType: "application/json",
      })),
      ...(sessions.length > SESSION_PAGE ? { nextCursor: String(offset + SESSION_PAGE) } : {}),
    };
  });
  server.setRequestHandler("resources/templates/list", () => ({
    resourceTemplates: [{
      uriTemplate: `${SESSION_URI_PREFIX}{sessionId}`,
      name: "session",
      title: "A waymark session",
      description: "A session's runs, their tips and latest notes, as JSON.",
      mimeType: "application/json",
    }],
  }));
  server.setRequestHandler("resources/read", async (request) => {
    const { uri } = request.params;
    const id = uri.startsWith(SESSION_URI_PREFIX)
      ? uri.slice(SESSION_URI_PREFIX.length).replace(/^ses_/, "")
      : "";
    const session = /^[0-9a-f]{16}$/.test(id) ? await deps.store.getSession(id) : null;
    if (!session) throw new ResourceNotFoundError(uri, `No waymark session at ${uri}`);
    const view = {
      ...session,
      sessionId: `ses_${session.sessionId}`,
      runs: session.runs.map((r) => ({ ...r, runId: `run_${r.runId}` })),
    };
    return {
      contents: [{ uri, mimeType: "application/json", text: JSON.stringify(view, null, 2) }],
    };
  });
  // ---- completions: session ids for the resource template ------------------------------------
  server.setRequestHandler("completion/complete", async (request) => {
    const { ref, argument } = request.params;
    if (ref.type !== "ref/resource" || argument.name !== "sessionId") {
      return { completion: { values: [], hasMore: false } };
    }
    const prefix = argument.value.replace(/^ses_/, "");
    const recent = await deps.store.listSessions({ limit: 100, offset: 0 });
    const values = recent.map((s) => `ses_${s.sessionId}`)
      .filter((id) => id.slice(4).startsWith(prefix)).slice(0, 100);
    return { completion: { values, hasMore: false } };
  });
  server.setRequestHandler("resources/subscribe", (request) => {
    subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler("resources/unsubscribe", (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });
  return server;
}
