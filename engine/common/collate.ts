/**
 * Sorting text as `localeCompare` does in English (the Unicode root collation), without paying
 * for ICU where it is not needed: the first collation in a process loads ICU's collation data,
 * about 8 ms, and the first listing of a session sorts ids and paths that are almost always
 * printable ASCII. For those this module compares by a table of the collation's own order; any
 * other character hands the pair to an English `Intl.Collator`, so the order is the same either
 * way (`tests/unit/collate_test.ts` holds the table to the collator).
 * @module
 */

/**
 * Printable ASCII in root collation order: punctuation and symbols, digits, then letters, each
 * lower-case letter just before its capital (which shares its primary weight).
 */
const ASCII_ORDER =
  " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ";

/** Primary weight by char code (`-1`: not in the table). Letters share one with their capital. */
const PRIMARY = new Int16Array(128).fill(-1);
{
  let weight = 0;
  for (const ch of ASCII_ORDER) {
    const code = ch.charCodeAt(0);
    const isCapital = code >= 65 && code <= 90;
    PRIMARY[code] = isCapital ? weight - 1 : weight++;
  }
}

let collator: Intl.Collator | null = null;

function slowCompare(a: string, b: string): number {
  return (collator ??= new Intl.Collator("en")).compare(a, b);
}

const primary = (code: number) => (code < 128 ? PRIMARY[code]! : -1);

/**
 * Negative, zero or positive as `a` sorts before, with or after `b` under English collation:
 * primary weights first (case aside), then, for strings equal but for case, lower case first.
 */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let caseOrder = 0;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    const px = primary(x);
    const py = primary(y);
    if (px < 0 || py < 0) return slowCompare(a, b);
    if (px !== py) return px - py;
    if (caseOrder === 0 && x !== y) caseOrder = x > y ? -1 : 1; // lower case (higher code) first
  }
  const longer = a.length > b.length ? a : b;
  for (let i = n; i < longer.length; i++) {
    if (primary(longer.charCodeAt(i)) < 0) return slowCompare(a, b);
  }
  return a.length - b.length || caseOrder;
}
