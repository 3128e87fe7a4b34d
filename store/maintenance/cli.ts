/**
 * What the store's commands (`sessions`, `import`, `gc`, `doctor`, `backup`) get from the
 * `waymark` command: the resolved paths, ways to open the database, the output streams and
 * the validated flags. `main.ts` builds it; each command lives beside what it drives.
 * @module
 */
import type { EngineDeps, WorkflowSource } from "../../engine/mod.ts";
import type { Flags } from "../settings.ts";
import type { SqliteStore } from "../libsql/mod.ts";

/** waymark opened as every serving command opens it. */
export interface OpenedWaymark {
  /** The store. */
  readonly store: SqliteStore;
  /** The engine's dependencies (keyring, clock, randomness, ...). */
  readonly deps: EngineDeps;
  /** Closes the database. */
  close(): Promise<void>;
}

/** What a store command is handed. */
export interface CliHost {
  /** Resolved locations. */
  readonly paths: { home: string; dbUrl: string; keysFile: string };
  /** waymark's version. */
  readonly version: string;
  /** How this waymark was built (`source`, ...). */
  readonly buildKind: string;
  /** Opens waymark (creating and migrating the database, loading the keyring). */
  open(): Promise<OpenedWaymark>;
  /** Opens a database without migrating it (doctor, checking a backup). */
  openDatabase(url: string): Promise<SqliteStore>;
  /** The workflow sources (without opening the database). */
  workflows(): WorkflowSource;
  /** Writes to stdout. */
  stdout(text: string): void;
  /** Writes to stderr. */
  stderr(text: string): void;
  /** The current time. */
  now(): Date;
}

/** The command line after the command name. */
export interface CliInput {
  /** Positional arguments after the command (and its subcommand). */
  positionals: string[];
  /** Validated flags. */
  flags: Flags;
}

/** A store command: its exit code (0 done, 1 refused or problems found, 2 usage). */
export type StoreCommand = (host: CliHost, input: CliInput) => Promise<number>;

/** Bytes as people read them. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1_048_576) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

/** Writes a value as indented JSON and a newline. */
export function writeJson(host: CliHost, value: unknown): void {
  host.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** Runs `fn` on an opened waymark and closes it. */
export async function withWaymark<T>(
  host: CliHost,
  fn: (waymark: OpenedWaymark) => Promise<T>,
): Promise<T> {
  const waymark = await host.open();
  try {
    return await fn(waymark);
  } finally {
    await waymark.close();
  }
}

/** A usage line on stderr; exit code 2. */
export function usage(host: CliHost, line: string): number {
  host.stderr(`usage: ${line}\n`);
  return 2;
}
