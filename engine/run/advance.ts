/**
 * What an acknowledgement makes of a node, as pure functions: the review of what it brought,
 * the gaps it records, the events of a blocked and of an advanced outcome, and the progress it
 * reports. The use-case (`continue_workflow.ts`) does the reading and writing around them.
 * @module
 */
import { type AckReview, normalizeBlockers, reviewAck } from "../gates/enforce.ts";
import type { DomainEvent } from "../model/events.ts";
import type { NodeRecord, RunRecord } from "../model/ports.ts";
import {
  applyPreferences,
  type Preferences,
  type PreferencesPatch,
  recommendationWarnings,
} from "../model/preferences.ts";
import type { Blocker, Gap, StepProgress, StepResponse } from "../answers/responses.ts";
import type { Warning } from "../workflow/catalog.ts";
import type { CompiledStep, CompiledWorkflow } from "../workflow/compiled.ts";
import {
  currentStep,
  effectiveContext,
  readState,
  remainingSteps,
  type RunState,
} from "../workflow/interpreter.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import type { AdvanceOutcome } from "../model/vocabulary.ts";
import { nodeCreated, observationEvent, outputRecorded, type StepOutput } from "./node_events.ts";

/** What an acknowledgement brings besides its tokens. */
export interface Acknowledgement {
  /** Context changes, merged over the node's context. */
  context?: Record<string, unknown>;
  /** Preference changes from here on. */
  preferences?: PreferencesPatch;
  /** What the step produced. */
  output?: StepOutput;
}

/** An acknowledgement reviewed against the node's pending step, before anything is written. */
export interface AckAssessment {
  /** The step acknowledged. */
  step: CompiledStep;
  /** The acknowledgement itself. */
  ack: Acknowledgement;
  /** The node's context with the acknowledgement's changes. */
  context: Record<string, unknown>;
  /** The preferences from here on (the node's own object when unchanged). */
  preferences: Preferences;
  /** Warnings so far: the caller's, the review's, and preference and capability notes. */
  warnings: Warning[];
  /** What the review found. */
  review: AckReview;
  /** The review's problems, ordered and capped. */
  problems: Blocker[];
  /** Whether the problems block (they are recorded as gaps under `full_auto_never_stop`). */
  blocks: boolean;
  /** The node's state, read as the current version. */
  prior: RunState;
  /** Capability observations of the branch, this acknowledgement's included. */
  caps: NonNullable<RunState["caps"]>;
  /** Assessment levels of the branch, this acknowledgement's included. */
  assessments: NonNullable<RunState["assessments"]>;
}

/**
 * Reviews an acknowledgement of `node`'s pending step (which must exist); `problems` found
 * outside the review (a failed verification command) count with the review's.
 */
export function assessAck(
  node: NodeRecord,
  at: {
    compiled: CompiledWorkflow;
    ack: Acknowledgement;
    warnings: readonly Warning[];
    problems?: readonly Blocker[];
  },
): AckAssessment {
  const { compiled, ack } = at;
  const context = ack.context ? { ...node.context, ...ack.context } : node.context;
  const preferences = applyPreferences(node.preferences, ack.preferences);
  const warnings = [...at.warnings];
  if (preferences !== node.preferences) {
    warnings.push(...recommendationWarnings(preferences, compiled.recommendedPreferences));
  }
  const step = currentStep(compiled, node.state)!;
  const review = reviewAck(compiled, step, {
    artifacts: ack.output?.artifacts ?? [],
    notesMarkdown: ack.output?.notesMarkdown,
    context: effectiveContext(compiled, node.state, context),
  });
  warnings.push(...review.warnings);
  const problems = normalizeBlockers([...review.problems, ...(at.problems ?? [])]);
  const prior = readState(node.state);
  const caps = { ...(prior.caps ?? {}) };
  for (const o of review.observations) caps[o.capability] = o.status;
  for (const o of review.observations) {
    if (compiled.capabilities[o.capability] === "preferred" && o.status === "unavailable") {
      warnings.push({
        code: "PREFERRED_CAPABILITY_UNAVAILABLE",
        message:
          `\`${o.capability}\` is unavailable on this branch: the workflow goes on without it, and later steps say how to fall back.`,
      });
    }
  }
  const assessments = { ...(prior.assessments ?? {}) };
  for (const r of review.assessments) assessments[r.assessmentId] = r.dimensions;
  const blocks = problems.length > 0 && preferences.autonomy !== "full_auto_never_stop";
  return {
    step,
    ack,
    context,
    preferences,
    warnings,
    review,
    problems,
    blocks,
    prior,
    caps,
    assessments,
  };
}

/**
 * The state an advance starts from: the node's, with the branch's capability observations and
 * assessment levels (each kept only once the branch has one).
 */
export function stateWithFindings(a: AckAssessment): RunState {
  return {
    ...a.prior,
    ...(Object.keys(a.caps).length ? { caps: a.caps } : {}),
    ...(Object.keys(a.assessments).length ? { assessments: a.assessments } : {}),
  };
}

/** The gaps an advance records: its problems (under never-stop) and what the agent disclosed. */
export function gapsOf(assessment: AckAssessment): Gap[] {
  return [
    ...assessment.problems.map((b): Gap => ({
      severity: "critical",
      code: b.code,
      pointer: b.pointer,
      message: b.message,
    })),
    ...assessment.review.agentGaps.map((g): Gap => ({
      severity: g.severity as Gap["severity"],
      code: "AGENT_DISCLOSED",
      ...(g.contextKey ? { pointer: { kind: "context_key" as const, key: g.contextKey } } : {}),
      message: g.summary,
    })),
  ];
}

/** The output, capability observations and assessments of an acknowledgement, at `nodeId`. */
function outputEvents(a: AckAssessment, node: NodeRecord, nodeId: string): DomainEvent[] {
  const at = { sessionId: node.sessionId, runId: node.runId, nodeId, stepId: node.pendingStepId };
  return [
    ...outputRecorded(at, a.ack.output),
    ...a.review.observations.map((o): DomainEvent => ({
      kind: "capability_observed",
      ...at,
      capability: o.capability,
      status: o.status,
      remediation: o.remediation ?? null,
    })),
    ...a.review.assessments.map((r): DomainEvent => ({
      kind: "assessment_recorded",
      ...at,
      assessmentId: r.assessmentId,
      dimensions: r.dimensions,
    })),
  ];
}

/** Where an outcome is recorded: the acknowledged node, the attempt, and the response. */
export interface OutcomeAt {
  /** The acknowledged node. */
  node: NodeRecord;
  /** The node the outcome created (the blocked attempt or the new step). */
  created: NodeRecord;
  /** The attempt id of the ack token. */
  attemptId: string;
  /** The response, recorded verbatim for replays. */
  response: StepResponse;
}

function advanceRecorded(at: OutcomeAt, outcome: AdvanceOutcome): DomainEvent {
  return {
    kind: "advance_recorded",
    sessionId: at.node.sessionId,
    runId: at.node.runId,
    nodeId: at.node.nodeId,
    attemptId: at.attemptId,
    outcome,
    resultNodeId: at.created.nodeId,
    response: JSON.stringify(at.response),
  };
}

/** The events of a blocked acknowledgement: the attempt node, what it brought, the record. */
export function blockedEvents(a: AckAssessment, at: OutcomeAt): DomainEvent[] {
  return [
    ...nodeCreated(at.created),
    ...outputEvents(a, at.node, at.created.nodeId),
    advanceRecorded(at, "blocked"),
  ];
}

/**
 * The events of an advance: the new step node and its edge, what the acknowledgement brought,
 * its gaps, divergences, preference change and workspace observation, then the record.
 */
export function advancedEvents(
  a: AckAssessment,
  at: OutcomeAt & { gaps: readonly Gap[]; run: RunRecord; workspace?: WorkspaceObservation },
): DomainEvent[] {
  const { node, created } = at;
  const where = {
    sessionId: node.sessionId,
    runId: node.runId,
    nodeId: created.nodeId,
    stepId: node.pendingStepId,
  };
  return [
    ...nodeCreated(created),
    ...outputEvents(a, node, created.nodeId),
    ...at.gaps.map((g): DomainEvent => ({
      kind: "gap_recorded",
      ...where,
      severity: g.severity,
      code: g.code,
      pointer: (g.pointer as Record<string, string> | undefined) ?? null,
      message: g.message,
    })),
    ...a.review.divergences.map((d): DomainEvent => ({
      kind: "divergence_recorded",
      ...where,
      reason: d.reason,
      summary: d.summary,
      relatedStepId: d.relatedStepId ?? null,
    })),
    ...(a.preferences !== node.preferences
      ? [{
        kind: "preference_changed" as const,
        sessionId: node.sessionId,
        runId: node.runId,
        nodeId: created.nodeId,
        preferences: a.preferences,
      }]
      : []),
    ...observationEvent(at.run, { nodeId: created.nodeId, workspace: at.workspace }),
    advanceRecorded(at, "advanced"),
  ];
}

/**
 * Progress after an advance to `child`: step nodes acknowledged on its branch (the root is the
 * first step node and is not counted), plus the steps still ahead.
 */
export function stepProgress(
  compiled: CompiledWorkflow,
  at: { child: NodeRecord; completed: CompiledStep },
): StepProgress {
  const done = Math.max(0, (at.child.stepCount ?? 1) - 1);
  return {
    done,
    total: done + remainingSteps(compiled, at.child.state),
    stepTitle: at.completed.title,
  };
}
