/**
 * A schema issue's path as people read it (`steps[2].prompt`): one definition for every
 * message that points into a file. Imports nothing, so light readers (the keyring) can use it.
 * @module
 */

/** A path into a document as text: keys joined by dots, indexes in brackets. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${String(part)}`;
  }
  return out;
}
