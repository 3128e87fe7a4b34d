/**
 * `compareText` sorts as English collation does: its table of printable ASCII matches the
 * collator, and strings with other characters go to the collator itself.
 */
import assert from "node:assert/strict";
import { compareText } from "../../engine/common/collate.ts";

const collator = new Intl.Collator("en");
const sign = (n: number) => Math.sign(n);

function randomText(alphabet: string, random: () => number): string {
  const length = Math.floor(random() * 7);
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

/** A small deterministic generator (mulberry32), so a failure repeats. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("compareText agrees with English collation on every pair of printable ASCII characters", () => {
  const chars = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));
  for (const a of chars) {
    for (const b of chars) {
      assert.equal(sign(compareText(a, b)), sign(collator.compare(a, b)), `${a} ${b}`);
    }
  }
});

Deno.test("compareText agrees with English collation on random strings, ids and paths", () => {
  const random = seeded(10);
  const alphabets = [
    " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcXYZ",
    "ab_-.Aa01",
    "aé-Ωz\u0301\u200b_", // outside the table: the collator decides
  ];
  for (const alphabet of alphabets) {
    for (let i = 0; i < 20_000; i++) {
      const a = randomText(alphabet, random);
      const b = randomText(alphabet, random);
      assert.equal(sign(compareText(a, b)), sign(collator.compare(a, b)), `${a} | ${b}`);
    }
  }
  const names = [
    "user.lib_050",
    "user.lib-050",
    "user.lib050",
    "User.lib_050",
    "waymark.code_review",
  ];
  for (const a of names) {
    for (const b of names) assert.equal(sign(compareText(a, b)), sign(collator.compare(a, b)));
  }
});
