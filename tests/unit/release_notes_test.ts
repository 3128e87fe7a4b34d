/**
 * The release's notes are its CHANGELOG.md section: `scripts/release_notes.ts` finds the section
 * of a version (with or without the tag's `v`), stops at the next one, and refuses a version the
 * changelog does not have, so a tag without notes fails its release.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { releaseNotes } from "../../scripts/release_notes.ts";
import { ROOT } from "../helpers/server.ts";

const CHANGELOG = `# Changelog

Intro.

## [Unreleased]

### Added

- later

## [0.2.0] - 2026-12-01

### Fixed

- a fix

## [0.1.0] - 2026-11-01

- first
`;

Deno.test("a version's notes are its section, up to the next", () => {
  assert.equal(releaseNotes(CHANGELOG, "v0.2.0"), "### Fixed\n\n- a fix\n");
  assert.equal(releaseNotes(CHANGELOG, "0.1.0"), "- first\n");
  assert.equal(releaseNotes(CHANGELOG, "Unreleased"), "### Added\n\n- later\n");
  assert.equal(releaseNotes(CHANGELOG, "0.3.0"), null);
  assert.equal(releaseNotes(CHANGELOG, "0.1"), null, "no prefix match");
  assert.equal(releaseNotes("## [0.4.0]\n\n## [0.3.0]\n- x\n", "0.4.0"), null, "empty");
});

Deno.test("the changelog keeps an [Unreleased] section, in Keep a Changelog's form", async () => {
  const text = await Deno.readTextFile(join(ROOT, "CHANGELOG.md"));
  assert.match(text, /^## \[Unreleased\]$/m);
  for (const heading of text.split("\n").filter((l) => l.startsWith("## "))) {
    assert.match(heading, /^## \[(Unreleased|\d+\.\d+\.\d+)\]( - \d{4}-\d{2}-\d{2})?$/);
  }
  for (const heading of text.split("\n").filter((l) => l.startsWith("### "))) {
    assert.match(heading, /^### (Added|Changed|Deprecated|Removed|Fixed|Security)$/);
  }
});

Deno.test("the script refuses a version the changelog lacks, in one line", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", "scripts/release_notes.ts", "v9.9.9"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  assert.equal(out.code, 1);
  const err = new TextDecoder().decode(out.stderr).trim().split("\n");
  assert.equal(err.length, 1);
  assert.match(err[0]!, /no section for v9\.9\.9/);
});
