/**
 * Verifying a call's tokens and loading the node they name, with the checks every execution
 * call makes: scope, existence, session health, pinned snapshot, a state that fits it.
 * @module
 */
import { runLabel, sessionLabel } from "../model/ids.ts";
import type { EngineDeps, NodeAndRun, NodeRecord, RunRecord, StoreReader } from "../model/ports.ts";
import { fail, ok, type Result, StorageCorruptionError } from "../model/result.ts";
import { TOKEN_FIELD, type TokenClaims, verifyToken } from "../access/tokens.ts";
import type { TokenKind } from "../model/vocabulary.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { stateProblem } from "../workflow/interpreter.ts";

/** A node with its run and pinned workflow. */
export interface NodeContext {
  /** The node the state token names. */
  node: NodeRecord;
  /** Its run. */
  run: RunRecord;
  /** The run's pinned compiled workflow. */
  compiled: CompiledWorkflow;
}

/**
 * Verifies a state token and, when given, an attempt token of `attemptKind`, and checks that the
 * attempt token belongs to the same run and node.
 */
export function verifyPair(
  deps: Pick<EngineDeps, "keyring">,
  stateToken: string,
  attempt?: { token: string; kind: Exclude<TokenKind, "state"> },
): Result<{ state: TokenClaims; attempt?: TokenClaims }> {
  const state = verifyToken(deps.keyring, stateToken, "state");
  if (!state.ok) return state;
  if (!attempt) return ok({ state: state.value });
  const claims = verifyToken(deps.keyring, attempt.token, attempt.kind);
  if (!claims.ok) return claims;
  const field = TOKEN_FIELD[attempt.kind];
  if (claims.value.runId !== state.value.runId) {
    return fail(
      "TOKEN_SCOPE_MISMATCH",
      `${field} belongs to a different run than stateToken. Pass the ${field} returned together with this stateToken, or call continue_workflow with only the stateToken to get a fresh one.`,
      { details: { token: field, reason: "other_run" } },
    );
  }
  if (claims.value.nodeId !== state.value.nodeId) {
    return fail(
      "TOKEN_SCOPE_MISMATCH",
      `${field} belongs to a different step snapshot of this run than stateToken. Pass the ${field} returned together with this stateToken, or call continue_workflow with only the stateToken to get a fresh one.`,
      { details: { token: field, reason: "other_node" } },
    );
  }
  return ok({ state: state.value, attempt: claims.value });
}

/** Loads the node a verified state token names, with its run and pinned workflow. */
export async function loadNode(
  store: StoreReader,
  claims: TokenClaims,
): Promise<Result<NodeContext>> {
  return checkNode(store, claims, await store.getNodeAndRun(claims.runId, claims.nodeId));
}

/**
 * The node a verified state token names, read with its run (`null`: not stored), checked and
 * with its pinned workflow.
 */
export async function checkNode(
  store: StoreReader,
  claims: TokenClaims,
  read: NodeAndRun | null,
): Promise<Result<NodeContext>> {
  if (!read) {
    return fail(
      "NODE_NOT_FOUND",
      "stateToken is genuine but its run is not in this database (a different WAYMARK_HOME or database, or a deleted session). Point waymark at the database the run was started in, or start the workflow again.",
      { details: { token: "stateToken", runId: runLabel(claims.runId) } },
    );
  }
  const { node, run } = read;
  if (run.corrupt) {
    throw new StorageCorruptionError(
      `Session ${sessionLabel(run.sessionId)} failed an integrity check`,
      run.sessionId,
    );
  }
  const compiled = await store.getSnapshot(run.workflowHash);
  if (!compiled) {
    throw new StorageCorruptionError(
      `The pinned workflow ${run.workflowHash} of run ${runLabel(run.runId)} is missing`,
      run.sessionId,
    );
  }
  const problem = stateProblem(compiled, node.state);
  if (problem) {
    return fail(
      "INVARIANT_VIOLATION",
      `Node ${node.nodeId} of run ${
        runLabel(run.runId)
      } has a state that is no position in its pinned workflow (${problem}). This is a bug or a damaged database, not something a retry fixes.`,
      {
        details: {
          invariant: "state_in_workflow",
          runId: runLabel(run.runId),
          nodeId: node.nodeId,
          workflowHash: run.workflowHash,
          state: node.state,
        },
      },
    );
  }
  return ok({ node, run, compiled });
}
