/**
 * The MCP server of one connection, composed from its parts: a profile's tools
 * (`tool_calls.ts`), each workflow as a prompt (`prompts.ts`), each session as a resource
 * (`resources.ts`), runs as tasks (`tasks.ts`), notifications (`notifications.ts`), and the
 * workspace from MCP roots (`workspace.ts`).
 * @module
 */
import {
  type JSONRPCRequest,
  type Result,
  Server,
  type ServerCapabilities,
  type ServerContext,
  type Transport,
} from "npm:@modelcontextprotocol/server@2.4.0";
import process from "node:process";
import type { EngineDeps } from "../engine/mod.ts";
import type { ToolProfile } from "./define_tool.ts";
import type { Connection } from "./connection.ts";
import { DEFAULT_PROFILE } from "./profiles/default.ts";
import { createNotifier } from "./notifications.ts";
import { registerPrompts } from "./prompts.ts";
import { RawArguments } from "./raw_arguments.ts";
import { registerResources } from "./resources.ts";
import { createTaskSurface } from "./task_surface.ts";
import { registerTasks } from "./tasks.ts";
import { TASKS_EXTENSION } from "./task_wire.ts";
import { registerTools } from "./tool_calls.ts";
import { connectionWorkspace } from "./workspace.ts";

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
  /** The tools to serve and their instructions; default {@linkcode DEFAULT_PROFILE}. */
  profile?: ToolProfile;
}

/** The 2025-11-25 `tasks` capability: runs listed, cancelled, and started as tasks. */
const LEGACY_TASKS = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** A tool call's answer that is a task (`CreateTaskResult`), not a tool result. */
function isTaskAnswer(result: Result): boolean {
  return result.resultType === "task" || (typeof result.task === "object" && result.task !== null);
}

/** Carries a task answer past the SDK's tool-result check, which knows only tool results. */
class TaskAnswer {
  constructor(readonly result: Result) {}
}

/**
 * The SDK server, keeping each tool call's arguments as they arrived (see `raw_arguments.ts`),
 * advertising tasks in the shape of the revision a connection speaks (the 2025-11-25
 * `tasks` capability, or the 2026-07-28 extension), and letting a tool call answer as a task.
 */
class WaymarkServer extends Server {
  readonly rawArguments = new RawArguments();

  override async connect(transport: Transport): Promise<void> {
    this.rawArguments.tap(transport);
    await super.connect(transport);
  }

  override getCapabilities(): ServerCapabilities {
    const base = super.getCapabilities();
    const version = this.getNegotiatedProtocolVersion() ?? "";
    if (version >= "2026") {
      return { ...base, extensions: { ...base.extensions, [TASKS_EXTENSION]: {} } };
    }
    return version === "2025-11-25" ? { ...base, tasks: LEGACY_TASKS } : base;
  }

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== "tools/call") return super._wrapHandler(method, handler);
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (isTaskAnswer(result)) throw new TaskAnswer(result);
      return result;
    });
    return (request, ctx) =>
      checked(request, ctx).catch((error) => {
        if (error instanceof TaskAnswer) return error.result;
        throw error;
      });
  }
}

/** Creates an MCP server exposing a profile's tools, and waymark's prompts and resources. */
export function createMcpServer(deps: EngineDeps, options: McpServerOptions): Server {
  const profile = options.profile ?? DEFAULT_PROFILE;
  const server = new WaymarkServer(
    { name: "waymark", version: options.version },
    {
      capabilities: {
        tools: {},
        prompts: {},
        resources: { subscribe: true },
        logging: {},
        completions: {},
      },
      instructions: profile.instructions,
    },
  );
  const connection: Connection = {
    deps,
    notifier: createNotifier(server, { log: options.log, store: deps.store }),
    tasks: createTaskSurface(server, deps),
    workspace: connectionWorkspace(server, { cwd: options.cwd ?? process.cwd(), log: options.log }),
    log: options.log,
    rawArguments: (id) => server.rawArguments.take(id),
  };
  const tools = profile.tools.filter((t) =>
    !t.flag || (t.flag === "startSession" && options.enableStartSession)
  );
  registerTools(server, connection, tools, profile.published);
  registerPrompts(server, connection);
  registerResources(server, connection);
  registerTasks(server, connection);
  return server;
}
