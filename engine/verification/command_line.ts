/**
 * Command lines without a shell: a quote-aware splitter that turns `deno test -A "a b"` into
 * argv and refuses everything only a shell would give meaning to (pipes, redirections,
 * `$vars`, globs, backticks, `;`, `&&`), instead of passing it on literally; the quoting that
 * shows argv back as one line; and the allowlist patterns of `verification` in the user's
 * config, matched token by token. Pure.
 *
 * Splitting: blanks (space, tab) separate words outside quotes; `'…'` is literal; `"…"` is
 * literal except `\"` and `\\`, and refuses `$` and backticks (a shell would expand them
 * there); a backslash outside quotes makes the next character literal. Refused outside quotes:
 * `| & ; < > ( ) $ \` * ? [ ] { }`, a word starting with `~` or `#`, a first word that assigns a
 * variable (`FOO=1 cmd`), and any line break. Quote a character to pass it literally.
 * @module
 */

/** A command line split into argv, or why it cannot be run without a shell. */
export type Split = { ok: true; argv: string[] } | Refusal;

/** Why a command line cannot be run without a shell. */
export interface Refusal {
  /** Not ok. */
  ok: false;
  /** What is wrong, and what to write instead. */
  message: string;
}

/** The unquoted characters a shell would act on, with what they mean there. */
const SHELL_ONLY: Readonly<Record<string, string>> = {
  "|": "a pipe",
  "&": "a background or `&&` list",
  ";": "a command separator",
  "<": "a redirection",
  ">": "a redirection",
  "(": "a subshell",
  ")": "a subshell",
  "$": "a variable or command substitution",
  "`": "a command substitution",
  "*": "a glob",
  "?": "a glob",
  "[": "a glob",
  "]": "a glob",
  "{": "a brace expansion",
  "}": "a brace expansion",
};

function refusal(ch: string, what: string): Refusal {
  return {
    ok: false,
    message:
      `\`${ch}\` is shell syntax (${what}), and waymark runs commands without a shell: put the shell part in a script and run that, or quote the character to pass it literally`,
  };
}

interface Word {
  text: string;
  /** Whether any part of it was quoted or escaped. */
  quoted: boolean;
}

/** Splits into words; `wildcard` lets a bare unquoted `*` word through (allowlist patterns). */
function words(line: string, wildcard: boolean): { ok: true; words: Word[] } | Refusal {
  const out: Word[] = [];
  let word: Word | null = null;
  const add = (ch: string, quoted: boolean) => {
    word ??= { text: "", quoted: false };
    word.text += ch;
    if (quoted) word.quoted = true;
  };
  const chars = [...line];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === "\n" || ch === "\r") return { ok: false, message: "a command is one line" };
    if (ch === "\u0000") return { ok: false, message: "a command has no NUL character" };
    if (ch === " " || ch === "\t") {
      if (word) out.push(word);
      word = null;
      continue;
    }
    if (ch === "'") {
      const end = chars.indexOf("'", i + 1);
      if (end < 0) return { ok: false, message: "a `'` quote is not closed" };
      add(chars.slice(i + 1, end).join(""), true);
      i = end;
      continue;
    }
    if (ch === '"') {
      let j = i + 1;
      let text = "";
      for (; j < chars.length && chars[j] !== '"'; j++) {
        const c = chars[j]!;
        if (c === "$" || c === "`") {
          return {
            ok: false,
            message:
              `\`${c}\` inside double quotes would be expanded by a shell; waymark expands nothing: use single quotes to pass it literally`,
          };
        }
        if (c === "\\" && (chars[j + 1] === '"' || chars[j + 1] === "\\")) j++;
        text += chars[j];
      }
      if (j >= chars.length) return { ok: false, message: 'a `"` quote is not closed' };
      add(text, true);
      i = j;
      continue;
    }
    if (ch === "\\") {
      if (i + 1 >= chars.length) return { ok: false, message: "a command ends with a lone `\\`" };
      add(chars[++i]!, true);
      continue;
    }
    const starts = word === null;
    if (starts && (ch === "~" || ch === "#")) {
      return refusal(ch, ch === "~" ? "a home-folder expansion" : "a comment");
    }
    if (
      ch === "*" && wildcard && starts && (i + 1 === chars.length || /[ \t]/.test(chars[i + 1]!))
    ) {
      add(ch, false);
      continue;
    }
    const what = SHELL_ONLY[ch];
    if (what) return refusal(ch, what);
    add(ch, false);
  }
  if (word) out.push(word);
  return { ok: true, words: out };
}

/** Splits a command line into argv, without expanding anything (see the module's rules). */
export function splitCommandLine(line: string): Split {
  const split = words(line, false);
  if (!split.ok) return split;
  const first = split.words[0];
  if (!first) return { ok: false, message: "the command is empty" };
  if (!first.quoted && /^[A-Za-z_][A-Za-z0-9_]*=/.test(first.text)) {
    return {
      ok: false,
      message:
        "a leading `NAME=value` sets a variable in a shell; waymark passes only the environment the user's config lists",
    };
  }
  return { ok: true, argv: split.words.map((w) => w.text) };
}

/** A word a shell would not take as one literal word without quotes. */
const NEEDS_QUOTES = /[^A-Za-z0-9_@%+=:,./-]/;

/** Argv as one line that {@linkcode splitCommandLine} splits back into the same argv. */
export function formatCommandLine(argv: readonly string[]): string {
  return argv.map((a) =>
    a !== "" && !NEEDS_QUOTES.test(a) && !/^[~#]/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`
  ).join(" ");
}

/** An allowlist pattern: words that must equal argv's, then (with `rest`) any further words. */
export interface CommandPattern {
  /** The pattern as written. */
  source: string;
  /** Words argv must start with, each equal. */
  words: string[];
  /** Whether the pattern ended with `*`: any further words (none included) are allowed. */
  rest: boolean;
}

/**
 * Parses an allowlist pattern: a command line whose last word may be a bare `*` (any further
 * words, or none). A `*` anywhere else, or inside a word, is refused; quote it (`'*'`) for a
 * literal star word.
 */
export function parseCommandPattern(
  source: string,
): { ok: true; pattern: CommandPattern } | Refusal {
  const split = words(source, true);
  if (!split.ok) return split;
  const all = split.words;
  const stars = all.flatMap((w, i) => (!w.quoted && w.text === "*" ? [i] : []));
  if (stars.some((i) => i !== all.length - 1)) {
    return { ok: false, message: "`*` may only be the last word of a pattern" };
  }
  const rest = stars.length === 1;
  const fixed = (rest ? all.slice(0, -1) : all).map((w) => w.text);
  if (fixed.length === 0) {
    return { ok: false, message: "a pattern names its program (a bare `*` would allow anything)" };
  }
  return { ok: true, pattern: { source, words: fixed, rest } };
}

/**
 * Whether argv matches a pattern: every pattern word equals the argv word at its position, and
 * argv has no further words unless the pattern ends with `*`.
 */
export function matchesPattern(pattern: CommandPattern, argv: readonly string[]): boolean {
  if (argv.length < pattern.words.length) return false;
  if (!pattern.rest && argv.length !== pattern.words.length) return false;
  return pattern.words.every((w, i) => argv[i] === w);
}
