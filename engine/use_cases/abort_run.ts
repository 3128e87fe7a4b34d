/**
 * Abandoning a run: a `run_aborted` event at the node the run stands at (its preferred tip),
 * after which the run's status is `aborted`, acknowledgements are refused, and the viewer and
 * `resume_session` show it so. Idempotent: aborting an aborted run records nothing more.
 * `abortRun` is the use-case other adapters build on; `abortWorkflow` is the default profile's
 * tool, addressed by a state token.
 * @module
 */
import { refuseActor } from "../access/team_policy.ts";
import { z } from "npm:zod@4.6.7";
import { runLabel, sessionLabel } from "../model/ids.ts";
import type { EngineDeps } from "../model/ports.ts";
import { fail, ok, type Result, StorageCorruptionError } from "../model/result.ts";
import { ended } from "../run/arrive.ts";
import { guard } from "../run/error_guard.ts";
import { verifyPair } from "../run/run_context.ts";

/** What an abort did. */
export interface AbortOutcome {
  /** The run (hex). */
  runId: string;
  /** Its session (hex). */
  sessionId: string;
  /** The node it stood at. */
  nodeId: string;
  /** The step pending there. */
  stepId: string | null;
  /** Its workflow. */
  workflowId: string;
  /** Whether the run had been aborted before (nothing was recorded this time). */
  alreadyAborted: boolean;
}

/** Aborts a run at `nodeId`, or at its preferred tip. */
export function abortRun(
  deps: Pick<EngineDeps, "store" | "principal">,
  input: { runId: string; explanation: string; nodeId?: string },
  options: { onAppend?: (sessionId: string) => void } = {},
): Promise<Result<AbortOutcome>> {
  return guard(async () => {
    const result = await deps.store.write(async (tx): Promise<Result<AbortOutcome>> => {
      const run = await tx.getRun(input.runId);
      if (!run) {
        return fail("NODE_NOT_FOUND", `There is no run ${runLabel(input.runId)} in this database.`);
      }
      if (run.corrupt) {
        throw new StorageCorruptionError(
          `Session ${sessionLabel(run.sessionId)} failed an integrity check`,
          run.sessionId,
        );
      }
      const notYours = refuseActor(run, deps.principal);
      if (notYours) return notYours;
      if (run.status === "complete") {
        return fail(
          "RUN_COMPLETE",
          `Run ${runLabel(run.runId)} is already complete; there is nothing to abort.`,
        );
      }
      // The preferred tip as listed: a root derived from the run id would miss an imported,
      // re-keyed run, whose nodes keep their ids under a new run id.
      const tipId = input.nodeId ?? (await tx.getRunListing(run.runId))?.tipNodeId ?? null;
      const node = tipId === null ? null : await tx.getNode(run.runId, tipId);
      if (!node) return fail("NODE_NOT_FOUND", `Run ${runLabel(run.runId)} has no such node.`);
      const outcome: AbortOutcome = {
        runId: run.runId,
        sessionId: run.sessionId,
        nodeId: node.nodeId,
        stepId: node.pendingStepId,
        workflowId: run.workflowId,
        alreadyAborted: run.status === "aborted",
      };
      if (outcome.alreadyAborted) return ok(outcome);
      await tx.append([{
        kind: "run_aborted",
        sessionId: run.sessionId,
        runId: run.runId,
        nodeId: node.nodeId,
        stepId: node.pendingStepId,
        explanation: input.explanation,
      }, ...await ended(tx, { created: run })]);
      return ok(outcome);
    });
    if (result.ok && !result.value.alreadyAborted) {
      options.onAppend?.(sessionLabel(result.value.sessionId));
    }
    return result;
  });
}

/** The default profile's `abort_workflow` answer. */
export const runAbortResponseSchema = z.object({
  status: z.literal("aborted"),
  alreadyAborted: z.boolean().describe(
    "The run had been aborted before; nothing more was recorded.",
  ),
  session: z.object({ sessionId: z.string(), runId: z.string(), nodeId: z.string() }),
  workflowId: z.string(),
  abortedStepId: z.string().nullable().describe("The step that was pending."),
  explanation: z.string(),
});
/** The default profile's `abort_workflow` answer. */
export type RunAbortResponse = z.infer<typeof runAbortResponseSchema>;

/** `abort_workflow {stateToken, explanation}`: aborts the run the token belongs to. */
export async function abortWorkflow(
  deps: Pick<EngineDeps, "store" | "keyring">,
  input: { stateToken: string; explanation: string },
  options: { onAppend?: (sessionId: string) => void } = {},
): Promise<Result<RunAbortResponse>> {
  const verified = verifyPair(deps, input.stateToken);
  if (!verified.ok) return verified;
  const done = await abortRun(
    deps,
    { runId: verified.value.state.runId, explanation: input.explanation },
    options,
  );
  if (!done.ok) return done;
  const o = done.value;
  return ok({
    status: "aborted",
    alreadyAborted: o.alreadyAborted,
    session: { sessionId: sessionLabel(o.sessionId), runId: runLabel(o.runId), nodeId: o.nodeId },
    workflowId: o.workflowId,
    abortedStepId: o.stepId,
    explanation: input.explanation,
  });
}
