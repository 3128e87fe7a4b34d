/**
 * The storage operations the maintenance commands call (`waymark sessions`, `import`, `gc`,
 * `doctor`; the commands themselves are in `cli/`): the read model of sessions, bundles out and
 * in, garbage collection and the doctor. Loaded on demand (`../lazy.ts`), so serving starts
 * without them.
 * @module
 */
export { type DoctorReport, runDoctor } from "./doctor.ts";
export { collectGarbage, type GcSession } from "./gc.ts";
export {
  getSession,
  getSessionActors,
  getSessionNotes,
  getStepFootprints,
  listSessions,
  type SessionFilters,
  type SessionSummary,
  sumRunTokens,
} from "../sql/viewer/mod.ts";
export { exportSession } from "../bundle/export.ts";
export {
  type Bundle,
  bundleDigestLabel,
  type BundleResult,
  refuse,
} from "../bundle/bundle_format.ts";
export { type ImportedSession, writeBundle } from "../bundle/import.ts";
export { verifyBundle } from "../bundle/verify.ts";
