/**
 * How this copy of waymark was built, for `waymark --version`. `deno task bundle` and
 * `deno task build:npm` map this file to a copy naming their kind (`scripts/build_kind.ts`); a
 * compiled binary is the bundle, and knows it runs standalone from `Deno.build.standalone`.
 * @module
 */

/** The build kinds `waymark --version` reports. */
export type BuildKind = "source" | "bundle" | "binary" | "npm";

/** What built this module: `source` when it runs from a checkout or its URL. */
export const BUILD_KIND: BuildKind = "source";
