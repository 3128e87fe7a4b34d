/**
 * The port through which the engine learns a host's model calls: numbers and times only, read by
 * an adapter from the host's own records on this machine (`store/transcripts/`).
 * @module
 */
import type { Warning } from "../workflow/catalog.ts";
import type { ModelCall } from "./usage.ts";

/** Where token counts came from: the host whose records were read. */
export type UsageSource = "claude_code";

/** What one reading of the host's records found. */
export interface UsageReading {
  /** The model calls recorded so far in the host's session (after `after`, when asked), oldest first. */
  calls: readonly ModelCall[];
  /** Why the counts are missing or partial (no transcript, unreadable lines), or `null`. */
  notice: Warning | null;
  /**
   * The end of the last window this meter's calls were counted in (`settle`), or `null`: a call
   * is counted in one step only, also when two steps' windows overlap (a retry after a blocked
   * acknowledgement, a fork from an older node).
   */
  since: string | null;
}

/** Reads a host's model calls; never throws (a failure is a notice with no calls). */
export interface UsageMeter {
  /** The host. */
  readonly source: UsageSource;
  /**
   * Reads what the host recorded since the last reading, and returns the calls so far made after
   * `after` (ISO-8601; all without it); with `through`, first waits (a bounded time) until the
   * records hold the call that made that tool call, since a host may write its records a moment
   * after it calls the tool.
   */
  read(options?: { through?: string; after?: string }): Promise<UsageReading>;
  /** Marks the calls up to `to` (ISO-8601) as counted, once the step they were counted in is recorded. */
  settle(to: string): void;
}
