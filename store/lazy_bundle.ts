/**
 * `store/lazy.ts` as the builds see it (`deno task bundle`, `deno task build:npm` map one to the
 * other): literal imports, so the bundler inlines these modules.
 * @module
 */

/** The PostgreSQL store (`postgres/mod.ts`). */
export function loadPostgres(): Promise<typeof import("./postgres/mod.ts")> {
  return import("./postgres/mod.ts");
}

/** The storage operations of the maintenance commands (`maintenance/mod.ts`). */
export function loadMaintenance(): Promise<typeof import("./maintenance/mod.ts")> {
  return import("./maintenance/mod.ts");
}
