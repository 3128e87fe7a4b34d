/**
 * `deno run -A scripts/release_notes.ts VERSION [CHANGELOG]`: prints the section of
 * `CHANGELOG.md` (Keep a Changelog) for VERSION (`0.2.0` or `v0.2.0`), without its heading, for
 * the release workflow to attach as the release's notes. Exits 1 with one line when the
 * changelog has no such section or it is empty, so no release goes out without its notes.
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The body of `## [version]` in `changelog` (up to the next `## ` heading), or `null`. */
export function releaseNotes(changelog: string, version: string): string | null {
  const wanted = version.replace(/^v/, "");
  const lines = changelog.split("\n");
  const start = lines.findIndex((line) =>
    line.startsWith("## [") && line.slice(4, line.indexOf("]")) === wanted
  );
  if (start < 0) return null;
  const end = lines.findIndex((line, i) => i > start && line.startsWith("## "));
  const body = lines.slice(start + 1, end < 0 ? undefined : end).join("\n").trim();
  return body === "" ? null : `${body}\n`;
}

if (import.meta.main) {
  const [version, file = join(ROOT, "CHANGELOG.md")] = Deno.args;
  if (!version) {
    console.error("release_notes: usage: release_notes.ts VERSION [CHANGELOG]");
    Deno.exit(2);
  }
  const notes = releaseNotes(await Deno.readTextFile(file), version);
  if (notes === null) {
    console.error(
      `release_notes: ${file} has no section for ${version}: rename [Unreleased] to [${
        version.replace(/^v/, "")
      }] - date`,
    );
    Deno.exit(1);
  }
  await Deno.stdout.write(new TextEncoder().encode(notes));
}
