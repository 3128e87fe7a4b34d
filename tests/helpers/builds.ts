/**
 * Build artifacts shared by the test files of one run: `deno task bundle`'s single file is built
 * once and each test copies it where it needs it. `deno task test` (`scripts/test.ts`) names a
 * folder for the run in `WAYMARK_TEST_BUILD_DIR`; test files running at once (`--parallel`: one
 * process, so one pid) take turns through a lock file, and the first builds. A test file run on
 * its own builds into a folder of its own.
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The environment variable naming the run's build folder. */
export const BUILD_DIR_ENV = "WAYMARK_TEST_BUILD_DIR";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** A lock older than this is a crashed builder's: taken over. */
const STALE_LOCK_MS = 10 * 60_000;

let ownDir: Promise<string> | undefined;

async function buildDir(): Promise<string> {
  const shared = Deno.env.get(BUILD_DIR_ENV);
  if (shared) return shared;
  return await (ownDir ??= Deno.makeTempDir({ prefix: "waymark-test-builds-" }));
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** Takes `lock` (exclusive create), waiting while another builder holds it. */
async function lock(path: string): Promise<() => Promise<void>> {
  for (;;) {
    try {
      (await Deno.open(path, { createNew: true, write: true })).close();
      return () => Deno.remove(path).catch(() => {});
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      const age = await Deno.stat(path).then(
        (s) => Date.now() - (s.mtime?.getTime() ?? 0),
        () => 0,
      );
      if (age > STALE_LOCK_MS) await Deno.remove(path).catch(() => {});
      else await new Promise((wake) => setTimeout(wake, 250));
    }
  }
}

/**
 * The artifact `name` in the run's build folder, built by `build(path)` the first time any test
 * file of the run asks for it. Callers copy it rather than change it.
 */
export async function sharedBuild(
  name: string,
  build: (path: string) => Promise<void>,
): Promise<string> {
  const dir = await buildDir();
  const path = join(dir, name);
  if (await exists(path)) return path;
  const release = await lock(`${path}.lock`);
  try {
    if (await exists(path)) return path;
    const partial = `${path}.partial`;
    await build(partial);
    await Deno.rename(partial, path);
    return path;
  } finally {
    await release();
  }
}

/** `deno task bundle`'s single file (`waymark.js`), built once for the run. */
export function builtBundle(): Promise<string> {
  return sharedBuild("waymark.js", async (path) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "bundle", path],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    if (!out.success) {
      throw new Error(`deno task bundle failed:\n${new TextDecoder().decode(out.stderr)}`);
    }
  });
}
