/**
 * The commands, loaded on demand (`../lazy.ts`) by the names the command table (`commands.ts`)
 * runs them by: everything but answering the start of `waymark serve` over stdio, which
 * `main.ts` does before this module has loaded and then composes the rest onto with
 * {@linkcode openServe}.
 * @module
 */
import { openWaymark, resolvePaths, VERSION, type WaymarkOptions } from "../mod.ts";
import { createWorkflowSource, loadConfig, openStore, rotateKeyring } from "../store/mod.ts";
import { BUNDLED_WORKFLOWS } from "../workflows/mod.ts";
import { backupCommand } from "./backup.ts";
import { exportCommand, importCommand } from "./bundles.ts";
import { doctorCommand } from "./doctor.ts";
import { gcCommand } from "./gc.ts";
import type { CliHost, CommandInput, StoreCommand } from "./host.ts";
import { listCommand, showCommand } from "./sessions.ts";
import { processHost, setup as setupClient } from "./setup/mod.ts";
import { printErr, printOut } from "./terminal.ts";

export { type OpenedServe, openServe, serve, view } from "./serve.ts";
export { inspectWorkflow, listWorkflows, validateWorkflow, workflowSchema } from "./workflows.ts";

/**
 * `waymark keys rotate`: a new signing key, which running servers pick up; the previous one
 * still verifies.
 */
export async function rotateKeys(input: CommandInput): Promise<number> {
  const { keysFile } = resolvePaths(input.options);
  const keyring = await rotateKeyring(keysFile);
  printOut(
    `rotated ${keysFile}: current key ${keyring.current.id}, previous ${keyring.previous?.id} (running servers sign with the new key within a second; tokens of the key before the previous are refused)\n`,
  );
  return 0;
}

/** `waymark setup --client NAME`. */
export async function setup(input: CommandInput): Promise<number> {
  return await setupClient(processHost(input.buildKind, input.flags), input);
}

/** What the commands on the store get: paths, openers and the output streams. */
function storeHost(options: WaymarkOptions, buildKind: string): CliHost {
  return {
    paths: resolvePaths(options),
    version: VERSION,
    buildKind,
    open: () => openWaymark(options),
    openDatabase: (url) => openStore(url, { busyTimeoutMs: options.busyTimeoutMs, migrate: false }),
    workflows: () => ({
      // as openWaymark composes them: config.json's folders after the flags'
      load: async () => {
        const { workflowDirs } = await loadConfig(resolvePaths(options).home);
        const extra = [...(options.extraWorkflowDirs ?? []), ...workflowDirs];
        const dirs = resolvePaths({ ...options, extraWorkflowDirs: extra }).workflowDirs;
        return await createWorkflowSource(BUNDLED_WORKFLOWS, dirs).load();
      },
    }),
    stdout: printOut,
    stderr: printErr,
    now: () => new Date(),
  };
}

/** A command on the store, run with the host of this process. */
function onStore(command: StoreCommand): (input: CommandInput) => Promise<number> {
  return (input) => command(storeHost(input.options, input.buildKind), input);
}

/** `waymark sessions list`. */
export const listSessions: (input: CommandInput) => Promise<number> = onStore(listCommand);
/** `waymark sessions show ID`. */
export const showSession: (input: CommandInput) => Promise<number> = onStore(showCommand);
/** `waymark sessions export ID | --all -o DIR`. */
export const exportSessions: (input: CommandInput) => Promise<number> = onStore(exportCommand);
/** `waymark import FILE...`. */
export const importBundles: (input: CommandInput) => Promise<number> = onStore(importCommand);
/** `waymark gc`. */
export const gc: (input: CommandInput) => Promise<number> = onStore(gcCommand);
/** `waymark doctor [FILE]`. */
export const doctor: (input: CommandInput) => Promise<number> = onStore(doctorCommand);
/** `waymark backup FILE`. */
export const backup: (input: CommandInput) => Promise<number> = onStore(backupCommand);
