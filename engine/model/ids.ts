/**
 * Ids: how they are made and how agents see them. Sessions and runs are stored as bare hex and
 * shown as `ses_<hex>` and `run_<hex>`; this module is the one place that adds or strips those
 * prefixes. Node ids are derived from their origin, so racing writers agree on them.
 * @module
 */
import { sha256Hex, toHex } from "../common/hash.ts";
import type { Random } from "./ports.ts";

/** Stored session and run ids: 8 random bytes as lowercase hex. */
export const ID_HEX = /^[0-9a-f]{16}$/;

/** The prefix of session ids shown to agents. */
export const SESSION_PREFIX = "ses_";
/** The prefix of run ids shown to agents. */
export const RUN_PREFIX = "run_";

/** `ses_<hex>` for a stored session id. */
export function sessionLabel(sessionId: string): string {
  return `${SESSION_PREFIX}${sessionId}`;
}

/** `run_<hex>` for a stored run id. */
export function runLabel(runId: string): string {
  return `${RUN_PREFIX}${runId}`;
}

/** The stored hex of `ses_<hex>` or of bare hex, or `null` when it is neither. */
export function parseSessionLabel(text: string): string | null {
  return parseLabel(text, SESSION_PREFIX);
}

/** The stored hex of `run_<hex>` or of bare hex, or `null` when it is neither. */
export function parseRunLabel(text: string): string | null {
  return parseLabel(text, RUN_PREFIX);
}

/** `text` without `prefix` when it has it (for prefix searches, where the hex may be partial). */
export function stripLabel(text: string, prefix: string): string {
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

function parseLabel(text: string, prefix: string): string | null {
  const hex = stripLabel(text, prefix);
  return ID_HEX.test(hex) ? hex : null;
}

/** Every `ses_…`/`run_…`/bare 16-hex id named in free text, lowercased, in order, deduplicated. */
export function idsInText(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/\b(?:ses_|run_)?([0-9a-f]{16})\b/gi)) {
    found.add(m[1].toLowerCase());
  }
  return [...found];
}

/** Random lowercase hex of `bytes` bytes (8 for session and run ids, 6 for attempt ids). */
export function randomHex(deps: { random: Random }, bytes: number): string {
  return toHex(deps.random.bytes(bytes));
}

/**
 * A node id derived from its origin (`["ack", runId, nodeId, attemptId]` and the like), so racing
 * writers compute the same id for the same attempt.
 */
export async function deriveNodeId(origin: readonly string[]): Promise<string> {
  return (await sha256Hex(origin.join(":"))).slice(0, 16);
}
