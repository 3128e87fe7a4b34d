/**
 * A throwaway PostgreSQL server for tests, from Debian's `postgresql` package: `initdb` into a
 * temporary directory, `pg_ctl` serving on a Unix socket inside it (no TCP port), stopped and
 * removed at the end. `initdb` refuses to run as root, and CI runs as root: then the server runs
 * as the package's `postgres` user (through `runuser`), owning the directory. Never a mock.
 *
 * One server per test process, started on first use; each test takes a fresh database in it.
 * `WAYMARK_TEST_PG_DIR` names a server another process started (`deno task test` starts one for
 * the whole run, `scripts/test.ts`), which this process then uses and leaves running.
 *
 * The store matrix: the suites that drive servers and CLI commands run on libSQL files, and again
 * on PostgreSQL when a file in `tests/postgres/` calls {@linkcode testOnPostgres} before it
 * imports them (each file in `tests/postgres/` has a worker of its own, so the switch reaches
 * only the suites that file imports), or when `WAYMARK_TEST_DB=postgres` is set.
 * @module
 */
import { existsSync, readdirSync } from "node:fs";

/** The environment variable naming a running test server's directory. */
export const PG_DIR_ENV = "WAYMARK_TEST_PG_DIR";
/** The environment variable that runs the server-driving test suites on PostgreSQL. */
export const TEST_DB_ENV = "WAYMARK_TEST_DB";

/** A running test server. */
export interface PostgresServer {
  /** Its directory: data in `data/`, the socket beside it. */
  readonly dir: string;
  /** The URL of a database on it. */
  url(database: string): string;
  /**
   * Creates a fresh database and returns its URL: empty, or a copy of the database `template`
   * (which nothing may be connected to meanwhile).
   */
  createDatabase(options?: { template?: string }): Promise<string>;
  /** Stops the server and removes its directory (a no-op on a server this process did not start). */
  stop(): Promise<void>;
}

/** A server this process started, which it may also take down and bring back. */
export interface OwnedPostgresServer extends PostgresServer {
  /** Shuts the server down (`fast`: open connections are cut), keeping its data. */
  down(): Promise<void>;
  /** Starts it again on the same directory. */
  up(): Promise<void>;
  /**
   * Kills the server with SIGKILL, the postmaster and every process of it at once (as a crash
   * would); `up` then starts it with crash recovery.
   */
  crash(): Promise<void>;
}

/** The postmaster of the data directory `data` and its children, by pid. */
function serverPids(data: string): number[] {
  let master: number;
  try {
    master = Number(Deno.readTextFileSync(`${data}/postmaster.pid`).split("\n")[0]);
  } catch {
    return [];
  }
  const pids = [master];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === master) {
        pids.push(Number(entry.name));
      }
    } catch { /* gone */ }
  }
  return pids;
}

/** Whether `pid` still runs (a zombie waiting to be reaped does not). */
function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** The newest installed PostgreSQL's `bin` directory, or `null`. */
export function postgresBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(`${root}/${v}/bin/initdb`))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? `${root}/${versions[0]}/bin` : null;
}

let onPostgres = false;

/** Whether the server-driving suites were asked to run on PostgreSQL. */
export function testingOnPostgres(): boolean {
  return onPostgres || Deno.env.get(TEST_DB_ENV) === "postgres";
}

/**
 * Whether this machine can run the PostgreSQL side of the store matrix: a server is installed,
 * or CI (which installs one, so a missing server fails there instead of being skipped).
 */
export function postgresTestable(): boolean {
  const can = postgresBin() !== null || Boolean(Deno.env.get("CI"));
  if (!can) console.error("skipping the PostgreSQL tests: apt-get install postgresql");
  return can;
}

/**
 * Makes the suites this test file imports from now on run on PostgreSQL: every home from
 * `tempHome` gets a fresh database on the shared server. Call it before a dynamic `import()`.
 */
export function testOnPostgres(): void {
  onPostgres = true;
}

const asRoot = () => Deno.uid() === 0;

/** The command line, run as `postgres` when this process is root. */
function command(bin: string, args: string[]): [string, string[]] {
  return asRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

async function run(bin: string, args: string[]): Promise<string> {
  const [cmd, argv] = command(bin, args);
  const out = await new Deno.Command(cmd, { args: argv, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${bin} ${args.join(" ")} failed:\n${text}`);
  return text;
}

async function ownedByPostgres(dir: string): Promise<void> {
  if (!asRoot()) return;
  const id = (flag: string) =>
    Number(
      new TextDecoder().decode(
        new Deno.Command("id", { args: [flag, "postgres"], stdout: "piped" }).outputSync().stdout,
      ).trim(),
    );
  await Deno.chown(dir, id("-u"), id("-g"));
}

function serverAt(dir: string, stop: () => Promise<void>): PostgresServer {
  const url = (database: string) =>
    `postgres://postgres@/${database}?host=${encodeURIComponent(dir)}`;
  return {
    dir,
    url,
    async createDatabase(options = {}) {
      const name = `wm_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
      // loaded here: most test files import this module and never make a database
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url("postgres") });
      await client.connect();
      try {
        const template = options.template ?? "template0";
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${template} ENCODING 'UTF8'`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop,
  };
}

/**
 * Starts a server in a new temporary directory. `durable` keeps PostgreSQL's default
 * durability (for benchmarks); tests turn off `fsync`, since nothing here survives a reboot.
 * `settings` are more `name=value` server settings.
 */
export async function startPostgres(
  options: { durable?: boolean; settings?: string[] } = {},
): Promise<OwnedPostgresServer> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed (Debian: apt-get install postgresql)");
  const dir = await Deno.makeTempDir({ prefix: "waymark-pg-" });
  await ownedByPostgres(dir);
  const data = `${dir}/data`;
  await run(`${bin}/initdb`, [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "--encoding=UTF8",
    "--locale=C.UTF-8",
    "--no-sync",
  ]);
  const settings = [
    `-k ${dir}`,
    "-c listen_addresses=''",
    "-c max_connections=200",
    ...(options.durable ? [] : ["-c fsync=off", "-c full_page_writes=off"]),
    ...(options.settings ?? []).map((setting) => `-c ${setting}`),
  ];
  const ctl = (...args: string[]) => run(`${bin}/pg_ctl`, ["-D", data, ...args]);
  const up = () => ctl("-o", settings.join(" "), "-l", `${dir}/log`, "-w", "start");
  await up();
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    const [cmd, argv] = command(`${bin}/pg_ctl`, ["-D", data, "-m", "immediate", "stop"]);
    new Deno.Command(cmd, { args: argv, stdout: "null", stderr: "null" }).outputSync();
    Deno.removeSync(dir, { recursive: true });
  };
  globalThis.addEventListener("unload", stopSync);
  const server = serverAt(dir, () => {
    globalThis.removeEventListener("unload", stopSync);
    stopSync();
    return Promise.resolve();
  });
  return {
    ...server,
    async down() {
      await ctl("-m", "fast", "-w", "stop");
    },
    async up() {
      await up();
    },
    async crash() {
      const pids = serverPids(data);
      for (const pid of pids) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* already gone */ }
      }
      while (pids.some(alive)) await new Promise((r) => setTimeout(r, 20));
      // where nothing reaps orphans (a container's init), the dead postmaster stays a zombie
      // whose pid still answers kill(0): its lock file would then keep a new one from starting
      await Deno.remove(`${data}/postmaster.pid`).catch(() => {});
      await Deno.remove(`${dir}/.s.PGSQL.5432.lock`).catch(() => {});
    },
  };
}

let shared: Promise<PostgresServer> | null = null;

/**
 * This process's test server: the one `WAYMARK_TEST_PG_DIR` names, else one started on first use
 * and stopped when the process ends.
 */
export function sharedPostgres(): Promise<PostgresServer> {
  const dir = Deno.env.get(PG_DIR_ENV);
  shared ??= dir ? Promise.resolve(serverAt(dir, () => Promise.resolve())) : startPostgres();
  return shared;
}

/** A fresh database on this process's test server: empty, or a copy of `template`. */
export async function freshPostgresUrl(options: { template?: string } = {}): Promise<string> {
  return await (await sharedPostgres()).createDatabase(options);
}
