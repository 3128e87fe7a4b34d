/**
 * The review pipeline's first half: which changed files each rule matches, the tasks its
 * strategy makes of them, and each task's review id, derived from the rule, the files and a
 * hash of their contents, so the same review of the same content has the same id anywhere
 * (another process, another machine on the team store) and an edit gives a new one.
 * @module
 */
import { canonicalJson, sha256Hex } from "../common/hash.ts";
import { compareText } from "../common/collate.ts";
import type { ReviewStrategy } from "../model/vocabulary.ts";
import { globMatcher } from "./glob.ts";
import { relativeTo } from "./paths.ts";
import type { ReviewWorkspace } from "./ports.ts";
import type { ReviewRule } from "./rule.ts";

/** A review id: the rule's name, `--`, 24 hex digits (so it is safe in any path or URL). */
export const REVIEW_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}--[0-9a-f]{24}$/;

/** A file under review, with the hash of the content that was reviewed. */
export interface HashedFile {
  /** Project path. */
  path: string;
  /** SHA-256 (hex) of its content. */
  sha256: string;
}

/** One review to run: a rule over some files. */
export interface PlannedReview {
  /** Deterministic id (see the module's documentation). */
  reviewId: string;
  /** The rule. */
  rule: ReviewRule;
  /** The files under review, sorted. */
  files: HashedFile[];
  /** Matching files that did not change (when the rule asks for them). */
  unchanged: string[];
}

/** Whether `path` (a project path) is one `rule` applies to. */
export function ruleMatcher(rule: ReviewRule): (path: string) => boolean {
  const include = globMatcher(rule.include);
  const exclude = globMatcher(rule.exclude);
  return (path) => {
    const rel = relativeTo(rule.folder, path);
    return rel !== null && include(rel) && !exclude(rel);
  };
}

/** The groups of files a strategy reviews, given the files a rule matched and all changed. */
export function groupByStrategy<T>(
  strategy: ReviewStrategy,
  at: { matched: readonly T[]; changed: readonly T[] },
): T[][] {
  if (at.matched.length === 0) return [];
  if (strategy === "individual") return at.matched.map((f) => [f]);
  if (strategy === "matches_together") return [[...at.matched]];
  return [[...at.changed]];
}

/** The id of a review of `files` (hashed) under the rule named `rule`, stated in `file`. */
export async function reviewId(
  rule: { name: string; definedIn: string },
  files: readonly HashedFile[],
): Promise<string> {
  const digest = await sha256Hex(canonicalJson({
    rule: rule.name,
    definedIn: rule.definedIn,
    files: files.map((f) => [f.path, f.sha256]),
  }));
  return `${rule.name}--${digest.slice(0, 24)}`;
}

/** The file a `path:line` names. */
export function definingFile(definedAt: string): string {
  return definedAt.replace(/:\d+$/, "");
}

/** Every review the rules ask for over the changed files, in rule order then file order. */
export async function planReviews(
  ws: Pick<ReviewWorkspace, "hash" | "list">,
  at: { rules: readonly ReviewRule[]; changed: readonly string[] },
): Promise<PlannedReview[]> {
  const changed = [...at.changed].sort(compareText);
  const hashes = new Map<string, string | null>();
  const hashOf = async (path: string) => {
    if (!hashes.has(path)) hashes.set(path, await ws.hash(path));
    return hashes.get(path) ?? null;
  };
  const out: PlannedReview[] = [];
  for (const rule of at.rules) {
    const matches = ruleMatcher(rule);
    const groups = groupByStrategy(rule.strategy, {
      matched: changed.filter(matches),
      changed,
    });
    if (groups.length === 0) continue;
    const unchanged = rule.unchangedMatchingFiles
      ? (await ws.list(rule.folder)).filter((p) => matches(p) && !changed.includes(p))
      : [];
    for (const group of groups) {
      const files: HashedFile[] = [];
      for (const path of group) {
        const sha256 = await hashOf(path);
        if (sha256 !== null) files.push({ path, sha256 });
      }
      if (files.length === 0) continue;
      const id = await reviewId(
        { name: rule.name, definedIn: definingFile(rule.definedAt) },
        files,
      );
      out.push({ reviewId: id, rule, files, unchanged });
    }
  }
  return out;
}
