/**
 * Workflow ids: `namespace.name` with exactly one dot; `wr.` is reserved for bundled files;
 * legacy ids without a dot still run, with a warning.
 * @module
 */

import type { SourceKind } from "../vocabulary.ts";

const SEGMENT = /^[a-z][a-z0-9_-]*$/;

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
