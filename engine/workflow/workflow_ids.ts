/**
 * Workflow ids: `namespace.name` with exactly one dot; `waymark.` is reserved for bundled files;
 * legacy ids without a dot still run, with a warning. `wr.` is WorkRail's namespace: a user's
 * WorkRail files keep their ids, and waymark's own former `wr.<name>` ids are aliases of
 * `waymark.<name>` for one release.
 * @module
 */

import type { SourceKind } from "../model/vocabulary.ts";

const SEGMENT = /^[a-z][a-z0-9_-]*$/;

/** The namespace only workflows bundled with waymark may use. */
export const BUNDLED_NAMESPACE = "waymark";

/** The namespace waymark's bundled workflows used before 0.2 (WorkRail's, which users keep). */
export const FORMER_BUNDLED_NAMESPACE = "wr";

/** The release after which the former bundled ids stop resolving. */
export const FORMER_IDS_UNTIL = "0.3.0";

/** What an id is: a namespaced id, a legacy id, or not an id at all. */
export type IdCheck =
  | { status: "namespaced"; namespace: string; name: string }
  | { status: "legacy" }
  | { status: "invalid"; reason: string };

/** Classifies a workflow id. */
export function checkWorkflowId(id: string): IdCheck {
  const parts = id.split(".");
  if (parts.length === 1) {
    return /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(id)
      ? { status: "legacy" }
      : { status: "invalid", reason: "ids use letters, digits, `-` and `_`" };
  }
  if (parts.length !== 2) {
    return { status: "invalid", reason: "a namespaced id has exactly one dot (`namespace.name`)" };
  }
  const [namespace, name] = parts as [string, string];
  if (!SEGMENT.test(namespace) || !SEGMENT.test(name)) {
    return { status: "invalid", reason: "both segments of an id use [a-z][a-z0-9_-]*" };
  }
  return { status: "namespaced", namespace, name };
}

/** The namespace an id sorts under: its prefix, or `""` for a legacy id. */
export function namespaceOf(id: string): string {
  const dot = id.indexOf(".");
  return dot < 0 ? "" : id.slice(0, dot);
}

/** The rename suggested for a legacy id found in a source of the given kind. */
export function suggestedRename(id: string, source: SourceKind): string {
  const namespace = source === "project" ? "project" : source === "extra" ? "team" : "user";
  return `${namespace}.${id.toLowerCase().replace(/[^a-z0-9_-]/g, "-").replace(/^[^a-z]+/, "")}`;
}

/** Whether only a bundled file can define `id` (the `waymark.` namespace is reserved for them). */
export function onlyBundledMayDefine(id: string): boolean {
  return namespaceOf(id) === BUNDLED_NAMESPACE && checkWorkflowId(id).status === "namespaced";
}

/**
 * The bundled id a former bundled id names (`wr.<name>` → `waymark.<name>`), or `null`. It is
 * only a candidate: the alias holds when no source defines the former id itself and the
 * candidate is a bundled workflow.
 */
export function formerBundledAlias(id: string): string | null {
  const check = checkWorkflowId(id);
  return check.status === "namespaced" && check.namespace === FORMER_BUNDLED_NAMESPACE
    ? `${BUNDLED_NAMESPACE}.${check.name}`
    : null;
}
