/**
 * waymark opened without its MCP adapter: where its data lives ({@linkcode resolvePaths}), and
 * {@linkcode openCore}, the engine's use-cases bound to the store, the keyring and the workflow
 * sources. `mod.ts` adds the MCP servers; the commands on the store open only this, so they start
 * without the MCP SDK and the tools' schemas.
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
import { redactDbUrl } from "./store/db_url.ts";
import { homePaths } from "./store/home_paths.ts";
import { namedSchemaFolders } from "./tools/profiles/deepwork/named_schema_folders.ts";
import type { NamedSchemaSource } from "./engine/review/ports.ts";
import { commandVerifier } from "./tools/context/verify_runner.ts";
import { usageDeps } from "./store/transcripts/mod.ts";
import { gitSnapshots } from "./tools/snapshots/mod.ts";
import type { WorkspaceSnapshots } from "./engine/model/snapshots.ts";

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

/** An open waymark: the engine's use-cases bound to a store (no MCP adapter). */
export interface WaymarkCore {
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
  /** Closes the database. */
  close(): Promise<void>;
}

/**
 * Opens waymark's core: the database (created and migrated if needed), the keyring, the workflow
 * sources, the engine's use-cases bound to them.
 */
export async function openCore(options: WaymarkOptions = {}): Promise<WaymarkCore> {
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
 * The file (or redacted database URL) a failure of {@linkcode openCore} was about: its
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
