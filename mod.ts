/**
 * waymark as a library: open a store, run workflows through the engine's use-cases, or serve
 * them over MCP, from Deno or Node. The root holds what a program needs; the rest lives at
 * subpaths: `waymark/engine` (the workflow format, compiler, interpreter, tokens, renderers),
 * `waymark/store` (store adapters, keyring, workflow files) and `waymark/tools` (the MCP
 * adapter's parts and tool profiles).
 *
 * ```ts
 * import { openWaymark } from "./mod.ts";
 * const waymark = await openWaymark({ dbUrl: ":memory:" });
 * const started = await waymark.start({ workflowId: "waymark.code_review" });
 * await waymark.close();
 * ```
 * @module
 */
import type { JobSource } from "./engine/deepwork/job_catalog.ts";
import { VERSION } from "./version.ts";
import { createMcpServer, type ToolProfile } from "./tools/mod.ts";
import { type RehearsalOptions, rehearse } from "./tools/server/rehearsal.ts";
import type { ProfileName } from "./tools/profiles/registry.ts";
import { PROFILE_TOOLS } from "./tools/profiles/tools.ts";
import type { NamedSchemaSource } from "./engine/review/ports.ts";
import { claudeReviewer, commandReviewer } from "./tools/profiles/deepwork/reviewer.ts";
import type { WaymarkServer } from "./tools/server/waymark_server.ts";
import type { TaskOwner } from "./tools/tasks/owner.ts";
import { createTaskViewCache, type TaskViewCache } from "./tools/tasks/surface.ts";
import type { RunAccess } from "./engine/model/vocabulary.ts";
import type { EngineDeps } from "./engine/model/ports.ts";
import { openCore, type WaymarkCore, type WaymarkOptions } from "./open.ts";

export {
  fileOfOpenFailure,
  openCore,
  resolvePaths,
  type WaymarkCore,
  type WaymarkOptions,
  type WaymarkPaths,
} from "./open.ts";
export { jobsAsWorkflows, type JobSource } from "./engine/deepwork/job_catalog.ts";
export type { EngineDeps, Store } from "./engine/model/ports.ts";
export type { Preferences, PreferencesPatch } from "./engine/model/preferences.ts";
export type {
  InspectResponse,
  ListResponse,
  ResumeResponse,
  StepResponse,
} from "./engine/answers/responses.ts";
export type { ErrorCode, Result, Retry, WaymarkError } from "./engine/model/result.ts";
export {
  type CheckpointInput,
  checkpointWorkflow,
} from "./engine/use_cases/checkpoint_workflow.ts";
export { type ContinueInput, continueWorkflow } from "./engine/use_cases/continue_workflow.ts";
export { inspectWorkflow } from "./engine/use_cases/inspect_workflow.ts";
export { listWorkflows } from "./engine/use_cases/list_workflows.ts";
export type { StepOutput } from "./engine/run/node_events.ts";
export type { CallOptions } from "./engine/run/record_attempt.ts";
export { type ResumeInput, resumeSession } from "./engine/use_cases/resume_session.ts";
export { startSession, type StartSessionInput } from "./engine/use_cases/start_session.ts";
export { type StartInput, startWorkflow } from "./engine/use_cases/start_workflow.ts";
export {
  createMcpServer,
  deepworkProfile,
  type DeepworkProfileOptions,
  type McpServerOptions,
  serveMcpStdio,
} from "./tools/mod.ts";
export { type OpenedSqlStore, openStore, type SqliteStore } from "./store/mod.ts";
export {
  type BundleError,
  type BundleResult,
  type ExportedBundle,
  exportSession,
  type ExportSource,
  importBundle,
  type ImportedSession,
  type ImportTarget,
} from "./store/bundle/mod.ts";

export { VERSION };
export { BUILD_KIND, type BuildKind } from "./build.ts";

export type { ProfileName };

/** The DeepWork profile's quality gate. */
export interface QualityGateOptions {
  /** Whether reviews run at all (default true). */
  enabled?: boolean;
  /** An external reviewer command (review prompt on stdin, JSON verdict on stdout); self-review without. */
  reviewCommand?: string;
  /** `claude`: reviews through the Claude Code CLI (`claude -p --output-format json`); a `reviewCommand` replaces it. */
  externalRunner?: "claude";
  /** How long one review may take, in seconds (default 120). */
  timeoutSeconds?: number;
  /** External reviews per step before `finished_step` fails (default 3). */
  maxAttempts?: number;
}

/** Options of {@linkcode Waymark.mcpServer}. */
export interface WaymarkServerOptions {
  /** Where to send log lines (never stdout). */
  log?: (line: string) => void;
  /** List `start_session` (default profile). */
  enableStartSession?: boolean;
  /** Which tools to serve (default `default`). */
  profile?: ProfileName;
  /** The DeepWork profile's quality gate. */
  qualityGate?: QualityGateOptions;
  /** Compose onto this server, an early one already serving (`tools/server/early_server.ts`). */
  onto?: WaymarkServer;
  /** Scope `tasks/*` to the runs started through this requestor (HTTP; `tools/tasks/owner.ts`). */
  taskOwner?: TaskOwner;
  /**
   * Who besides its starter may continue a run an authenticated call starts: `owner` (the
   * default) or `team` (`engine/access/team_policy.ts`).
   */
  runAccess?: RunAccess;
  /**
   * Run verification commands only in a folder the client named as a root (HTTP: the server's
   * own working directory is no client's workspace).
   */
  commandsNeedRoots?: boolean;
  /** The folder a connection works in until its client names roots (default: the process's). */
  cwd?: string;
  /**
   * The server answers one request and is dropped (`serve --http --stateless`): its task views
   * come from a cache this `Waymark` keeps for all such servers.
   */
  stateless?: boolean;
  /** Told each tool call: its tool, its error code (`null`: answered) and its time (metrics). */
  onToolCall?: (tool: string, code: string | null, ms: number) => void;
}

/** An open waymark with its MCP adapter: the core (`open.ts`) and a server per connection. */
export interface Waymark extends WaymarkCore {
  /** Creates an MCP server over this waymark (one per connection). */
  mcpServer(options?: WaymarkServerOptions): ReturnType<typeof createMcpServer>;
  /**
   * Runs the code a process's first tool call would run for the first time, writing no
   * session data (`tools/server/rehearsal.ts`); resolves within a quarter second and never rejects.
   * `protocolVersion`: the client's, whose parse is rehearsed; `interrupted`: asked between
   * parts, `true` ends it; `budgetMs`: the longest it may take.
   */
  rehearse(
    options?:
      & WaymarkServerOptions
      & Pick<RehearsalOptions, "protocolVersion" | "interrupted" | "budgetMs">,
  ): Promise<void>;
}

/**
 * `Waymark.mcpServer`: a server per connection (or per request, `stateless`, whose servers share
 * one cache of task views).
 */
function serverMaker(
  deps: EngineDeps,
  sources: Parameters<typeof profileOf>[0],
): Waymark["mcpServer"] {
  let taskViews: TaskViewCache | undefined;
  return (opts = {}) =>
    createMcpServer(deps, {
      version: VERSION,
      log: opts.log,
      enableStartSession: opts.enableStartSession,
      onto: opts.onto,
      taskOwner: opts.taskOwner,
      runAccess: opts.runAccess,
      commandsNeedRoots: opts.commandsNeedRoots,
      cwd: opts.cwd,
      sharedTaskViews: opts.stateless ? (taskViews ??= createTaskViewCache()) : undefined,
      onToolCall: opts.onToolCall,
      profile: profileOf(sources, opts),
    });
}

/** Opens waymark ({@linkcode openCore}) with its MCP adapter: servers and their rehearsal. */
export async function openWaymark(options: WaymarkOptions = {}): Promise<Waymark> {
  const core = await openCore(options);
  const { deps, jobs, schemas, store } = core;
  return {
    ...core,
    mcpServer: serverMaker(deps, { jobs, schemas }),
    rehearse: (opts = {}) =>
      rehearse(
        {
          deps,
          prepareQueries: () => store.prepareQueries(),
          profile: profileOf({ jobs, schemas }, opts),
        },
        {
          version: VERSION,
          protocolVersion: opts.protocolVersion,
          interrupted: opts.interrupted,
          log: opts.log,
          budgetMs: opts.budgetMs,
        },
      ),
  };
}

/** The tools a server's options name, built from this waymark's jobs. */
function profileOf(
  sources: { jobs: JobSource; schemas: NamedSchemaSource },
  options: WaymarkServerOptions,
): ToolProfile {
  return PROFILE_TOOLS[options.profile ?? "default"]({
    ...sources,
    gate: () => gateOf(options.qualityGate),
    log: options.log,
  });
}

/** The DeepWork quality gate from its options: off, self-review, or an external command. */
function gateOf(options: QualityGateOptions = {}) {
  if (options.enabled === false) return null;
  return {
    maxAttempts: options.maxAttempts ?? 3,
    timeoutMs: (options.timeoutSeconds ?? 120) * 1000,
    runner: options.reviewCommand
      ? commandReviewer(options.reviewCommand)
      : options.externalRunner === "claude"
      ? claudeReviewer()
      : null,
  };
}
