/**
 * The database a test home starts from: what a home's first start leaves (the schema migrated,
 * the bundled workflows compiled into its cache), made once per run by waymark's own commands
 * (`workflows list` on a new home; on libSQL, `backup` then makes it one consistent file) and
 * copied into each new home (on PostgreSQL, cloned with `CREATE DATABASE … TEMPLATE`). A first
 * start costs a process about 0.09 s of CPU (a `serve`'s start and first listing 0.39 → 0.30 s),
 * and a run makes some 330 homes. Tests whose subject is the first start take a blank home
 * (`tempHome({ blank: true })`): creating the schema while killed or raced, refusing to create
 * anything, migrating an older database, the start-up rehearsal on nothing compiled.
 * @module
 */
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { sharedBuild } from "./builds.ts";
import { freshPostgresUrl, sharedPostgres } from "./postgres.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

/** Runs `waymark ARGS`; throws with its stderr when it fails. */
async function waymark(args: string[]): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1", WAYMARK_SNAPSHOTS: "0" },
  }).output();
  if (!out.success) {
    throw new Error(`waymark ${args.join(" ")} failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
}

/** A new home, started once (`workflows list` opens its database and lists every workflow). */
async function startedHome(dbArgs: string[] = []): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "waymark-test-template-" });
  await waymark(["workflows", "list", "--home", home, ...dbArgs]);
  return home;
}

/** The libSQL file a new home starts from, made once for the run. */
export function libsqlHomeTemplate(): Promise<string> {
  return sharedBuild("home.db", async (path) => {
    const home = await startedHome();
    try {
      await waymark(["backup", path, "--home", home]);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
    // the backup's integrity check leaves an empty log and index beside it
    for (const suffix of ["-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
  });
}

/** The database on this process's test server that a new home's database is cloned from. */
export async function postgresHomeTemplate(): Promise<string> {
  const server = await sharedPostgres();
  const named = await sharedBuild(`home-${basename(server.dir)}.name`, async (path) => {
    const url = await freshPostgresUrl();
    await Deno.remove(await startedHome(["--db", url]), { recursive: true });
    await Deno.writeTextFile(path, url.slice(url.lastIndexOf("/") + 1).split("?")[0]!);
  });
  return await Deno.readTextFile(named);
}
