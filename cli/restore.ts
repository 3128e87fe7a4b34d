/**
 * `waymark restore STATE_TOKEN [--dry-run] [--snapshot ID] [--json]`: the workspace's files (the
 * current folder's) back to the snapshot of the node the token names, as `restore_workspace`
 * does (docs/snapshots.md).
 * @module
 */
import { resolve } from "node:path";
import process from "node:process";
import { renderRestore } from "../engine/model/snapshots.ts";
import { restoreWorkspace } from "../engine/use_cases/restore_workspace.ts";
import { observeWorkspace } from "../tools/context/workspace.ts";
import { type CliHost, type CliInput, withWaymark, writeJson } from "./host.ts";

/** `waymark restore`. */
export async function restoreCommand(host: CliHost, input: CliInput): Promise<number> {
  const [stateToken, ...rest] = input.args;
  if (stateToken === undefined || rest.length > 0) return input.usage();
  const workspace = await observeWorkspace(resolve(process.cwd()));
  return await withWaymark(host, async ({ deps }) => {
    const done = await restoreWorkspace(deps, {
      stateToken,
      dryRun: input.flags["dry-run"] === true,
      snapshot: input.flags.snapshot,
    }, { workspace });
    if (!done.ok) {
      if (input.flags.json) writeJson(host, { error: done.error });
      else host.stderr(`${done.error.code}: ${done.error.message}\n`);
      return 1;
    }
    if (input.flags.json) writeJson(host, done.value);
    else host.stdout(`${renderRestore(done.value)}\n`);
    return 0;
  });
}
