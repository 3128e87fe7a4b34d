/**
 * The store's commands by name, for `main.ts` to dispatch to (loaded on demand, so serving
 * starts without them).
 * @module
 */
import { importCommand } from "../bundle/cli.ts";
import type { StoreCommand } from "./cli.ts";
import { backupCommand } from "./cli_backup.ts";
import { doctorCommand } from "./cli_doctor.ts";
import { gcCommand } from "./cli_gc.ts";
import { sessionsCommand } from "./cli_sessions.ts";

export type { CliHost, CliInput, OpenedWaymark, StoreCommand } from "./cli.ts";

/** Every store command. */
export const STORE_COMMANDS: Readonly<Record<string, StoreCommand>> = {
  sessions: sessionsCommand,
  import: importCommand,
  gc: gcCommand,
  doctor: doctorCommand,
  backup: backupCommand,
};
