/**
 * What an import rewrites in each event's text: session and run ids taken here already are
 * replaced by fresh ones wherever they appear (fields, `ses_`/`run_` labels, the recorded
 * responses inside), and each token placeholder naming a run and node the bundle itself brings
 * becomes a fresh token signed by this machine's key; any other placeholder stays inert text.
 * Node ids stay: they are unique within their run, and new nodes derive theirs from the new run
 * id. Every rewrite is one pass over the text with a map lookup per match: linear in the text,
 * however many ids the bundle carries.
 * @module
 */
import { randomHex } from "../../engine/model/ids.ts";
import type { Random } from "../../engine/model/ports.ts";
import { type Keyring, mintToken, namesAttempt } from "../../engine/access/tokens.ts";
import type { TokenKind } from "../../engine/model/vocabulary.ts";
import { placeholderPattern } from "./bundle_format.ts";

/** A 16-hex id, not inside a longer hex run. */
const ID_IN_TEXT = /(?<![0-9a-f])[0-9a-f]{16}(?![0-9a-f])/g;

/** Replaces each old id (16 hex, not inside a longer hex run) by its new id. */
export function rekeyText(text: string, ids: ReadonlyMap<string, string>): string {
  if (ids.size === 0) return text;
  return text.replace(ID_IN_TEXT, (old) => ids.get(old) ?? old);
}

/** The key of a run's node in {@linkcode mintPlaceholders}' `own` set. */
export function nodeKey(runId: string, nodeId: string): string {
  return `${runId}:${nodeId}`;
}

/**
 * Replaces each token placeholder whose run and node are in `own` (keys from
 * {@linkcode nodeKey}) by a fresh token for them; others are left as they are.
 */
export function mintPlaceholders(
  text: string,
  deps: { keyring: Keyring; random: Random; own: ReadonlySet<string> },
): string {
  return text.replace(
    placeholderPattern(),
    (all, kind: TokenKind, runId: string, nodeId: string) =>
      !deps.own.has(nodeKey(runId, nodeId)) ? all : mintToken(
        deps.keyring,
        !namesAttempt(kind)
          ? { kind, runId, nodeId }
          : { kind, runId, nodeId, attemptId: randomHex(deps, 6) },
      ),
  );
}

/** New ids for a session and its runs, none of them in `avoid` or among the old ones. */
export function freshIds(
  oldIds: readonly string[],
  deps: { random: Random; avoid: ReadonlySet<string> },
): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set(oldIds);
  for (const old of oldIds) {
    let id = randomHex(deps, 8);
    while (used.has(id) || deps.avoid.has(id)) id = randomHex(deps, 8);
    used.add(id);
    out.set(old, id);
  }
  return out;
}
