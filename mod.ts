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
import { join, resolve } from "node:path";
import process from "node:process";
import { jobsAsWorkflows, type JobSource } from "./engine/deepwork/job_catalog.ts";
import type { EngineDeps } from "./engine/model/ports.ts";
import { applyPreferences, DEFAULT_PREFERENCES } from "./engine/model/preferences.ts";
import type { InspectResponse, ListResponse, StepResponse } from "./engine/answers/responses.ts";
import type { Result } from "./engine/model/result.ts";
import {
  type CheckpointInput,
  checkpointWorkflow,
} from "./engine/use_cases/checkpoint_workflow.ts";
import { type ContinueInput, continueWorkflow } from "./engine/use_cases/continue_workflow.ts";
import { inspectWorkflow } from "./engine/use_cases/inspect_workflow.ts";
import { listWorkflows } from "./engine/use_cases/list_workflows.ts";
import { type StartInput, startWorkflow } from "./engine/use_cases/start_workflow.ts";
import { additionalJobFolders, createJobSource } from "./tools/profiles/deepwork/job_folders.ts";
import {
  createWorkflowSource,
  cryptoRandom,
  type Durability,
  loadConfig,
  loadOrCreateKeyring,
  type OpenedSqlStore,
  openStore,
  prepareHome,
  type SourceDir,
  sqlWorkflowCache,
  systemClock,
} from "./store/mod.ts";
import { BUNDLED_WORKFLOWS } from "./workflows/mod.ts";
import { VERSION } from "./version.ts";
import { redactDbUrl } from "./store/db_url.ts";
import { homePaths } from "./store/home_paths.ts";
import { createMcpServer, type ToolProfile } from "./tools/mod.ts";
import { type RehearsalOptions, rehearse } from "./tools/server/rehearsal.ts";
import type { ProfileName } from "./tools/profiles/registry.ts";
import { PROFILE_TOOLS } from "./tools/profiles/tools.ts";
import { namedSchemaFolders } from "./tools/profiles/deepwork/named_schema_folders.ts";
import type { NamedSchemaSource } from "./engine/review/ports.ts";
import { claudeReviewer, commandReviewer } from "./tools/profiles/deepwork/reviewer.ts";
import { commandVerifier } from "./tools/context/verify_runner.ts";
import { usageDeps } from "./store/transcripts/mod.ts";
import { gitSnapshots } from "./tools/snapshots/mod.ts";
import type { WorkspaceSnapshots } from "./engine/model/snapshots.ts";
import type { WaymarkServer } from "./tools/server/waymark_server.ts";
import type { TaskOwner } from "./tools/tasks/owner.ts";
import { createTaskViewCache, type TaskViewCache } from "./tools/tasks/surface.ts";
import type { RunAccess } from "./engine/model/vocabulary.ts";

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

/** Where waymark keeps its data and finds its workflows. */
export interface WaymarkOptions {
  /** Data folder; default `$WAYMARK_HOME` or `~/.waymark`. */
  home?: string;
  /** Database URL; default `$WAYMARK_DB_URL` or `file:<home>/waymark.db`. `:memory:` works. */
  dbUrl?: string;
  /** The workspace whose `.waymark/workflows` is the project source; default the working directory. */
  workspace?: string;
  /** Extra workflow directories, lowest precedence (before those of `<home>/config.json`). */
  extraWorkflowDirs?: string[];
  /** Busy timeout for database locks, in ms. */
  busyTimeoutMs?: number;
  /** `full` syncs every commit to disk; default `normal` (see the store's `durability`). */
  durability?: Durability;
  /** Folders of DeepWork job folders, after the workspace's `.deepwork/jobs`. */
  jobDirs?: string[];
}

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

/** Resolved locations. */
export interface WaymarkPaths {
  /** Data folder. */
  home: string;
  /** Database URL. */
  dbUrl: string;
  /** Keyring file. */
  keysFile: string;
  /** Workflow directories in precedence order (after the bundled ones). */
  workflowDirs: SourceDir[];
  /** The workspace folder whose `.deepwork/jobs` the default profile lists. */
  workspace: string;
  /** Folders of DeepWork job folders, with `DEEPWORK_ADDITIONAL_JOBS_FOLDERS` last. */
  jobDirs: string[];
  /** Folders of named schemas (`DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS`). */
  schemaDirs: string[];
}

/** Resolves options and environment into concrete paths. */
export function resolvePaths(options: WaymarkOptions = {}): WaymarkPaths {
  const env = (name: string) => process.env[name] || undefined;
  const { home, dbUrl, keysFile } = homePaths(options);
  const workspace = resolve(options.workspace ?? process.cwd());
  return {
    home,
    dbUrl,
    keysFile,
    workflowDirs: [
      { source: "user", dir: join(home, "workflows") },
      { source: "project", dir: join(workspace, ".waymark", "workflows") },
      ...(options.extraWorkflowDirs ?? []).map((dir): SourceDir => ({
        source: "extra",
        dir: resolve(dir),
      })),
    ],
    workspace,
    jobDirs: [
      ...(options.jobDirs ?? []),
      ...additionalJobFolders(env("DEEPWORK_ADDITIONAL_JOBS_FOLDERS")),
    ].map((dir) => resolve(dir)),
    schemaDirs: additionalJobFolders(env("DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS"))
      .map((dir) => resolve(dir)),
  };
}

/** An open waymark: the engine's use-cases bound to a store. */
export interface Waymark {
  /** Resolved locations. */
  readonly paths: WaymarkPaths;
  /** The engine dependencies (for adapters such as the MCP server). */
  readonly deps: EngineDeps;
  /** The store. */
  readonly store: OpenedSqlStore;
  /** Lists workflows. */
  list(): Promise<Result<ListResponse>>;
  /** Inspects a workflow. */
  inspect(workflowId: string): Promise<Result<InspectResponse>>;
  /** Starts a run. */
  start(input: StartInput): Promise<Result<StepResponse>>;
  /** Advances (with an ack token) or rehydrates (without). */
  continue(input: ContinueInput): Promise<Result<StepResponse>>;
  /** Records a checkpoint. */
  checkpoint(input: CheckpointInput): Promise<Result<StepResponse>>;
  /** DeepWork jobs (the workspace's and the configured folders'). */
  readonly jobs: JobSource;
  /** Named schemas (the project's, `DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS`' and the bundled set). */
  readonly schemas: NamedSchemaSource;
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
  /** Closes the database. */
  close(): Promise<void>;
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

/** Opens waymark: the database (created and migrated if needed), the keyring, the workflow sources. */
export async function openWaymark(options: WaymarkOptions = {}): Promise<Waymark> {
  const home = resolvePaths(options).home;
  await opening(home, () => prepareHome(home));
  const config = await opening(join(home, "config.json"), () => loadConfig(home));
  const paths = resolvePaths({
    ...options,
    extraWorkflowDirs: [...(options.extraWorkflowDirs ?? []), ...config.workflowDirs],
    jobDirs: [...(options.jobDirs ?? []), ...config.jobDirs],
  });
  const jobs = createJobSource({ dirs: paths.jobDirs });
  const schemas = namedSchemaFolders({ dirs: paths.schemaDirs });
  const store = await opening(databaseFile(paths.dbUrl), () =>
    openStore(paths.dbUrl, {
      busyTimeoutMs: options.busyTimeoutMs,
      durability: options.durability,
      now: systemClock.now,
    }));
  const keyring = await opening(paths.keysFile, () => loadOrCreateKeyring(paths.keysFile))
    .catch(async (error) => {
      await store.close().catch(() => {});
      throw error;
    });
  const deps: EngineDeps = {
    store,
    workflows: createWorkflowSource(BUNDLED_WORKFLOWS, paths.workflowDirs, {
      extra: async () => jobsAsWorkflows(await jobs.load(paths.workspace)),
      cache: sqlWorkflowCache(store),
    }),
    keyring,
    clock: systemClock,
    random: cryptoRandom,
    defaultPreferences: applyPreferences(DEFAULT_PREFERENCES, config.preferences),
    verifier: commandVerifier(config.verification),
    ...usageDeps(config.cost, { env: process.env, cwd: process.cwd() }),
    snapshots: snapshotsOf(config.snapshots),
  };
  return {
    paths,
    deps,
    store,
    list: () => listWorkflows(deps),
    inspect: (workflowId) => inspectWorkflow(deps, { workflowId }),
    start: (input) => startWorkflow(deps, input),
    continue: (input) => continueWorkflow(deps, input),
    checkpoint: (input) => checkpointWorkflow(deps, input),
    jobs,
    schemas,
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
    close: () => store.close(),
  };
}

/** Workspace snapshots as configured: off, steps take none, and restoring those taken still works. */
function snapshotsOf(settings: { enabled: boolean; budgetMs?: number }): WorkspaceSnapshots {
  return gitSnapshots({
    budgetMs: settings.budgetMs,
    taking: settings.enabled && process.env.WAYMARK_SNAPSHOTS !== "0",
  });
}

/** The file each failure to open waymark was about, by the error thrown. */
const OPEN_FAILURES = new WeakMap<object, string>();

/**
 * The file (or redacted database URL) a failure of {@linkcode openWaymark} was about: its
 * `config.json`, database or keyring; `undefined` for any other error.
 */
export function fileOfOpenFailure(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? OPEN_FAILURES.get(error) : undefined;
}

/** Runs one step of opening, noting the file it was about when it throws. */
async function opening<T>(file: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (typeof error === "object" && error !== null && !OPEN_FAILURES.has(error)) {
      OPEN_FAILURES.set(error, file);
    }
    throw error;
  }
}

/** The database's file, or its URL with the password masked when it is not a file. */
function databaseFile(dbUrl: string): string {
  return dbUrl.startsWith("file:") ? dbUrl.slice("file:".length) : redactDbUrl(dbUrl);
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
