/**
 * Store modules loaded on demand: the PostgreSQL store (only for `postgres://` URLs) and the
 * maintenance operations (only for `sessions`, `gc`, `doctor`, `import`). The specifiers
 * are computed on purpose: Deno prepares every literal dynamic-import target of the module graph
 * when the graph loads (the `pg` driver among them). The builds map this file to
 * `lazy_bundle.ts`, whose literal imports the bundler can inline.
 * @module
 */

/** The PostgreSQL store (`postgres/mod.ts`). */
export function loadPostgres(): Promise<typeof import("./postgres/mod.ts")> {
  return import(new URL("./postgres/mod.ts", import.meta.url).href);
}

/** The storage operations of the maintenance commands (`maintenance/mod.ts`). */
export function loadMaintenance(): Promise<typeof import("./maintenance/mod.ts")> {
  return import(new URL("./maintenance/mod.ts", import.meta.url).href);
}
