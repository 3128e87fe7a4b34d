/**
 * What opening a store may be told that the command line also names: how long a write waits
 * for a lock, and how durable a commit is. Imports nothing, so the command line can check and
 * describe its flags before anything else loads.
 * @module
 */

/** How long a write waits for the database when not told otherwise, in ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * The durability modes. `normal` (the default): an acknowledged write survives a crash
 * of the process, but a power loss or OS crash may lose the last few commits (in WAL mode
 * SQLite syncs at checkpoints). `full`: every commit is synced to disk before it is
 * acknowledged (PostgreSQL is asked for synchronous commits on every connection).
 */
export const DURABILITIES = ["normal", "full"] as const;

/** One of {@linkcode DURABILITIES}. */
export type Durability = typeof DURABILITIES[number];

/** The durability when not told otherwise. */
export const DEFAULT_DURABILITY: Durability = "normal";
