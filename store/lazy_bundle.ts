/**
 * `store/lazy.ts` as the builds see it (`deno task bundle`, `deno task build:npm` map one to the
 * other): literal imports, so the bundler inlines these modules.
 * @module
 */

/** The PostgreSQL store (`postgres/mod.ts`). */
export function loadPostgres(): Promise<typeof import("./postgres/mod.ts")> {
  return import("./postgres/mod.ts");
}

/** The store's commands (`maintenance/commands.ts`). */
export function loadStoreCommands(): Promise<typeof import("./maintenance/commands.ts")> {
  return import("./maintenance/commands.ts");
}
