/**
 * Text matching as the libSQL store's FTS5 tables (`unicode61 remove_diacritics 2`) match, for
 * the tokens that PostgreSQL's `tsvector` columns index and the snippets cut from them: case and
 * diacritics are folded, anything but letters and digits separates tokens, and each query term is
 * a phrase (`code_review` matches "code review"). Snippets mark matches with « » around a window
 * of at most 12 tokens, like FTS5's `snippet()`, without reproducing its choice of window exactly.
 * @module
 */

/** Tokens in a snippet. */
const SNIPPET_TOKENS = 12;

interface Token {
  /** The folded token. */
  text: string;
  /** Where it starts in the original text. */
  start: number;
  /** Where it ends (exclusive). */
  end: number;
}

function fold(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}\p{M}\p{Co}]+/gu)) {
    const folded = fold(m[0]);
    if (folded) tokens.push({ text: folded, start: m.index, end: m.index + m[0].length });
  }
  return tokens;
}

/** A text's tokens as the index keeps them: case and diacritics folded, in order. */
export function foldedTokens(text: string): string[] {
  return tokenize(text).map((t) => t.text);
}

/** The window of `text` around its first match of any of `terms` (each a phrase), or `null`. */
export function matchSnippet(text: string, terms: readonly string[]): string | null {
  const tokens = tokenize(text);
  const phrases = terms.map((t) => tokenize(t).map((x) => x.text)).filter((p) => p.length > 0);
  const hit = new Array<boolean>(tokens.length).fill(false);
  for (const phrase of phrases) {
    for (let i = 0; i + phrase.length <= tokens.length; i++) {
      if (!phrase.every((word, j) => tokens[i + j]!.text === word)) continue;
      for (let j = 0; j < phrase.length; j++) hit[i + j] = true;
    }
  }
  return hit.includes(true) ? snippet(text, { tokens, hit }) : null;
}

function snippet(text: string, found: { tokens: Token[]; hit: boolean[] }): string {
  const { tokens, hit } = found;
  const first = hit.indexOf(true);
  const start = Math.max(0, Math.min(first, tokens.length - SNIPPET_TOKENS));
  const end = Math.min(tokens.length, start + SNIPPET_TOKENS);
  let out = start > 0 ? "…" : "";
  let at = start > 0 ? tokens[start]!.start : 0;
  for (let i = start; i < end; i++) {
    const token = tokens[i]!;
    out += text.slice(at, token.start);
    const open = hit[i] && (i === start || !hit[i - 1]);
    const close = hit[i] && (i === end - 1 || !hit[i + 1]);
    out += `${open ? "«" : ""}${text.slice(token.start, token.end)}${close ? "»" : ""}`;
    at = token.end;
  }
  return end < tokens.length ? `${out}…` : out + text.slice(at);
}
