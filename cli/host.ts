/**
 * What a command is handed: {@linkcode CommandInput}, the command line as `main.ts` parsed it,
 * and for the commands that work on the store, {@linkcode CliHost} (the resolved paths, ways to
 * open the database, the output streams, the clock), which `mod.ts` builds.
 * @module
 */
import type { EngineDeps, WorkflowSource } from "../engine/model/ports.ts";
import type { WaymarkServerOptions } from "../mod.ts";
import type { WaymarkOptions } from "../open.ts";
import type { OpenedSqlStore } from "../store/sql/store.ts";
import type { Flags } from "./flags.ts";

/** A command line as `main.ts` parsed it, for the command the command table found. */
export interface CommandInput {
  /** Where data lives and what to open. */
  options: WaymarkOptions;
  /** The validated flags. */
  flags: Flags;
  /** The arguments after the command (and its subcommand). */
  args: string[];
  /** The server's options, for `serve`. */
  server: WaymarkServerOptions;
  /** The build kind `--version` and `doctor` report. */
  buildKind: string;
  /** Writes the command's usage (from the command table) to stderr; returns exit code 2. */
  usage(): number;
}

/** waymark opened as every serving command opens it. */
export interface OpenedWaymark {
  /** The store. */
  readonly store: OpenedSqlStore;
  /** The engine's dependencies (keyring, clock, randomness, ...). */
  readonly deps: EngineDeps;
  /** Closes the database. */
  close(): Promise<void>;
}

/** What a command on the store is handed besides its input. */
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
  openDatabase(url: string): Promise<OpenedSqlStore>;
  /** The workflow sources (without opening the database). */
  workflows(): WorkflowSource;
  /** Writes to stdout. */
  stdout(text: string): void;
  /** Writes to stderr. */
  stderr(text: string): void;
  /** The current time. */
  now(): Date;
}

/** The part of the command line a command on the store reads. */
export type CliInput = Pick<CommandInput, "args" | "flags" | "usage">;

/** A command on the store: its exit code (0 done, 1 refused or problems found, 2 usage). */
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
