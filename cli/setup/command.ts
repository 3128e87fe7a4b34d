/**
 * `waymark setup` as `main.ts` runs it: loaded on its own (`lazy.ts`'s `setup` part), never
 * with the commands, since it opens no store. Loading the commands costs a setup run about
 * 0.2 s of CPU of its 0.25 s.
 * @module
 */
import { homeRefusal } from "../home_check.ts";
import type { CommandInput } from "../host.ts";
import { printErr } from "../terminal.ts";
import { processHost, setup as setupClient } from "./mod.ts";

/** `waymark setup --client NAME`, after the check every command makes of its home. */
export async function setup(input: CommandInput): Promise<number> {
  const refused = await homeRefusal(input.options ?? {});
  if (refused) {
    printErr(`[waymark] ${refused}\n`);
    return 1;
  }
  return await setupClient(processHost(input.buildKind, input.flags), input);
}
