/**
 * The session bundle, version 1: one JSON file with a session's events in order, every pinned
 * workflow snapshot its runs use, and a manifest of SHA-256 digests (each event, each part, and
 * the whole). Digests are over RFC 8785 canonical JSON, so they do not depend on how the file
 * is laid out; the file itself is written one event per line in canonical form, so the same
 * session always exports to the same bytes. Tokens never appear: each is replaced by a
 * placeholder naming its kind, run and node, and import mints fresh ones in its place.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { canonicalJson } from "../../engine/common/hash.ts";
import { ID_HEX } from "../../engine/model/ids.ts";
import type { Retry } from "../../engine/model/result.ts";
import {
  type BundleErrorCode,
  TOKEN_KINDS,
  type TokenKind,
} from "../../engine/model/vocabulary.ts";
import { digest } from "../sql/rows.ts";

/** What every bundle says it is. */
export const BUNDLE_FORMAT = "waymark.session";
/** The bundle version this waymark writes (and the newest it reads). */
export const BUNDLE_SCHEMA_VERSION = 1;

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters");

/** One event of a bundle: its position (from 1), kind, append time, payload and digest. */
export const bundleEventSchema = z.object({
  n: z.number().int().min(1),
  kind: z.string().min(1),
  at: z.string().min(1),
  payload: z.record(z.string(), z.unknown()),
  digest: hex64,
}).strict();

/** One pinned workflow snapshot, by its `workflowHash`. */
export const bundleSnapshotSchema = z.object({
  workflowHash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  workflowId: z.string().min(1),
  compiled: z.record(z.string(), z.unknown()),
}).strict();

/** A summary of the session, checked against its events. */
export const bundleSessionSchema = z.object({
  sessionId: z.string().regex(ID_HEX, "must be 16 lowercase hex characters"),
  title: z.string(),
  eventCount: z.number().int().min(1),
  firstAt: z.string(),
  lastAt: z.string(),
}).strict();

/** The manifest: the digest of each part and of the whole. */
export const manifestSchema = z.object({
  algorithm: z.literal("sha256"),
  parts: z.object({ session: hex64, events: hex64, snapshots: hex64 }).strict(),
  whole: hex64,
}).strict();

/** A version-1 bundle. */
export const bundleSchema = z.object({
  bundleSchemaVersion: z.literal(BUNDLE_SCHEMA_VERSION),
  format: z.literal(BUNDLE_FORMAT),
  manifest: manifestSchema,
  session: bundleSessionSchema,
  events: z.array(bundleEventSchema).min(1),
  snapshots: z.array(bundleSnapshotSchema),
}).strict();

/** A version-1 bundle. */
export type Bundle = z.infer<typeof bundleSchema>;
/** One event of a bundle. */
export type BundleEvent = z.infer<typeof bundleEventSchema>;
/** One snapshot of a bundle. */
export type BundleSnapshot = z.infer<typeof bundleSnapshotSchema>;
/** The parts a manifest covers. */
export type BundleParts = Pick<Bundle, "session" | "events" | "snapshots">;

/** A structured bundle error: what is wrong, whether retrying helps. */
export interface BundleError {
  /** What kind of failure. */
  code: BundleErrorCode;
  /** One or two sentences, with how to recover. */
  message: string;
  /** Whether a retry can help. */
  retry: Retry;
  /** Extra facts (versions, the event concerned, ...). */
  details?: Record<string, unknown>;
}

/** Success or a bundle error. */
export type BundleResult<T> = { ok: true; value: T } | { ok: false; error: BundleError };

/** A failed {@linkcode BundleResult} (not retryable unless said). */
export function refuse<T = never>(
  code: BundleErrorCode,
  message: string,
  details?: Record<string, unknown>,
): BundleResult<T> {
  const error: BundleError = { code, message, retry: { kind: "not_retryable" } };
  if (details) error.details = details;
  return { ok: false, error };
}

/** SHA-256 hex of a value's canonical JSON. */
export function canonicalDigest(value: unknown): string {
  return digest(canonicalJson(value));
}

/** The digest an event must carry: over everything it holds but the digest. */
export function eventDigest(event: Omit<BundleEvent, "digest">): string {
  return canonicalDigest({ n: event.n, kind: event.kind, at: event.at, payload: event.payload });
}

/** The whole bundle's digest: over its version, format and the digests of its parts. */
export function wholeDigest(parts: Bundle["manifest"]["parts"], version: number): string {
  return canonicalDigest({ bundleSchemaVersion: version, format: BUNDLE_FORMAT, parts });
}

/** The manifest of a bundle's parts. */
export function seal(parts: BundleParts): Bundle["manifest"] {
  const digests = {
    session: canonicalDigest(parts.session),
    events: canonicalDigest(parts.events),
    snapshots: canonicalDigest(parts.snapshots),
  };
  return {
    algorithm: "sha256",
    parts: digests,
    whole: wholeDigest(digests, BUNDLE_SCHEMA_VERSION),
  };
}

/** The file's text: canonical JSON, one event and one snapshot per line, so diffs stay readable. */
export function bundleText(bundle: Bundle): string {
  const list = (items: readonly unknown[]) =>
    items.length === 0 ? "[]" : `[\n${items.map((i) => canonicalJson(i)).join(",\n")}\n]`;
  return [
    `{"bundleSchemaVersion":${bundle.bundleSchemaVersion},`,
    `"format":${canonicalJson(bundle.format)},\n`,
    `"manifest":${canonicalJson(bundle.manifest)},\n`,
    `"session":${canonicalJson(bundle.session)},\n`,
    `"events":${list(bundle.events)},\n`,
    `"snapshots":${list(bundle.snapshots)}}\n`,
  ].join("");
}

/** The `sha256:`-prefixed form of a whole-bundle digest, as shown to people. */
export function bundleDigestLabel(whole: string): string {
  return `sha256:${whole}`;
}

/** What a token becomes in a bundle: its kind, run and node, never the token. */
export function tokenPlaceholder(kind: TokenKind, runId: string, nodeId: string): string {
  return `wmtoken:${kind}:${runId}:${nodeId}`;
}

/** A fresh global pattern matching every token placeholder (kind, run, node captured). */
export function placeholderPattern(): RegExp {
  return new RegExp(`wmtoken:(${TOKEN_KINDS.join("|")}):([0-9a-f]{16}):([0-9a-f]{16})`, "g");
}
