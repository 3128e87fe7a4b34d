/**
 * What an execution call returns about a node: fresh tokens, the pending step and session
 * facts, or the recorded response of an attempt that was already made.
 * @module
 */
import { randomHex, runLabel, sessionLabel } from "../model/ids.ts";
import type { AttemptRecord, EngineDeps, NodeRecord } from "../model/ports.ts";
import { ok, type Result, StorageCorruptionError } from "../model/result.ts";
import type { StepResponse } from "./responses.ts";
import type { Preferences } from "../model/preferences.ts";
import { mintToken } from "../access/tokens.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import type { Warning } from "../workflow/catalog.ts";
import { currentStep, isComplete, readState } from "../workflow/interpreter.ts";
import { renderPending } from "../workflow/pending.ts";
import { CAPABILITIES } from "../model/vocabulary.ts";
import { notProvided } from "../workflow/render.ts";

/** Fresh tokens for a node: a state token and new ack/checkpoint attempts. */
export function tokensFor(
  deps: Pick<EngineDeps, "keyring" | "random">,
  node: Pick<NodeRecord, "runId" | "nodeId">,
  complete: boolean,
): { stateToken: string; ackToken?: string; checkpointToken: string } {
  const { keyring } = deps;
  const base = { runId: node.runId, nodeId: node.nodeId };
  const stateToken = mintToken(keyring, { kind: "state", ...base });
  const checkpointToken = mintToken(keyring, {
    kind: "checkpoint",
    ...base,
    attemptId: randomHex(deps, 6),
  });
  if (complete) return { stateToken, checkpointToken };
  const ackToken = mintToken(keyring, {
    kind: "ack",
    ...base,
    attemptId: randomHex(deps, 6),
  });
  return { stateToken, ackToken, checkpointToken };
}

/** One `MISSING_PLACEHOLDER` warning per placeholder the pending prompt had no value for. */
function placeholderWarnings(rendered: ReturnType<typeof renderPending>): Warning[] {
  if (!rendered) return [];
  return rendered.missing.map((name) => ({
    code: "MISSING_PLACEHOLDER",
    message:
      `The prompt of step \`${rendered.pending.stepId}\` uses {{${name}}}, which the context does not provide, so it reads "${
        notProvided(name)
      }". If you know it, put it in \`context\` when you acknowledge this step, so later steps have it.`,
  }));
}

/**
 * The node a call answers from (the one it acknowledged or checkpointed at): what the agent was
 * told there is not told again.
 */
export type AnsweredFrom = Pick<NodeRecord, "state" | "preferences">;

/**
 * Builds the response for a node: fresh tokens and the pending step. Without `from` (a start,
 * a rehydrate) it carries the run's facts too: whether it is complete, the session, the pinned
 * workflow, the preferences and the step's role. With `from`, only what changed since that
 * node: completion, the preferences when this call changed them, the role when the step's
 * differs from `from`'s (the tokens name the run and node). Empty warnings and false flags are
 * left out.
 */
export function responseFor(
  deps: Pick<EngineDeps, "keyring" | "random">,
  node: Pick<NodeRecord, "runId" | "nodeId" | "sessionId" | "state" | "context" | "preferences">,
  compiled: CompiledWorkflow,
  extra: { workflowHash: string; warnings: Warning[]; from?: AnsweredFrom },
): StepResponse {
  const complete = isComplete(compiled, node.state);
  const tokens = tokensFor(deps, node, complete);
  const rendered = renderPending(compiled, node.state, node.context);
  const { from } = extra;
  const pending = rendered?.pending ?? null;
  if (pending?.agentRole !== undefined && from) {
    if (currentStep(compiled, from.state)?.agentRole === pending.agentRole) {
      delete pending.agentRole;
    }
  }
  const response: StepResponse = { kind: "ok", ...tokens, pending };
  if (!from || complete) response.isComplete = complete;
  if (!from) {
    response.session = {
      sessionId: sessionLabel(node.sessionId),
      runId: runLabel(node.runId),
      nodeId: node.nodeId,
    };
    response.workflow = { id: compiled.id, name: compiled.name, hash: extra.workflowHash };
  }
  if (!from || !samePreferences(from.preferences, node.preferences)) {
    response.preferences = node.preferences;
  }
  const warnings = [...extra.warnings, ...placeholderWarnings(rendered)];
  if (warnings.length > 0) response.warnings = warnings;
  const observed = readState(node.state).caps ?? {};
  const declared = CAPABILITIES.toSorted().flatMap((cap) => {
    const requested = compiled.capabilities?.[cap];
    return requested ? [[cap, { requested, observed: observed[cap] ?? "unknown" }] as const] : [];
  });
  if (declared.length > 0) response.capabilities = Object.fromEntries(declared);
  return response;
}

function samePreferences(a: Preferences, b: Preferences): boolean {
  return a.autonomy === b.autonomy && a.riskPolicy === b.riskPolicy;
}

/** Adds warnings to a response being built (the field is left out while there are none). */
export function addWarnings(response: StepResponse, warnings: readonly Warning[]): void {
  if (warnings.length > 0) (response.warnings ??= []).push(...warnings);
}

/**
 * The recorded response of an attempt, returned as is (never recomputed). A session that failed
 * an integrity check is refused even for replays: execution tools do not serve it.
 */
export function replayRecorded(recorded: AttemptRecord): Result<StepResponse> {
  if (recorded.corrupt) {
    throw new StorageCorruptionError(
      `Session ${sessionLabel(recorded.sessionId)} failed an integrity check`,
      recorded.sessionId,
    );
  }
  return ok(JSON.parse(recorded.response) as StepResponse);
}
