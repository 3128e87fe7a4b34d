/**
 * Answers the user gave through the MCP client (an elicitation form, or a task's input) to a
 * step's user-only dependencies. They become context on a new node, as if the agent had passed
 * them: a checkpoint node at the end of the asking node's checkpoint chain, whose context is
 * the chain's with the answers set, and whose notes say which keys the user answered. A
 * checkpoint never forks and never advances, and an acknowledgement attaches after the last
 * checkpoint and reads its context, so the agent's next acknowledgement of that step (with the
 * ack token it already holds) carries the answers. Recording the same answers again is a replay.
 * @module
 */
import { refuseActor } from "../access/team_policy.ts";
import type { Principal } from "../access/principal.ts";
import { canonicalJson, sha256Hex } from "../common/hash.ts";
import { runLabel, sessionLabel } from "../model/ids.ts";
import { checkContext } from "../model/limits.ts";
import type { EngineDeps, NodeRecord, StoreWriter } from "../model/ports.ts";
import { fail, ok, type Result, StorageCorruptionError } from "../model/result.ts";
import { isComplete } from "../workflow/interpreter.ts";
import { type Acknowledgement, assessAck } from "../run/advance.ts";
import { checkpointChain } from "../run/branches.ts";
import { guard } from "../run/error_guard.ts";
import { childNode, nodeCreated, outputRecorded } from "../run/node_events.ts";
import { responseFor } from "../answers/node_response.ts";
import { loadNode, verifyPair } from "../run/run_context.ts";
import { type UserQuestion, userQuestions } from "../run/task_status.ts";

/** Answers to record. */
export interface UserInput {
  /** The run (hex). */
  runId: string;
  /** The node whose pending step asked; default: the run's preferred tip. */
  nodeId?: string;
  /** Values by context key; keys the step does not ask the user for are ignored. */
  answers: Record<string, unknown>;
}

/** What recording answers did. */
export interface UserInputOutcome {
  /** The keys recorded (empty when nothing new was). */
  recorded: string[];
  /** The checkpoint node holding them, or `null` when nothing was recorded. */
  nodeId: string | null;
}

const unset = (value: unknown) => value === undefined || value === null || value === "";

function answerNotes(keys: readonly string[]): string {
  return `The user answered through the MCP client: ${keys.map((k) => `\`${k}\``).join(", ")}.`;
}

async function targetNode(
  tx: StoreWriter,
  at: { input: UserInput; principal: Principal | undefined },
): Promise<Result<{ node: NodeRecord; workflowHash: string }>> {
  const { input } = at;
  const run = await tx.getRunListing(input.runId);
  if (!run) return fail("NODE_NOT_FOUND", `There is no run ${runLabel(input.runId)} here.`);
  if (run.corrupt) {
    throw new StorageCorruptionError(
      `Session ${sessionLabel(run.sessionId)} failed an integrity check`,
      run.sessionId,
    );
  }
  const notYours = refuseActor(run, at.principal);
  if (notYours) return notYours;
  if (run.status !== "running") {
    return fail(
      run.status === "aborted" ? "RUN_ABORTED" : "RUN_COMPLETE",
      `Run ${runLabel(run.runId)} is ${run.status}; it waits for no input.`,
    );
  }
  const nodeId = input.nodeId ?? run.tipNodeId;
  const node = nodeId ? await tx.getNode(run.runId, nodeId) : null;
  if (!node) return fail("NODE_NOT_FOUND", `Run ${runLabel(run.runId)} has no such node.`);
  return ok({ node, workflowHash: run.workflowHash });
}

async function record(
  deps: EngineDeps,
  tx: StoreWriter,
  input: UserInput,
): Promise<Result<UserInputOutcome>> {
  const target = await targetNode(tx, { input, principal: deps.principal });
  if (!target.ok) return target;
  const { end } = await checkpointChain(tx, target.value.node);
  const hash = target.value.workflowHash;
  const compiled = await tx.getSnapshot(hash);
  if (!compiled) {
    throw new StorageCorruptionError(`The pinned workflow ${hash} is missing`, end.sessionId);
  }
  const asked = userQuestions(compiled, end).filter((q) => !q.secret);
  const patch = Object.fromEntries(
    asked.filter((q) => !unset(input.answers[q.contextKey]))
      .map((q) => [q.contextKey, input.answers[q.contextKey]]),
  );
  const keys = Object.keys(patch);
  if (keys.length === 0) return ok({ recorded: [], nodeId: null });
  const sized = checkContext(patch);
  if (!sized.ok) return sized;
  const attemptId = (await sha256Hex(canonicalJson({ at: end.nodeId, patch }))).slice(0, 12);
  const replayed = await tx.getAttempt(end.runId, end.nodeId, attemptId, "checkpoint");
  if (replayed) return ok({ recorded: [], nodeId: replayed.resultNodeId });
  const created = await childNode(end, {
    origin: ["user_input", end.runId, end.nodeId, attemptId],
    nodeKind: "checkpoint",
    state: end.state,
    context: { ...end.context, ...patch },
    preferences: end.preferences,
    pendingStepId: end.pendingStepId,
    edgeKind: "checkpoint",
    notesMarkdown: answerNotes(keys),
    notesStepId: null,
  });
  const response = responseFor(deps, created, compiled, {
    workflowHash: hash,
    warnings: [],
    from: end,
  });
  response.checkpoint = { nodeId: created.nodeId };
  const { sessionId, runId } = end;
  await tx.append([
    ...nodeCreated(created),
    ...outputRecorded({ sessionId, runId, nodeId: created.nodeId, stepId: null }, {
      notesMarkdown: answerNotes(keys),
    }),
    {
      kind: "checkpoint_recorded",
      sessionId,
      runId,
      nodeId: end.nodeId,
      attemptId,
      resultNodeId: created.nodeId,
      response: JSON.stringify(response),
    },
  ]);
  return ok({ recorded: keys, nodeId: created.nodeId });
}

/** Records the user's answers to the pending step's user-only dependencies (see the module). */
export function recordUserInput(
  deps: EngineDeps,
  input: UserInput,
  options: { onAppend?: (sessionId: string) => void } = {},
): Promise<Result<UserInputOutcome>> {
  return guard(async () => {
    const result = await deps.store.write((tx) => record(deps, tx, input));
    if (result.ok && result.value.recorded.length > 0) {
      const run = await deps.store.getRun(input.runId);
      if (run) options.onAppend?.(sessionLabel(run.sessionId));
    }
    return result;
  });
}

/** Where an acknowledgement would be blocked only on questions the user can answer. */
export interface PendingQuestions {
  /** The run (hex). */
  runId: string;
  /** The acknowledged node. */
  nodeId: string;
  /** What to ask. */
  questions: UserQuestion[];
}

/**
 * Whether acknowledging as `input` would be blocked only on user-only dependencies that may be
 * asked through the client: under `guided` autonomy, none of them a credential, and the
 * attempt not already recorded. Reads only; `null` when not (the acknowledgement then goes on
 * as usual and reports any error itself).
 */
export async function pendingQuestions(
  deps: EngineDeps,
  input: Acknowledgement & { stateToken: string; ackToken: string },
): Promise<PendingQuestions | null> {
  const verified = verifyPair(deps, input.stateToken, { token: input.ackToken, kind: "ack" });
  if (!verified.ok) return null;
  const claims = verified.value.attempt!;
  if (await deps.store.getAttempt(claims.runId, claims.nodeId, claims.attemptId!, "ack")) {
    return null;
  }
  const loaded = await loadNode(deps.store, verified.value.state).catch(() => null);
  if (!loaded?.ok) return null;
  const { node, run, compiled } = loaded.value;
  if (run.status !== "running" || isComplete(compiled, node.state)) return null;
  const { end } = await checkpointChain(deps.store, node);
  const a = assessAck({ ...node, context: end.context }, { compiled, ack: input, warnings: [] });
  const userOnly = a.problems.every((p) => p.code === "USER_ONLY_DEPENDENCY");
  if (!a.blocks || !userOnly || a.preferences.autonomy !== "guided") return null;
  const questions = userQuestions(compiled, { state: node.state, context: a.context });
  if (questions.length === 0 || questions.some((q) => q.secret)) return null;
  return { runId: node.runId, nodeId: node.nodeId, questions };
}
