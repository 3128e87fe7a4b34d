/**
 * The commands on the store (`sessions`, `tokens`, `import`, `gc`, `doctor`, `backup`), each run with the
 * host of this process (paths, openers, the output streams, the clock). Loaded on first use
 * from the commands (`mod.ts`, through `../lazy.ts`), with the maintenance operations they call.
 * @module
 */
import { openCore, resolvePaths, type WaymarkOptions } from "../open.ts";
import { VERSION } from "../version.ts";
import { createWorkflowSource, loadConfig, openStore } from "../store/mod.ts";
import { BUNDLED_WORKFLOWS } from "../workflows/mod.ts";
import { backupCommand } from "./backup.ts";
import { exportCommand, importCommand } from "./bundles.ts";
import { doctorCommand } from "./doctor.ts";
import { gcCommand } from "./gc.ts";
import { restoreCommand } from "./restore.ts";
import type { CliHost, CommandInput, StoreCommand } from "./host.ts";
import { listCommand, showCommand } from "./sessions.ts";
import * as tokens from "./tokens.ts";
import { printErr, printOut } from "./terminal.ts";

/** What the commands on the store get: paths, openers and the output streams. */
function storeHost(options: WaymarkOptions, buildKind: string): CliHost {
  return {
    paths: resolvePaths(options),
    version: VERSION,
    buildKind,
    open: () => openCore(options),
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
/** `waymark restore STATE_TOKEN`. */
export const restore: (input: CommandInput) => Promise<number> = onStore(restoreCommand);
/** `waymark doctor [FILE]`. */
export const doctor: (input: CommandInput) => Promise<number> = onStore(doctorCommand);
/** `waymark backup FILE`. */
export const backup: (input: CommandInput) => Promise<number> = onStore(backupCommand);
/** `waymark tokens create --name N`. */
export const createToken: (input: CommandInput) => Promise<number> = onStore(tokens.createCommand);
/** `waymark tokens list`. */
export const listTokens: (input: CommandInput) => Promise<number> = onStore(tokens.listCommand);
/** `waymark tokens revoke ID`. */
export const revokeToken: (input: CommandInput) => Promise<number> = onStore(tokens.revokeCommand);
