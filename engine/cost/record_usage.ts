/**
 * Tokens on the way of a call: the host's records read before the write transaction (never
 * holding its lock), the calls in the step's window attributed to it, recorded as a
 * `usage_recorded` event on the node the call created, and said in the answer when the records
 * could not be read (a notice) or the run is past its token budget (a warning, never a refusal).
 * Replays never get here: they return the recorded answer.
 * @module
 */
import type { StepResponse } from "../answers/responses.ts";
import type { DomainEvent } from "../model/events.ts";
import { beforeAttempt } from "../run/node_events.ts";
import type { EngineDeps, NodeRecord } from "../model/ports.ts";
import type { Warning } from "../workflow/catalog.ts";
import type { UsageEvent } from "./usage_event.ts";
import { addUsage, attributeUsage, budgetWarning, NO_USAGE } from "./usage.ts";

/** What a step cost, measured before its call's write. */
export type StepUsage = Omit<UsageEvent, "kind" | "sessionId" | "runId" | "nodeId">;

/**
 * Measures the step pending at `node`: the calls after its creation (or after the last step this
 * server measured, when later: a call is counted once) up to now, once the host's records hold
 * the call that made this request (when the host named it); `null` without a meter, or for a
 * node whose creation time was not read.
 */
export async function measureStep(
  deps: Pick<EngineDeps, "usage" | "clock" | "store">,
  at: { node: Pick<NodeRecord, "runId" | "createdAt">; hostCallId?: string },
): Promise<StepUsage | null> {
  const { node } = at;
  const meter = deps.usage;
  if (!meter || !node.createdAt) return null;
  const [reading, before] = await Promise.all([
    meter.read({
      after: node.createdAt,
      ...(at.hostCallId === undefined ? {} : { through: at.hostCallId }),
    }),
    deps.store.getRunTokens(node.runId),
  ]);
  const to = deps.clock.now();
  const from = reading.since !== null && Date.parse(reading.since) > Date.parse(node.createdAt)
    ? reading.since
    : node.createdAt;
  const unread = reading.notice?.code === "USAGE_UNAVAILABLE";
  const usage = unread ? null : attributeUsage(reading.calls, { from, to });
  const measured: StepUsage = {
    source: meter.source,
    from,
    to,
    usage,
    runTotal: addUsage(before ?? NO_USAGE, usage ?? NO_USAGE),
  };
  if (reading.notice) measured.notice = reading.notice;
  return measured;
}

/** A run's budget: the smaller of its workflow's and the user's, or `null` with neither. */
export function runBudget(
  deps: Pick<EngineDeps, "tokenBudget">,
  compiled: { tokenBudget?: number },
): number | null {
  const set = [deps.tokenBudget, compiled.tokenBudget].filter((b) => b !== undefined);
  return set.length === 0 ? null : Math.min(...set);
}

/** The warnings a measured step adds to its answer: the meter's notice, the budget's warning. */
export function usageWarnings(measured: StepUsage, budget: number | null): Warning[] {
  const over = measured.runTotal ? budgetWarning(measured.runTotal, budget) : null;
  return [measured.notice, over].filter((w): w is Warning => w !== null && w !== undefined);
}

/**
 * The budget's warning for an answer that records no step (a rehydrate): one read of the run's
 * total, only when a budget is set.
 */
export async function runBudgetWarnings(
  deps: Pick<EngineDeps, "store" | "tokenBudget">,
  at: { runId: string; compiled: { tokenBudget?: number } },
): Promise<Warning[]> {
  const budget = runBudget(deps, at.compiled);
  if (budget === null) return [];
  const total = await deps.store.getRunTokens(at.runId);
  const over = total ? budgetWarning(total, budget) : null;
  return over ? [over] : [];
}

/** The record of a call: its events and response (as `Recorded`). */
interface RecordedLike {
  response: StepResponse;
  events: DomainEvent[];
}

/**
 * The attempt's record with its step's tokens: the event on the node the attempt created, and
 * the warnings in the response, so in the recorded response a replay returns.
 */
export function withUsage<R extends RecordedLike>(
  recorded: R,
  at: {
    measured: StepUsage | null;
    budget: number | null;
    node: Pick<NodeRecord, "sessionId" | "runId">;
  },
): R {
  const { measured } = at;
  if (!measured) return recorded;
  const { response } = recorded;
  const attempt = recorded.events.find((e) =>
    e.kind === "advance_recorded" || e.kind === "checkpoint_recorded"
  );
  if (!attempt || !("resultNodeId" in attempt)) return recorded;
  const nodeId = attempt.resultNodeId;
  const warnings = usageWarnings(measured, at.budget);
  if (warnings.length > 0) response.warnings = [...(response.warnings ?? []), ...warnings];
  const event: DomainEvent = {
    kind: "usage_recorded",
    sessionId: at.node.sessionId,
    runId: at.node.runId,
    nodeId,
    ...measured,
  };
  return beforeAttempt(recorded, event);
}
