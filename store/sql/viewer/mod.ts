/**
 * The viewer's read model: read-only, bounded queries for each page and JSON endpoint, over
 * the same schema and row decoding as the store's reader. Nothing here writes.
 * @module
 */
export * from "./sessions_list.ts";
export * from "./session.ts";
export * from "./run.ts";
export * from "./delegations.ts";
export * from "./footprint.ts";
