/**
 * Text matching as the libSQL store's FTS5 tables (`unicode61 remove_diacritics 2`) match, for
 * the tokens that PostgreSQL's `tsvector` columns index and the snippets cut from them: case and diacritics are folded, anything but
 * letters and digits separates tokens, and each query term is a phrase (`code_review` matches
 * "code review"). Relevance is not bm25: it is minus the number of phrase matches, so more
 * matches rank first (lower is better, as with bm25) and ties keep insertion order. Snippets
 * mark matches with « » around a window of at most 12 tokens, like FTS5's `snippet()`, without
 * reproducing its choice of window exactly.
 * @module
 */

/** Characters of an artifact preview in the search index. */
const ARTIFACT_PREVIEW_CHARS = 600;
/** Characters of a notes preview in search results and the session resource. */
const PREVIEW_CHARS = 160;
/** Tokens in a snippet. */
const SNIPPET_TOKENS = 12;

/** The indexed text of an output: its notes and a small preview of its artifacts. */
export function searchText(notes: string | null, artifacts: readonly unknown[]): string {
  const preview = artifacts.length > 0
    ? JSON.stringify(artifacts).slice(0, ARTIFACT_PREVIEW_CHARS)
    : "";
  return [notes ?? "", preview].filter(Boolean).join("\n");
}

/** A text flattened to one line and cut to a preview. */
export function preview(text: string | null): string | null {
  if (text === null) return null;
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 1)}…` : flat;
}

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

/** A text's match against query terms: the count of phrase matches and a snippet. */
export interface TextMatch {
  /** Minus the number of phrase matches (lower is better); 0 never reaches a caller. */
  relevance: number;
  /** The matched window with « » around matched tokens. */
  snippet: string;
}

/** How `text` matches any of `terms`, each a phrase, or `null` when none matches. */
export function matchText(text: string, terms: readonly string[]): TextMatch | null {
  const tokens = tokenize(text);
  const phrases = terms.map((t) => tokenize(t).map((x) => x.text)).filter((p) => p.length > 0);
  const hit = new Array<boolean>(tokens.length).fill(false);
  let count = 0;
  for (const phrase of phrases) {
    for (let i = 0; i + phrase.length <= tokens.length; i++) {
      if (!phrase.every((word, j) => tokens[i + j]!.text === word)) continue;
      count++;
      for (let j = 0; j < phrase.length; j++) hit[i + j] = true;
    }
  }
  if (count === 0) return null;
  return { relevance: -count, snippet: snippet(text, { tokens, hit }) };
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
