/**
 * The commands, loaded on demand (`../lazy.ts`) by the names the command table (`commands.ts`)
 * runs them by: everything but answering the start of `waymark serve` over stdio, which
 * `main.ts` does before this module has loaded and then composes the rest onto with
 * {@linkcode openServe}.
 * @module
 */
import { fileOfOpenFailure, resolvePaths, type WaymarkOptions } from "../open.ts";
import { rotateKeyring } from "../store/mod.ts";
import { homeRefusal } from "./home_check.ts";
import { redactDbUrl } from "../store/db_url.ts";
import { databaseFile } from "../store/libsql/maintenance.ts";
import { commandFailure } from "./startup_failure.ts";
import { load } from "../lazy.ts";
import type { CommandInput } from "./host.ts";
import { printErr, printOut } from "./terminal.ts";

export type { OpenedServe } from "./serve.ts";

/** The serving commands (`serve.ts`, with the MCP adapter), loaded on first use. */
const serving = () => load<typeof import("./serve.ts")>("serving");

/** `waymark serve` over HTTP or with the viewer. */
export async function serve(input: CommandInput): Promise<number> {
  return await (await serving()).serve(input);
}

/** `waymark view`. */
export async function view(input: CommandInput): Promise<number> {
  return await (await serving()).view(input);
}

/** Opens what `waymark serve` over stdio composes onto its early servers (`serve.ts`). */
export async function openServe(
  ...args: Parameters<typeof import("./serve.ts").openServe>
): ReturnType<typeof import("./serve.ts").openServe> {
  return await (await serving()).openServe(...args);
}
export { review } from "./review.ts";
export { inspectWorkflow, listWorkflows, validateWorkflow, workflowSchema } from "./workflows.ts";
export { tryWorkflowCommand } from "./workflow_try.ts";
export { newWorkflow } from "./workflow_new.ts";

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

/**
 * The commands on the store (`sessions`, `import`, `gc`, `doctor`, `backup`), loaded on first
 * use (`../lazy.ts`), so that serving loads neither them nor the maintenance operations they call.
 */
export function storeCommands(): Promise<typeof import("./store_commands.ts")> {
  return load("storeCommands");
}

/**
 * Reports a command's failure to open or use its store as `serve` reports it to its client (what
 * is damaged or wrong, `waymark doctor`, the latest backup, moving the file aside), exit 1;
 * anything else is thrown on as it is.
 */
export function commandFailed(error: unknown, options: WaymarkOptions): number {
  if (error instanceof HomeRefused) {
    printErr(`[waymark] ${error.message}\n`);
    return 1;
  }
  const { dbUrl } = resolvePaths(options);
  const said = commandFailure(error, {
    openedFile: fileOfOpenFailure(error),
    dbFile: databaseFile(dbUrl) ?? redactDbUrl(dbUrl),
  });
  if (said === null) throw error;
  printErr(`[waymark] ${said}\n`);
  return 1;
}

/** Thrown by {@linkcode checkHome}: the home is there but is no folder. */
class HomeRefused extends Error {}

/**
 * Refuses a home that is there but is no folder (a file, a link to nothing) before a command
 * uses it, in the words `serve` uses; a folder, or nothing there yet, passes.
 */
export async function checkHome(options: WaymarkOptions): Promise<void> {
  const refused = await homeRefusal(options);
  if (refused) throw new HomeRefused(refused);
}
