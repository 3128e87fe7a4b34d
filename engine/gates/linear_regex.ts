/**
 * Patterns a workflow author wrote (a `regex` validation rule), evaluated in time linear in the
 * notes: RE2's discipline (re2js, pure JavaScript, deterministic) instead of the backtracking
 * `RegExp`, so a pattern such as `^(a+)+$` cannot freeze the process on a near-miss. Workflow
 * files are checked when they load, but a snapshot imported from elsewhere carries its rules as
 * written, so the discipline holds where the notes are tested.
 *
 * RE2 has no lookahead and no backreferences (neither can be matched in linear time); they are
 * refused with that reason. Lookbehind runs in linear time and is kept. Flags are JavaScript's:
 * `i`, `m`, `s` as usual, `y` anchors at the start, `g`, `u`, `v` and `d` change nothing for a
 * yes/no test.
 * @module
 */
import { RE2JS } from "npm:re2js@2.10.0";

/** A compiled pattern, or why it cannot be evaluated. */
export type LinearPattern =
  | { ok: true; test(text: string): boolean }
  | { ok: false; reason: string };

const FLAG_BITS: Readonly<Record<string, number>> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
  y: 0,
  g: 0,
  u: 0,
  v: 0,
  d: 0,
};

/** Compiled patterns by flags and text; rules repeat on every acknowledgement of a step. */
const cache = new Map<string, LinearPattern>();
const CACHE_MAX = 512;

/**
 * One token of a pattern as the scanner sees it: an atom (a character, an escape, a class, a
 * group's end) possibly followed by a quantifier.
 */
interface Scan {
  /** Unsupported syntax found, with a reason. */
  unsupported?: string;
  /** The first group repeated without bound that itself repeats without bound: `(a+)+`. */
  nested?: string;
}

const UNBOUNDED = /^(?:[*+]|\{\d+,\})/;
const QUANTIFIER = /^(?:[*+?]|\{\d+(?:,\d*)?\})/;

/** Index just past the character class opening at `i` (`[` ... `]`, escapes skipped). */
function classEnd(pattern: string, i: number): number {
  let j = i + 1;
  if (pattern[j] === "^") j++;
  if (pattern[j] === "]") j++;
  while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
  return j + 1;
}

/**
 * Walks a pattern's syntax once: refuses lookahead and backreferences, and finds a repeated
 * group whose body repeats without bound (what backtracking engines take exponential time on).
 */
function scan(pattern: string): Scan {
  const result: Scan = {};
  const frames: { start: number; inner: boolean }[] = [{ start: 0, inner: false }];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    let atomInner = false;
    let atomStart = i;
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") {
        result.unsupported ??= `backreferences (\`\\${next}\`) are not supported`;
      }
      i += 2;
    } else if (c === "[") {
      i = classEnd(pattern, i);
    } else if (c === "(") {
      if (pattern.startsWith("(?=", i) || pattern.startsWith("(?!", i)) {
        result.unsupported ??= `lookahead (\`${pattern.slice(i, i + 3)}\`) is not supported`;
      }
      frames.push({ start: i, inner: false });
      i++;
      continue;
    } else if (c === ")" && frames.length > 1) {
      const frame = frames.pop()!;
      atomStart = frame.start;
      atomInner = frame.inner;
      i++;
    } else {
      i++;
    }
    const quantifier = QUANTIFIER.exec(pattern.slice(i))?.[0] ?? "";
    const unbounded = UNBOUNDED.test(quantifier);
    if (unbounded && atomInner) {
      result.nested ??= pattern.slice(atomStart, i + quantifier.length);
    }
    if (unbounded || atomInner) frames[frames.length - 1]!.inner = true;
    i += quantifier.length;
    if (pattern[i] === "?" && quantifier !== "") i++; // a lazy quantifier
  }
  return result;
}

function compile(pattern: string, flags: string): LinearPattern {
  let bits = RE2JS.LOOKBEHINDS;
  for (const flag of flags) {
    const bit = FLAG_BITS[flag];
    if (bit === undefined || flags.indexOf(flag) !== flags.lastIndexOf(flag)) {
      return { ok: false, reason: `invalid flags \`${flags}\`` };
    }
    bits |= bit;
  }
  const { unsupported } = scan(pattern);
  if (unsupported) {
    return {
      ok: false,
      reason: `${unsupported}: waymark matches patterns in linear time (RE2 syntax)`,
    };
  }
  try {
    const source = RE2JS.translateRegExp(pattern);
    const re = RE2JS.compile(flags.includes("y") ? `\\A(?:${source})` : source, bits);
    return { ok: true, test: (text) => re.test(text) };
  } catch (error) {
    return { ok: false, reason: String((error as Error).message ?? error) };
  }
}

/** Compiles an author's pattern under the linear-time discipline (cached by text and flags). */
export function linearPattern(pattern: string, flags = ""): LinearPattern {
  const key = `${flags}/${pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  if (cache.size >= CACHE_MAX) cache.clear();
  const compiled = compile(pattern, flags);
  cache.set(key, compiled);
  return compiled;
}

/**
 * The part of a pattern that a backtracking engine takes exponential time on (a group repeated
 * without bound whose body repeats without bound, such as `(a+)+`), or `null`. waymark never
 * backtracks, but another tool reading the same workflow may.
 */
export function nestedRepetition(pattern: string): string | null {
  return scan(pattern).nested ?? null;
}
