/**
 * `deno task bench --db postgres`: the bench on a throwaway local PostgreSQL server (Debian's
 * package, started by `tests/helpers/postgres.ts`) over a Unix socket. It keeps `fsync` on and
 * lets commits return before their log is flushed (`synchronous_commit=off`), the durability
 * the embedded file has by default (SQLite's WAL with `synchronous=NORMAL`): a crashed
 * process loses nothing, a crashed machine may lose the last moments. The bench writes hours of
 * agent work in seconds, so autovacuum runs every second (instead of every minute) to keep the
 * planner's statistics and the updated rows' old versions as current as agent speed would.
 * Its data sits on an SSD and in memory, so the planner is told that a random page costs about
 * what a sequential one does (`random_page_cost=1.1`, the usual setting for SSDs, instead of the
 * default 4 for spinning disks): with 4, a rehydrate of a 10,000-step run scanned all of the
 * run's outputs instead of looking up the 64 it shows (1.9 ms against 1.5).
 * Every waymark the bench starts uses one database on it, through `WAYMARK_DB_URL`.
 * @module
 */
import { type OwnedPostgresServer, startPostgres } from "../helpers/postgres.ts";

/** The bench's server settings (see the module's note), plus `more`. */
export function startBenchPostgres(more: string[] = []): Promise<OwnedPostgresServer> {
  return startPostgres({
    durable: true,
    settings: [
      "synchronous_commit=off",
      "autovacuum_naptime=1",
      "autovacuum_analyze_scale_factor=0.02",
      "autovacuum_vacuum_scale_factor=0.02",
      "random_page_cost=1.1",
      ...more,
    ],
  });
}

/** The database the bench runs on: `libsql` (the default file per home) or `postgres`. */
export async function benchDatabase(
  db: string | undefined,
): Promise<{ label: string; pgDir?: string; stop(): Promise<void> }> {
  if (db === undefined || db === "libsql") {
    return {
      label: "libsql",
      stop: () => Promise.resolve(),
    };
  }
  if (db !== "postgres") throw new Error("--db must be libsql or postgres");
  const server = await startBenchPostgres();
  Deno.env.set("WAYMARK_DB_URL", await server.createDatabase());
  return { label: "postgres", pgDir: server.dir, stop: () => server.stop() };
}
