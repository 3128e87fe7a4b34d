/**
 * The store adapters: the SQL event store (shared Kysely code in `sql/`, the libSQL dialect in
 * `libsql/`, the PostgreSQL dialect in `postgres/`, picked by URL in `open.ts`; tests that need
 * no file use libSQL's `:memory:`), the keyring file, workflow files on disk, and the runtime
 * clock and randomness.
 * @module
 */
export { openStore } from "./open.ts";
export { openLibsqlStore, type SqliteStore } from "./libsql/mod.ts";
export type { OpenedSqlStore, OpenStoreOptions, SqlStore } from "./sql/store.ts";
export type { Durability } from "./open_options.ts";
export { type KeyringClock, loadOrCreateKeyring, rotateKeyring } from "./keyring.ts";
export {
  createWorkflowSource,
  type ExtraWorkflows,
  type SourceDir,
  type WorkflowSourceOptions,
} from "./workflow_files/mod.ts";
export { WORKFLOW_CACHE_ROWS, type WorkflowCache } from "./workflow_files/cache.ts";
export { sqlWorkflowCache } from "./sql/workflow_cache.ts";
export { cryptoRandom, systemClock } from "./system.ts";
export { loadConfig, type WaymarkConfig } from "../config/config_file.ts";
export {
  PERSONAL_TOKEN_PREFIX,
  type PersonalTokenRecord,
  type PersonalTokens,
  sqlPersonalTokens,
} from "./sql/personal_tokens.ts";
export { type AuthSettings, resolveAuthSettings } from "../config/auth_settings.ts";
export { prepareHome } from "./private_files.ts";
export type { Database } from "./sql/database.ts";
export { migrateToLatest, MIGRATIONS } from "./libsql/migrations.ts";
