/**
 * What opening a store may be told that the command line also names: how long a write waits
 * for a lock, and how durable a commit is. Imports nothing, so the command line can check and
 * describe its flags before anything else loads.
 * @module
 */

/** How long a write waits for the database when not told otherwise, in ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;
