/**
 * What a step cost in model tokens: a host's model calls (numbers and times only, read by an
 * adapter from the host's own records) attributed to the step whose window holds them, summed per
 * run, and checked against a token budget. Pure: times are compared as parsed, never against a
 * clock.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import type { Warning } from "../workflow/catalog.ts";

const count = z.number().int().nonnegative();

/** Tokens of one or more model calls, as recorded on a step and summed per run. */
export const tokenUsageSchema = z.object({
  inputTokens: count.describe("Input tokens not read from or written to the prompt cache."),
  outputTokens: count,
  cacheCreationInputTokens: count.describe("Input tokens written to the prompt cache."),
  cacheReadInputTokens: count.describe("Input tokens read from the prompt cache."),
  calls: count.describe("Model calls counted."),
});

/** Tokens of one or more model calls. */
export type TokenUsage = z.infer<typeof tokenUsageSchema>;

/** One model call as a host recorded it: its id, when, and its token counts (no text). */
export interface ModelCall {
  /** The host's id of the call (a message id); lines repeating it are one call. */
  id: string;
  /** When the host recorded it (ISO-8601). */
  at: string;
  /** Its counts (`calls` is ignored: one call is one). */
  usage: Omit<TokenUsage, "calls">;
  /** The ids of the tool calls it made (so a reader can wait for the one behind a request). */
  toolUseIds?: string[];
}

/** The half-open window of a step: after `from` (its node's creation), up to `to` (its ack). */
export interface UsageWindow {
  /** ISO-8601, excluded. */
  from: string;
  /** ISO-8601, included. */
  to: string;
}

/** No tokens. */
export const NO_USAGE: TokenUsage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
  calls: 0,
});

/** The sum of two usages. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    calls: a.calls + b.calls,
  };
}

/** Every token a usage counts (input, output and both cache kinds). */
export function totalTokens(u: TokenUsage): number {
  return u.inputTokens + u.outputTokens + u.cacheCreationInputTokens + u.cacheReadInputTokens;
}

/**
 * The calls made inside a window, summed. A call the host wrote on several lines (one per content
 * block, as Claude Code does) counts once, with the largest of each count its lines carry. A call
 * whose time does not parse counts nowhere.
 */
export function attributeUsage(calls: readonly ModelCall[], window: UsageWindow): TokenUsage {
  const from = Date.parse(window.from);
  const to = Date.parse(window.to);
  const byId = new Map<string, ModelCall["usage"]>();
  for (const call of calls) {
    const at = Date.parse(call.at);
    if (!(at > from && at <= to)) continue;
    const seen = byId.get(call.id);
    byId.set(call.id, seen ? maxOf(seen, call.usage) : call.usage);
  }
  let sum = NO_USAGE;
  for (const usage of byId.values()) sum = addUsage(sum, { ...usage, calls: 1 });
  return sum;
}

function maxOf(a: ModelCall["usage"], b: ModelCall["usage"]): ModelCall["usage"] {
  return {
    inputTokens: Math.max(a.inputTokens, b.inputTokens),
    outputTokens: Math.max(a.outputTokens, b.outputTokens),
    cacheCreationInputTokens: Math.max(a.cacheCreationInputTokens, b.cacheCreationInputTokens),
    cacheReadInputTokens: Math.max(a.cacheReadInputTokens, b.cacheReadInputTokens),
  };
}

/**
 * The warning an answer carries once a run's tokens pass its budget, or `null` within it (or with
 * no budget). Never a refusal: the run goes on.
 */
export function budgetWarning(runTotal: TokenUsage, budget: number | null): Warning | null {
  if (budget === null) return null;
  const used = totalTokens(runTotal);
  if (used <= budget) return null;
  return {
    code: "TOKEN_BUDGET_EXCEEDED",
    message:
      `This run has used ${used} tokens, past its budget of ${budget} (input, output and cache tokens of the host's model calls). Nothing is refused; wrap up, or ask the user before going on.`,
  };
}
