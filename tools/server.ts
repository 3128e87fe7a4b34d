/**
 * The MCP server of one connection, composed from its parts: a profile's tools
 * (`tool_calls.ts`), each workflow as a prompt (`prompts.ts`), each session as a resource
 * (`resources.ts`), notifications (`notifications.ts`), and the workspace from MCP roots
 * (`workspace.ts`).
 * @module
 */
import { Server, type Transport } from "npm:@modelcontextprotocol/server@2.4.0";
import process from "node:process";
import type { EngineDeps } from "../engine/mod.ts";
import type { ToolProfile } from "./define_tool.ts";
import type { Connection } from "./connection.ts";
import { DEFAULT_PROFILE } from "./profiles/default.ts";
import { createNotifier } from "./notifications.ts";
import { registerPrompts } from "./prompts.ts";
import { RawArguments } from "./raw_arguments.ts";
import { registerResources } from "./resources.ts";
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

/** The SDK server, keeping each tool call's arguments as they arrived (see `raw_arguments.ts`). */
class WaymarkServer extends Server {
  readonly rawArguments = new RawArguments();

  override async connect(transport: Transport): Promise<void> {
    this.rawArguments.tap(transport);
    await super.connect(transport);
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
    notifier: createNotifier(server, { log: options.log }),
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
  return server;
}
