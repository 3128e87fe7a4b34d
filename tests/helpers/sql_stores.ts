/**
 * Fresh SQL stores by dialect, for store tests that run on both: libSQL on a file in a
 * throwaway folder, and PostgreSQL on this process's throwaway server, left out only where no
 * server is installed (never on CI, which installs it).
 * @module
 */
import { join } from "node:path";
import { type OpenedSqlStore, openStore } from "../../store/mod.ts";
import { freshPostgresUrl, postgresBin } from "./postgres.ts";

type Target = () => Promise<{ url: string; cleanup(): Promise<void> }>;

const TARGETS: Record<string, Target> = {
  async libsql() {
    const dir = await Deno.makeTempDir({ prefix: "waymark-sql-store-" });
    return {
      url: `file:${join(dir, "waymark.db")}`,
      cleanup: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
    };
  },
  ...(postgresBin() || Deno.env.get("CI")
    ? {
      postgres: async () => ({ url: await freshPostgresUrl(), cleanup: () => Promise.resolve() }),
    }
    : {}),
};

/** The dialects this machine can test. */
export const SQL_DIALECTS: readonly string[] = Object.keys(TARGETS);

/** Runs `fn` on a fresh, migrated store of dialect `name`, then closes and removes it. */
export async function withSqlStore(
  name: string,
  fn: (store: OpenedSqlStore) => Promise<void>,
): Promise<void> {
  const target = await TARGETS[name]!();
  const store = await openStore(target.url);
  try {
    await fn(store);
  } finally {
    await store.close();
    await target.cleanup();
  }
}
