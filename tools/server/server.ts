/**
 * The MCP server of one connection, composed from its parts: a profile's tools
 * (`tool_calls.ts`), each workflow as a prompt (`prompts.ts`), each session as a resource
 * (`resources.ts`), runs as tasks (`tasks.ts`), notifications (`notifications.ts`), and the
 * workspace from MCP roots (`workspace.ts`).
 * @module
 */
import type { Server } from "npm:@modelcontextprotocol/server@2.4.0";
import process from "node:process";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { ToolProfile } from "../calls/define_tool.ts";
import type { Connection } from "./connection.ts";
import { DEFAULT_PROFILE } from "../profiles/default.ts";
import { isListed } from "../profiles/registry.ts";
import { createNotifier } from "../surfaces/notifications.ts";
import { registerPrompts } from "../surfaces/prompts.ts";
import { registerResources } from "../surfaces/resources.ts";
import { createTaskSurface, type TaskViewCache } from "../tasks/surface.ts";
import { registerTasks } from "../tasks/handlers.ts";
import { registerTools } from "../calls/tool_calls.ts";
import { WaymarkServer } from "./waymark_server.ts";
import type { TaskOwner } from "../tasks/owner.ts";
import type { RunAccess } from "../../engine/model/vocabulary.ts";
import { connectionWorkspace } from "../context/workspace.ts";

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
  /**
   * Compose onto this server instead of a new one: an early server (`early_server.ts`) that
   * answered the handshake with this profile's instructions while the engine loaded.
   */
  onto?: WaymarkServer;
  /** Scope `tasks/*` to the runs started through this requestor (`task_owner.ts`; HTTP). */
  taskOwner?: TaskOwner;
  /** Who besides its starter may continue a run an authenticated call starts (`team_policy.ts`). */
  runAccess?: RunAccess;
  /** Run verification commands only in a folder the client named as a root (HTTP). */
  commandsNeedRoots?: boolean;
  /**
   * The server answers one request and is gone (stateless HTTP): task views come from this
   * process-wide cache, and no task status is noted for later notifications.
   */
  sharedTaskViews?: TaskViewCache;
  /** Told each tool call: its tool, its error code (`null`: answered) and its time (metrics). */
  onToolCall?: (tool: string, code: string | null, ms: number) => void;
}

/** Creates an MCP server exposing a profile's tools, and waymark's prompts and resources. */
export function createMcpServer(deps: EngineDeps, options: McpServerOptions): Server {
  const profile = options.profile ?? DEFAULT_PROFILE;
  const server = options.onto ??
    new WaymarkServer({
      name: profile.serverName,
      version: options.version,
      instructions: profile.instructions,
    });
  const connection: Connection = {
    deps,
    notifier: createNotifier(server, { log: options.log, store: deps.store }),
    tasks: createTaskSurface(server, deps, options.sharedTaskViews),
    owner: options.taskOwner,
    runAccess: options.runAccess,
    workspace: connectionWorkspace(server, {
      cwd: options.cwd ?? process.cwd(),
      log: options.log,
      commandsNeedRoots: options.commandsNeedRoots,
    }),
    log: options.log,
    rawArguments: (id) => server.rawArguments.take(id),
    onToolCall: options.onToolCall,
    replayScope: {
      connection: crypto.randomUUID(),
      stateless: options.sharedTaskViews !== undefined,
    },
  };
  const tools = profile.tools.filter((t) => isListed(t, options));
  registerTools(server, connection, tools, profile.published);
  registerPrompts(server, connection);
  registerResources(server, connection);
  registerTasks(server, connection);
  return server;
}
