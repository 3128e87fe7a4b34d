/**
 * `deno task pins`: copies the exact version the import maps give each npm package into every
 * `npm:name@version` specifier of the sources (imports, `@jsxImportSource` and `@ts-types`
 * directives alike). A version is chosen in one of two files. `tests/deno.json`'s import map (the
 * tests' workspace member; `deno outdated --update` edits it) holds the packages waymark itself
 * runs on, which the bundle carries; it sits in the tests' member, not the root `deno.json`,
 * because Deno installs every package of the root's import map when anything starts, while
 * `waymark serve` fetches only what it imports (`docs/install.md`). `tests/test_packages.json`
 * holds the packages only tests and the type check use (the MCP clients, playwright-core,
 * `@types/pg`): `deno task` installs every package of the workspace's import maps before any
 * task runs, and `deno task compile` must need nothing the bundle does not. Tests import those
 * by pinned specifier. The sources carry copies because a remote run (`deno run -A
 * <url>/main.ts`) reads no `deno.json`. The architecture test fails while a copy differs or
 * names a package neither file pins.
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

/** The files whose `imports` choose every package's version: waymark's own, then tests' only. */
export const PIN_FILES = ["tests/deno.json", "tests/test_packages.json"] as const;

/** The pin files, named in messages. */
export const PIN_FILE = PIN_FILES.join(" or ");

/** Package name → exact version, from {@linkcode PIN_FILES}' `imports`; a range is refused. */
export async function importMapPins(): Promise<Map<string, string>> {
  const pins = new Map<string, string>();
  for (const file of PIN_FILES) {
    const config = JSON.parse(await Deno.readTextFile(join(ROOT, file)));
    for (const [key, target] of Object.entries(config.imports as Record<string, string>)) {
      const match = /^npm:((?:@[^/@]+\/)?[^/@]+)@([^/]+)(\/.*)?$/.exec(target);
      if (!match) continue;
      if (!/^\d+\.\d+\.\d+(?:[-+][\w.+-]*)?$/.test(match[2]!)) {
        throw new Error(`${file} maps ${key} to ${target}: pin an exact version`);
      }
      if ((pins.get(match[1]!) ?? match[2]) !== match[2]) {
        throw new Error(`${match[1]} is pinned at two versions (${PIN_FILE})`);
      }
      pins.set(match[1]!, match[2]!);
    }
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
