/**
 * Where waymark keeps its data: the home folder, the database URL and the keyring file, from
 * the options and the environment. Light on purpose (no store code), so a command that only
 * reads (`waymark hook`) can find the files without loading the store.
 * @module
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";

/** The data files' locations. */
export interface HomePaths {
  /** Data folder. */
  home: string;
  /** Database URL. */
  dbUrl: string;
  /** Keyring file. */
  keysFile: string;
}

/** The locations for `home` and `dbUrl` as given, else `WAYMARK_HOME`/`WAYMARK_DB_URL`, else the defaults. */
export function homePaths(options: { home?: string; dbUrl?: string } = {}): HomePaths {
  const env = (name: string) => process.env[name] || undefined;
  const home = resolve(options.home ?? env("WAYMARK_HOME") ?? join(homedir(), ".waymark"));
  const dbUrl = options.dbUrl ?? env("WAYMARK_DB_URL") ?? `file:${join(home, "waymark.db")}`;
  return { home, dbUrl, keysFile: join(home, "keys.json") };
}
