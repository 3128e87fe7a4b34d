/**
 * The commands (`cli/mod.ts`), loaded on demand so that `waymark serve` answers its client
 * before the engine and the store have loaded. The specifier is computed on purpose: Deno
 * prepares every literal dynamic-import target of the module graph at start-up, which here
 * would be nearly all of waymark. `deno task bundle` maps this file to `lazy_bundle.ts`.
 * @module
 */

/** The commands. */
export function loadCli(): Promise<typeof import("./mod.ts")> {
  return import(new URL("./mod.ts", import.meta.url).href);
}
