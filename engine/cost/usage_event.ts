/**
 * The `usage_recorded` event: the host's tokens in one step, on the node the step's
 * acknowledgement (or checkpoint) created, with the run's total so far. Numbers only.
 * @module
 */
import type { Principal } from "../access/principal.ts";
import type { Warning } from "../workflow/catalog.ts";
import type { UsageSource } from "./ports.ts";
import type { TokenUsage } from "./usage.ts";

/** The tokens of one step, recorded on the node its call created. */
export interface UsageEvent {
  kind: "usage_recorded";
  sessionId: string;
  runId: string;
  /** The node the call created (the next step, the blocked attempt, the checkpoint). */
  nodeId: string;
  /** Whose records were read. */
  source: UsageSource;
  /** The window's bounds: after `from` (the step's start), up to `to` (its acknowledgement). */
  from: string;
  /** See `from`. */
  to: string;
  /** The tokens of the calls in the window; `null` when the records could not be read. */
  usage: TokenUsage | null;
  /** The run's tokens with this step's (every step recorded before it, any branch). */
  runTotal: TokenUsage | null;
  /** Why the counts are missing or partial. */
  notice?: Warning;
  /** Who made the call, when it was authenticated. */
  principal?: Principal;
}
