/**
 * The database a test home starts from: a new home's database once waymark has created it (the
 * schema at its current version, no session data), made once per run by waymark's own commands
 * (`sessions list` on a new home, which migrates its database and writes nothing else; on libSQL,
 * `backup` then makes it one consistent file) and copied into each new home (on PostgreSQL,
 * cloned with `CREATE DATABASE … TEMPLATE`). Creating the schema costs a `serve`'s start and first
 * call about 18 ms of CPU on libSQL (0.393 → 0.375 s, means of eight, interleaved) and PostgreSQL's
 * server about 33 ms (77 → 44 ms to make a database and open it once), and a run makes some 330
 * homes. Tests whose subject is the first start take a blank home (`tempHome({ blank: true })`):
 * creating the schema while killed or raced, refusing to create anything, migrating an older
 * database, a client calling before a first start has opened the database.
 * @module
 */
import { basename } from "node:path";
import { sharedBuild } from "./builds.ts";
import { freshPostgresUrl, sharedPostgres } from "./postgres.ts";
import { MAIN, runWithInput } from "./process.ts";

/** Runs `waymark ARGS`; throws with its stderr when it fails. */
async function waymark(args: string[]): Promise<void> {
  const env = { NO_COLOR: "1", WAYMARK_SNAPSHOTS: "0" };
  const ran = await runWithInput(Deno.execPath(), ["run", "-A", "--quiet", MAIN, ...args], { env });
  if (ran.code !== 0) throw new Error(`waymark ${args.join(" ")} failed:\n${ran.stderr}`);
}

/** A new home whose database waymark has created (`sessions list` opens it, reads nothing). */
async function createdHome(dbArgs: string[] = []): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "waymark-test-template-" });
  await waymark(["sessions", "list", "--home", home, ...dbArgs]);
  return home;
}

let libsqlTemplate: Promise<string> | undefined;
let postgresTemplate: Promise<string> | undefined;

/** The libSQL file a new home starts from, made once for the run. */
export function libsqlHomeTemplate(): Promise<string> {
  return libsqlTemplate ??= sharedBuild("home.db", async (path) => {
    const home = await createdHome();
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
export function postgresHomeTemplate(): Promise<string> {
  return postgresTemplate ??= (async () => {
    const server = await sharedPostgres();
    const named = await sharedBuild(`home-${basename(server.dir)}.name`, async (path) => {
      const url = await freshPostgresUrl();
      await Deno.remove(await createdHome(["--db", url]), { recursive: true });
      await Deno.writeTextFile(path, url.slice(url.lastIndexOf("/") + 1).split("?")[0]!);
    });
    return await Deno.readTextFile(named);
  })();
}
