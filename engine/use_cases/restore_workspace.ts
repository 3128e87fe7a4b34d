/**
 * `restore_workspace`: the workspace's files back to the snapshot of the node a state token
 * names (or another snapshot of the same run, such as a restore's `before`), through the
 * snapshot port, which first keeps the files as they are. Refuses, changing nothing, when the
 * caller's workspace is not the run's, when the node has no snapshot, or when the port refuses.
 * Writes nothing to the store.
 * @module
 */
import { refuseActor } from "../access/team_policy.ts";
import { runLabel } from "../model/ids.ts";
import type { EngineDeps } from "../model/ports.ts";
import { fail, ok, type Result } from "../model/result.ts";
import type { RestoreRefusal, RestoreResponse } from "../model/snapshots.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import { guard } from "../run/error_guard.ts";
import { loadNode, verifyPair } from "../run/run_context.ts";
import { snapshotAt } from "../run/snapshot_step.ts";

/** Input of {@linkcode restoreWorkspace}. */
export interface RestoreInput {
  /** Names the node whose snapshot to restore. */
  stateToken: string;
  /** List what would change, change nothing. */
  dryRun?: boolean;
  /** Another snapshot of the same run to restore (a restore's `before`: the undo). */
  snapshot?: string;
}

function refused(refusal: RestoreRefusal, details: Record<string, unknown> = {}): Result<never> {
  return fail("RESTORE_REFUSED", refusal.message, {
    details: { reason: refusal.reason, ...details },
  });
}

/** Restores the files of the caller's workspace (see the module's doc). */
export function restoreWorkspace(
  deps: EngineDeps,
  input: RestoreInput,
  options: { workspace?: WorkspaceObservation } = {},
): Promise<Result<RestoreResponse>> {
  return guard(async () => {
    if (input.snapshot !== undefined && !/^[0-9a-f]{40,64}$/.test(input.snapshot)) {
      return fail(
        "INVALID_ARGUMENTS",
        "snapshot must be a snapshot's commit id (40 hex digits), as a restore's `before` gives it.",
        {
          details: { field: "snapshot" },
        },
      );
    }
    const verified = verifyPair(deps, input.stateToken);
    if (!verified.ok) return verified;
    const loaded = await loadNode(deps.store, verified.value.state);
    if (!loaded.ok) return loaded;
    const { node, run } = loaded.value;
    const notYours = refuseActor(run, deps.principal);
    if (notYours) return notYours;
    const at = await snapshotAt(deps.store, node);
    const target = input.snapshot ?? at?.commit ?? null;
    const runWorkspace = at?.workspace ?? run.observed?.workspace ?? null;
    if (!deps.snapshots || target === null || runWorkspace === null) {
      return refused({
        reason: "no_snapshot",
        message: `node ${node.nodeId} of run ${
          runLabel(run.runId)
        } has no snapshot of the workspace (none was taken there: outside git, over the time budget, or snapshots are off); nothing was changed`,
      });
    }
    const caller = options.workspace?.workspace ?? null;
    if (caller !== runWorkspace) {
      return refused({
        reason: "workspace_mismatch",
        message:
          `the run's workspace is ${runWorkspace}, not ${caller}; restore from the run's own workspace (nothing was changed)`,
      }, { runWorkspace, workspace: caller });
    }
    const done = await deps.snapshots.restore(runWorkspace, {
      runId: run.runId,
      commit: target,
      dryRun: input.dryRun ?? false,
    });
    if (!done.ok) return refused(done.refusal, { snapshot: target });
    const answer: RestoreResponse = { ...done.value, nodeId: node.nodeId };
    if (done.value.before !== null) {
      answer.undo = {
        name: "restore_workspace",
        arguments: { stateToken: input.stateToken, snapshot: done.value.before },
      };
    }
    return ok(answer);
  });
}
