/**
 * Globs of review rules and named schemas, matched against `/`-separated paths relative to the
 * folder that states them: `*` and `?` stay within one path segment, `**` spans any number of
 * segments (none included), `{a,b}` picks one of its parts, `[abc]` one character. A glob is
 * anchored at both ends, so `*.py` matches only files in the folder itself and `**\/*.py` those
 * below it too. Compiled once to a regular expression without backtracking traps.
 * @module
 */

const SPECIAL = /[.+^$()|\\]/;

/** Why a glob cannot be used, or `null`. */
export function globProblem(glob: string): string | null {
  if (glob.trim() === "") return "a glob cannot be empty";
  if (glob.includes("\0")) return "a glob cannot contain a NUL character";
  if (glob.split("/").includes("..")) return "a glob cannot name `..` (it would leave its folder)";
  let depth = 0;
  for (const c of glob) {
    if (c === "{") depth++;
    if (c === "}" && --depth < 0) return "a glob has a `}` without its `{`";
  }
  if (depth !== 0) return "a glob has a `{` without its `}`";
  if (/\[[^\]]*$/.test(glob)) return "a glob has a `[` without its `]`";
  return null;
}

/** The regular expression source of one glob (see the module's documentation). */
function globSource(glob: string): string {
  let out = "";
  let braces = 0;
  const g = glob.replace(/^\.?\//, "");
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === "*" && g[i + 1] === "*") {
      const atStart = i === 0 || g[i - 1] === "/";
      const slashAfter = g[i + 2] === "/";
      if (atStart && slashAfter) {
        out += "(?:[^/]*/)*";
        i += 2;
      } else {
        out += ".*";
        i += 1;
      }
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "{") {
      braces++;
      out += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      out += ")";
    } else if (c === "," && braces > 0) out += "|";
    else if (c === "[") {
      const end = g.indexOf("]", i + 1);
      const body = g.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\");
      out += `[${body}]`;
      i = end;
    } else out += SPECIAL.test(c) ? `\\${c}` : c;
  }
  return out;
}

/** A matcher for a set of globs: whether a relative path matches any of them. */
export function globMatcher(globs: readonly string[]): (path: string) => boolean {
  if (globs.length === 0) return () => false;
  const re = new RegExp(`^(?:${globs.map(globSource).join("|")})$`);
  return (path) => re.test(path);
}
