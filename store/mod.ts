/**
 * The store adapters: the libSQL event store, the keyring file, workflow files on disk, and the
 * runtime clock and randomness.
 * @module
 */
export { openStore, type OpenStoreOptions, type SqliteStore } from "./sqlite_store.ts";
export { loadOrCreateKeyring, rotateKeyring } from "./keyring.ts";
export { createWorkflowSource, type SourceDir } from "./workflow_files.ts";
export { cryptoRandom, systemClock } from "./system.ts";
export { loadConfig, type WaymarkConfig } from "./config_file.ts";
export type { Database } from "./schema.ts";
export { migrateToLatest, MIGRATIONS } from "./migrations.ts";
