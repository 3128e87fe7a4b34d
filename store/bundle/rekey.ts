/**
 * What an import rewrites in each event's text: session and run ids taken here already are
 * replaced by fresh ones wherever they appear (fields, `ses_`/`run_` labels, the recorded
 * responses inside), and each token placeholder becomes a fresh token signed by this machine's
 * key. Node ids stay: they are unique within their run, and new nodes derive theirs from the
 * new run id.
 * @module
 */
import {
  type Keyring,
  mintToken,
  type Random,
  randomHex,
  type TokenKind,
} from "../../engine/mod.ts";
import { placeholderPattern } from "./format.ts";

/** Replaces each old id (16 hex, not inside a longer hex run) by its new id. */
export function rekeyText(text: string, ids: ReadonlyMap<string, string>): string {
  if (ids.size === 0) return text;
  const pattern = new RegExp(`(?<![0-9a-f])(?:${[...ids.keys()].join("|")})(?![0-9a-f])`, "g");
  return text.replace(pattern, (old) => ids.get(old) ?? old);
}

/** Replaces each token placeholder by a fresh token for its run and node. */
export function mintPlaceholders(
  text: string,
  deps: { keyring: Keyring; random: Random },
): string {
  return text.replace(
    placeholderPattern(),
    (_all, kind: TokenKind, runId: string, nodeId) =>
      mintToken(
        deps.keyring,
        kind === "state"
          ? { kind, runId, nodeId }
          : { kind, runId, nodeId, attemptId: randomHex(deps, 6) },
      ),
  );
}

/** New ids for a session and its runs, none of them in `taken`. */
export async function freshIds(
  oldIds: readonly string[],
  deps: { random: Random; taken: (id: string) => Promise<boolean> },
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const used = new Set(oldIds);
  for (const old of oldIds) {
    let id = randomHex(deps, 8);
    while (used.has(id) || await deps.taken(id)) id = randomHex(deps, 8);
    used.add(id);
    out.set(old, id);
  }
  return out;
}
