/**
 * Which test files `deno task test` runs in a shared worker. Each worker of `deno test` loads
 * its modules afresh (the runner keeps no V8 code cache) and warms its own JIT, so a test file
 * that drives waymark in-process pays about half a second before its first test; files that
 * share a worker pay it once (Vitest's `isolate: false` makes the same trade). A group is a
 * module that imports its files, so their tests run one file after another in one worker and
 * Deno's JUnit report still names each test's own file. A file that flips a switch for its
 * whole worker (`serveAsProcesses()`, `testOnPostgres()`) shares only with files that flip the
 * same. See docs/testing.md.
 * @module
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Calls that switch a file's whole worker. */
const WORKER_SWITCH = /^\s*(serveAsProcesses|testOnPostgres)\(/gm;

/** The worker-wide switches `source` flips, as one key: files share a worker only with files
 * that flip the same ones. */
function switches(source: string): string {
  return [...new Set([...source.matchAll(WORKER_SWITCH)].map((m) => m[1]!))].sort().join(",");
}

/**
 * At most this many files share a worker, by folder: enough that a group's loading is paid
 * once for several files, few enough that the groups keep four workers busy to the end. Files
 * in other folders (the real hosts, the PostgreSQL reruns) each run alone.
 */
const GROUP_SIZE: readonly [folder: string, size: number][] = [
  ["tests/browser/", 3],
  ["tests/integration/", 6],
  ["tests/store/", 10],
  ["tests/unit/", 25],
];

/** A test file and its source. */
export interface TestFile {
  /** The path `deno test` takes, relative to the repository. */
  path: string;
  /** Its text, read for worker-wide switches. */
  source: string;
}

/**
 * `files` (in the order they should start) as units of work: a file alone, or a group of files
 * from one folder sharing a worker. Each unit takes the place of its first file.
 */
export function groups(
  files: readonly TestFile[],
  options: { sizes?: readonly [folder: string, size: number][] } = {},
): string[][] {
  const sizes = options.sizes ?? GROUP_SIZE;
  const units: string[][] = [];
  const open = new Map<string, string[]>();
  for (const file of files) {
    const size = sizes.find(([dir]) => file.path.startsWith(dir));
    if (!size) {
      units.push([file.path]);
      continue;
    }
    const key = `${size[0]} ${switches(file.source)}`;
    let group = open.get(key);
    if (!group || group.length >= size[1]) {
      group = [];
      open.set(key, group);
      units.push(group);
    }
    group.push(file.path);
  }
  return units;
}

/** A group's module name, which Deno prints for its tests: its folder and first and last files. */
export function groupName(unit: readonly string[], index: number): string {
  const name = (file: string) => file.split("/").at(-1)!.replace(/_test\.\w+$/, "");
  const folder = unit[0]!.split("/").at(-2);
  return `${String(index).padStart(2, "0")}_${folder}_${name(unit[0]!)}..${
    name(unit.at(-1)!)
  }_test.ts`;
}

/**
 * Writes each group of `units` as a module in `dir` that imports its files; returns what to hand
 * `deno test`: a file alone as its path, a group as its module's path.
 */
export async function writeGroups(
  units: readonly string[][],
  at: { root: string; dir: string },
): Promise<string[]> {
  const out: string[] = [];
  for (const [i, unit] of units.entries()) {
    if (unit.length === 1) {
      out.push(unit[0]!);
      continue;
    }
    const path = join(at.dir, groupName(unit, i));
    const imports = unit.map((file) =>
      `import ${JSON.stringify(pathToFileURL(join(at.root, file)).href)};\n`
    );
    await Deno.writeTextFile(
      path,
      `// ${unit.length} test files in one worker\n${imports.join("")}`,
    );
    out.push(path);
  }
  return out;
}
