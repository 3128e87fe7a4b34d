/**
 * Plain-text helpers the pages share: times, ages, hashes, bounded JSON, colour classes, and the
 * escaping used where SVG is built as a string.
 * @module
 */

/** Most characters of a JSON value printed inline. */
const MAX_JSON_CHARS = 20_000;

/** `2025-01-02 03:04:05Z` from an ISO time. */
export function fmtTime(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
}

/** `03:04:05` from an ISO time (the time of day only; the input when it has none). */
export function fmtClock(iso: string): string {
  const m = /T(\d\d:\d\d:\d\d)/.exec(iso);
  return m ? m[1]! : iso;
}

/** "3 min ago" style age. */
export function fmtAge(iso: string, now: Date): string {
  const ms = now.getTime() - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.round(h / 24)} days ago`;
}

/** The first 12 hex digits of a `sha256:` hash. */
export function shortHash(hash: string): string {
  return hash.replace(/^sha256:/, "").slice(0, 12);
}

/** Indented JSON, cut after {@linkcode MAX_JSON_CHARS} characters with a note of how many more. */
export function json(value: unknown): string {
  const text = JSON.stringify(value, null, 2) ?? "null";
  return text.length > MAX_JSON_CHARS
    ? `${text.slice(0, MAX_JSON_CHARS)}\n… (${text.length - MAX_JSON_CHARS} more characters)`
    : text;
}

/** The first non-empty line of Markdown without its leading markup, cut to `max` characters. */
export function firstLine(text: string | null, max = 120): string {
  if (!text) return "";
  const line = text.split("\n").map((l) => l.replace(/^[#>*\-\s]+/, "").trim()).find((l) => l) ??
    "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Colour class of a branch or run index: `c0` for the first, then `c1`…`c7` in turn. */
export function colorClass(index: number): string {
  return `c${index === 0 ? 0 : 1 + (index - 1) % 7}`;
}

/** Escapes text for HTML and attribute values (for SVG built as a string). */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `"s"` unless `count` is 1 (`"run" + plural(n)`). */
export function plural(count: number, suffix = "s"): string {
  return count === 1 ? "" : suffix;
}
