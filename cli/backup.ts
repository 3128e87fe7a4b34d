/**
 * `waymark backup FILE`: a consistent copy of the database (SQLite's `VACUUM INTO`) taken while
 * servers keep writing, then checked with the database's integrity check. FILE is created new
 * and 0600 first: anything already there, a symbolic link included, is refused.
 * @module
 */
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { createPrivateFile } from "../store/private_files.ts";
import { type CliHost, type CliInput, formatBytes, withWaymark } from "./host.ts";

/** `waymark backup FILE`. */
export async function backupCommand(host: CliHost, input: CliInput): Promise<number> {
  const [file] = input.args;
  if (!file) return input.usage();
  const target = resolve(file);
  try {
    // made here, empty and 0600, so the copy is private and never lands through a link
    createPrivateFile(target);
  } catch (error) {
    if ((error as { code?: string }).code !== "EEXIST") throw error;
    host.stderr(
      `${target} already exists (a file, folder or symbolic link); choose a new file name (a backup never overwrites or writes through a link)\n`,
    );
    return 1;
  }
  try {
    await withWaymark(host, ({ store }) => store.maintenance.backupTo(store.db, target));
  } catch (error) {
    await rm(target, { force: true });
    throw error;
  }
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
