/**
 * The commands, loaded on demand (`../lazy.ts`) by the names the command table (`commands.ts`)
 * runs them by: everything but answering the start of `waymark serve` over stdio, which
 * `main.ts` does before this module has loaded and then composes the rest onto with
 * {@linkcode openServe}.
 * @module
 */
import { resolvePaths } from "../mod.ts";
import { rotateKeyring } from "../store/mod.ts";
import { load } from "../lazy.ts";
import type { CommandInput } from "./host.ts";
import { processHost, setup as setupClient } from "./setup/mod.ts";
import { printOut } from "./terminal.ts";

export { type OpenedServe, openServe, serve, view } from "./serve.ts";
export { review } from "./review.ts";
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

/**
 * The commands on the store (`sessions`, `import`, `gc`, `doctor`, `backup`), loaded on first
 * use (`../lazy.ts`), so that serving loads neither them nor the maintenance operations they call.
 */
export function storeCommands(): Promise<typeof import("./store_commands.ts")> {
  return load("storeCommands");
}
