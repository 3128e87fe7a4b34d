/**
 * `cli/lazy.ts` as the single-file build sees it (`deno task bundle` maps one to the other):
 * a literal import, so the bundler inlines the commands.
 * @module
 */

/** The commands. */
export function loadCli(): Promise<typeof import("./mod.ts")> {
  return import("./mod.ts");
}
