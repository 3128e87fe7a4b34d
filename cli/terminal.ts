/**
 * Everything the `waymark` command prints goes through {@linkcode terminalText}: titles, notes,
 * paths and messages can come from an agent or an imported bundle, and a control character in
 * them (`ESC]0;…` retitles the window, `ESC[2J` clears it, `\r` overwrites a line) would act on
 * the reader's terminal instead of being shown. Imports nothing, so `main.ts` can use it without
 * loading the rest of waymark.
 * @module
 */
import process from "node:process";

/**
 * Characters a terminal acts on: C0 controls except tab and newline, DEL, C1 controls, and the
 * bidirectional overrides and isolates that reorder what is shown.
 */
// deno-lint-ignore no-control-regex
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every character a terminal would act on written as a `\uXXXX` escape. Such a
 * character can only appear inside a JSON string (JSON.stringify escapes the rest), where the
 * escape means the same character, so JSON output stays valid and parses to the same value.
 */
export function terminalText(text: string): string {
  return text.replace(ACTIVE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Writes `text` to stdout, escaped with {@linkcode terminalText}. */
export function printOut(text: string): void {
  process.stdout.write(terminalText(text));
}

/** Writes `text` to stderr, escaped with {@linkcode terminalText}. */
export function printErr(text: string): void {
  process.stderr.write(terminalText(text));
}
