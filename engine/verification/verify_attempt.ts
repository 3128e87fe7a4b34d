/**
 * Verification on acknowledgement: before the write transaction, the pending step's command
 * runs through the runner port when the user's policy allows it (`verification.ts` decides);
 * inside it, what came of it joins the assessment (a blocker when it did not pass, a warning
 * when it did not run) and is recorded as an `evidence_recorded` event on the node the
 * acknowledgement created, and returned in the response, so a replay returns the recorded
 * verdict and runs nothing.
 * @module
 */
import type { Evidence } from "./evidence.ts";
import type { DomainEvent } from "../model/events.ts";
import type { EngineDeps, NodeRecord } from "../model/ports.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import type { Blocker } from "../answers/responses.ts";
import { evidenceOf, failureBlocker, planVerification } from "./policy.ts";
import type { Warning } from "../workflow/catalog.ts";
import { currentStep } from "../workflow/interpreter.ts";
import type { Attempt, CallOptions, Recorded } from "../run/record_attempt.ts";

/** What came of a step's verification command on one acknowledgement. */
export interface Verified {
  /** The step. */
  stepId: string;
  /** What ran (or why nothing did), as recorded. */
  evidence: Evidence;
  /** Blocks the step (a gap under never-stop) when the command did not pass. */
  problems: Blocker[];
  /** Says why it did not run, when it did not (the step falls back to prose). */
  warnings: Warning[];
}

/** Whether the step pending at `node` has a verification command ({@linkcode verifyAttempt}). */
export function runsCommand(
  compiled: CompiledWorkflow,
  node: Pick<NodeRecord, "state">,
): boolean {
  return currentStep(compiled, node.state)?.verify !== undefined;
}

/**
 * Runs the pending step's verification command when the user allows it, or says why not;
 * `null` when the step has none. Called outside the write transaction.
 */
export async function verifyAttempt(
  deps: EngineDeps,
  attempt: Attempt,
  options: Pick<CallOptions, "workspace" | "commandFolder" | "onVerificationWait">,
): Promise<Verified | null> {
  const step = currentStep(attempt.compiled, attempt.node.state);
  if (!step?.verify) return null;
  const plan = planVerification(step.verify, {
    policy: deps.verifier?.policy ?? null,
    workspace: options.commandFolder !== undefined
      ? options.commandFolder
      : options.workspace?.workspace ?? null,
  });
  if (plan.kind === "skip") {
    return { stepId: step.id, evidence: plan.evidence, problems: [], warnings: [plan.warning] };
  }
  const ran = await deps.verifier!.run(plan.request, { onWaiting: options.onVerificationWait });
  const evidence = evidenceOf(plan.request, ran);
  return {
    stepId: step.id,
    evidence,
    problems: evidence.verdict === "passed" ? [] : [failureBlocker(step.id, evidence)],
    warnings: [],
  };
}

/**
 * The attempt's record with its verification: the evidence in the response (and so in the
 * recorded response a replay returns) and as an event on the node the attempt created.
 */
export function withEvidence(
  recorded: Recorded,
  at: { verified: Verified | null; attempt: Attempt },
): Recorded {
  const { verified, attempt } = at;
  if (!verified) return recorded;
  const { response } = recorded;
  response.verification = verified.evidence;
  const nodeId = response.blockedAttempt?.nodeId ?? recorded.answered?.node.nodeId;
  if (nodeId === undefined) return recorded;
  const event: DomainEvent = {
    kind: "evidence_recorded",
    sessionId: attempt.node.sessionId,
    runId: attempt.node.runId,
    nodeId,
    stepId: verified.stepId,
    attemptId: attempt.attemptId,
    ...verified.evidence,
  };
  const events = recorded.events.flatMap((e): DomainEvent[] =>
    e.kind === "advance_recorded" ? [event, { ...e, response: JSON.stringify(response) }] : [e]
  );
  return { ...recorded, events };
}
