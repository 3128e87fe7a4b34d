/**
 * `deno task pins`: copies the exact version the import map (`tests/deno.json`'s, the tests'
 * workspace member) gives each npm package into every `npm:name@version` specifier of the
 * sources (imports, `@jsxImportSource` and `@ts-types` directives alike). The import map is where
 * a version is chosen (`deno outdated --update` edits it) and what the tests' bare imports
 * resolve through; it sits in the tests' member, not the root `deno.json`, because Deno installs
 * every package of the root's import map when anything starts, while `waymark serve` fetches only
 * what it imports (`docs/install.md`). The sources carry copies because a remote run
 * (`deno run -A <url>/main.ts`) reads no `deno.json`. The architecture test fails while a copy
 * differs or names a package the import map does not.
 * @module
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The folders and files whose specifiers are copies of the import map's versions. */
const SOURCES = [
  "engine",
  "store",
  "tools",
  "web",
  "workflows",
  "cli",
  "scripts",
  "tests",
  "main.ts",
  "mod.ts",
];

/** An `npm:name@version` specifier with an exact version: the package and the version. */
const NPM_PIN = /npm:((?:@[\w.-]+\/)?[\w.-]+)@(\d[^/"'`\s)]*)/g;

/** The file whose `imports` choose every package's version. */
export const PIN_FILE = "tests/deno.json";

/** Package name → exact version, from {@linkcode PIN_FILE}'s `imports`; a range is refused. */
export async function importMapPins(): Promise<Map<string, string>> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, PIN_FILE)));
  const pins = new Map<string, string>();
  for (const [key, target] of Object.entries(config.imports as Record<string, string>)) {
    const match = /^npm:((?:@[^/@]+\/)?[^/@]+)@([^/]+)(\/.*)?$/.exec(target);
    if (!match) continue;
    if (!/^\d+\.\d+\.\d+(?:[-+][\w.+-]*)?$/.test(match[2]!)) {
      throw new Error(`${PIN_FILE} maps ${key} to ${target}: pin an exact version`);
    }
    pins.set(match[1]!, match[2]!);
  }
  return pins;
}

/** Every TypeScript file of the sources, relative to the repository root. */
export async function sourceFiles(): Promise<string[]> {
  const out: string[] = [];
  async function walk(path: string): Promise<void> {
    const info = await Deno.stat(join(ROOT, path));
    if (info.isFile) {
      if (/\.tsx?$/.test(path)) out.push(path);
      return;
    }
    for await (const entry of Deno.readDir(join(ROOT, path))) {
      if (entry.name !== "node_modules") await walk(join(path, entry.name));
    }
  }
  for (const source of SOURCES) await walk(source);
  return out.sort();
}

/** Each pinned specifier in `text` whose package the import map pins differently, or not at all. */
export function pinProblems(text: string, pins: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [, name, version] of text.matchAll(NPM_PIN)) {
    const pinned = pins.get(name!);
    if (pinned === undefined) problems.push(`npm:${name}@${version} (not in ${PIN_FILE})`);
    else if (pinned !== version) problems.push(`npm:${name}@${version} (${PIN_FILE}: ${pinned})`);
  }
  return problems;
}

/** `text` with every pinned specifier of a package the import map pins set to its version. */
export function repin(text: string, pins: ReadonlyMap<string, string>): string {
  return text.replace(
    NPM_PIN,
    (whole, name: string) => pins.has(name) ? `npm:${name}@${pins.get(name)}` : whole,
  );
}

if (import.meta.main) {
  const pins = await importMapPins();
  let changed = 0;
  for (const file of await sourceFiles()) {
    const text = await Deno.readTextFile(join(ROOT, file));
    const updated = repin(text, pins);
    if (updated !== text) {
      await Deno.writeTextFile(join(ROOT, file), updated);
      console.error(`pins: ${relative(".", join(ROOT, file))}`);
      changed++;
    }
  }
  console.error(`pins: ${changed} file(s) updated from ${PIN_FILE}`);
}
