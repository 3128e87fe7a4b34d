/**
 * Bundle versions: a bundle from a newer waymark is refused naming both versions; an older one
 * is brought forward one version at a time through {@linkcode BUNDLE_UPGRADES}, each step first
 * checking the older bundle by its own version's rules. Version 1 is the first, so the table is
 * empty; version 2 adds the entry for 1.
 * @module
 */
import {
  BUNDLE_FORMAT,
  BUNDLE_SCHEMA_VERSION,
  type BundleResult,
  refuse,
} from "./bundle_format.ts";

/** One step of the upgrade path, from version `n` (its key) to `n + 1`. */
export interface BundleUpgrade {
  /** Why a version-`n` bundle fails the checks of its own version, or `null`. */
  verify(older: Record<string, unknown>): string | null;
  /** The same session as a version `n + 1` bundle, with its manifest sealed anew. */
  upgrade(older: Record<string, unknown>): Record<string, unknown>;
}

/** The upgrade steps, keyed by the version they upgrade from. */
export const BUNDLE_UPGRADES: Readonly<Record<number, BundleUpgrade>> = {};

/** Options of {@linkcode upgradeBundle} (tests hand in their own path). */
export interface UpgradeOptions {
  /** The version to reach (default: the one this waymark writes). */
  current?: number;
  /** The steps (default {@linkcode BUNDLE_UPGRADES}). */
  upgrades?: Readonly<Record<number, BundleUpgrade>>;
}

/** A parsed bundle brought to the current version, or why it cannot be. */
export function upgradeBundle(
  raw: unknown,
  options: UpgradeOptions = {},
): BundleResult<Record<string, unknown>> {
  const current = options.current ?? BUNDLE_SCHEMA_VERSION;
  const upgrades = options.upgrades ?? BUNDLE_UPGRADES;
  const header = raw as { format?: unknown; bundleSchemaVersion?: unknown } | null;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return refuse("BUNDLE_INVALID", "This file is not a waymark session bundle (not an object).");
  }
  if (header?.format !== BUNDLE_FORMAT) {
    return refuse(
      "BUNDLE_INVALID",
      `This file is not a waymark session bundle (its format is ${
        JSON.stringify(header?.format ?? null)
      }, not "${BUNDLE_FORMAT}").`,
    );
  }
  const version = header.bundleSchemaVersion;
  if (typeof version !== "number" || !Number.isInteger(version)) {
    return refuse("BUNDLE_INVALID", "The bundle has no whole-number bundleSchemaVersion.");
  }
  const versions = { bundleSchemaVersion: version, supported: current };
  if (version > current) {
    return refuse(
      "BUNDLE_VERSION_UNSUPPORTED",
      `The bundle has bundleSchemaVersion ${version}, newer than ${current}, the newest this waymark reads; upgrade waymark to import it.`,
      versions,
    );
  }
  let bundle = raw as Record<string, unknown>;
  for (let v = version; v < current; v++) {
    const step = upgrades[v];
    if (!step) {
      return refuse(
        "BUNDLE_VERSION_UNSUPPORTED",
        `The bundle has bundleSchemaVersion ${version}, older than any this waymark can upgrade (it reads ${current}).`,
        versions,
      );
    }
    const problem = step.verify(bundle);
    if (problem) return refuse("BUNDLE_INVALID", `${problem} (bundleSchemaVersion ${v}).`);
    bundle = step.upgrade(bundle);
  }
  return { ok: true, value: bundle };
}
