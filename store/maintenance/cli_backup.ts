/**
 * `waymark backup FILE`: a consistent copy of the database (SQLite's `VACUUM INTO`) taken while
 * servers keep writing, then checked with the database's integrity check.
 * @module
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { type CliHost, type CliInput, formatBytes, usage, withWaymark } from "./cli.ts";

/** `waymark backup FILE`. */
export async function backupCommand(host: CliHost, input: CliInput): Promise<number> {
  const [file] = input.positionals;
  if (!file) return usage(host, "waymark backup FILE");
  const target = resolve(file);
  if (existsSync(target)) {
    host.stderr(`${target} already exists; choose a new file name (a backup never overwrites)\n`);
    return 1;
  }
  await withWaymark(host, ({ store }) => store.maintenance.backupTo(store.db, target));
  const copy = await host.openDatabase(`file:${target}`);
  try {
    const problems = await copy.maintenance.integrityCheck(copy.db);
    const bytes = await copy.maintenance.databaseBytes(copy.db);
    if (problems.length > 0) {
      host.stderr(`backup ${target} fails its integrity check: ${problems.join("; ")}\n`);
      return 1;
    }
    host.stdout(`${target}\n`);
    host.stderr(
      `backed up ${host.paths.dbUrl} to ${target} (${
        formatBytes(bytes ?? 0)
      }, integrity ok); check it any time with \`waymark doctor ${target}\`\n`,
    );
    return 0;
  } finally {
    await copy.close();
  }
}
