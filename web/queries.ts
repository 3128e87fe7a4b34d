/**
 * The viewer's queries: the store's read model (`store/sql/viewer/`), so the viewer reads
 * stored data the way the engine does and builds no SQL itself.
 * @module
 */
export * from "../store/sql/viewer/mod.ts";
