/**
 * Session bundles: export a session to one versioned, digest-sealed JSON file, verify one, and
 * import it into another store (never merging; re-keyed when its ids are taken).
 * @module
 */
export {
  type Bundle,
  BUNDLE_FORMAT,
  BUNDLE_SCHEMA_VERSION,
  type BundleError,
  type BundleResult,
} from "./bundle_format.ts";
export { type ExportedBundle, exportSession, type ExportSource } from "./export.ts";
export { importBundle, type ImportedSession, type ImportTarget, writeBundle } from "./import.ts";
export { verifyBundle, type VerifyOptions } from "./verify.ts";
export {
  BUNDLE_UPGRADES,
  type BundleUpgrade,
  upgradeBundle,
  type UpgradeOptions,
} from "./upgrade.ts";
