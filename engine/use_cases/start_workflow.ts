/**
 * `start_workflow`: pins the compiled workflow by hash, opens a session and a run, and returns
 * the first pending step with fresh tokens. One write transaction.
 * @module
 */
import type { DomainEvent } from "../events.ts";
import type { EngineDeps, NodeRecord } from "../ports.ts";
import {
  applyPreferences,
  DEFAULT_PREFERENCES,
  type PreferencesPatch,
  recommendationWarnings,
} from "../preferences.ts";
import { ok, type Result } from "../result.ts";
import type { StepResponse } from "../responses.ts";
import { currentStep, initialState } from "../workflow/interpreter.ts";
import { findWorkflow } from "./inspect_workflow.ts";
import { deriveNodeId, guard, randomHex, responseFor } from "./shared.ts";

/** Input of {@linkcode startWorkflow}. */
export interface StartInput {
  /** Which workflow. */
  workflowId: string;
  /** External facts that conditions and placeholders read. */
  context?: Record<string, unknown>;
  /** What this run is for; becomes the session title. */
  goal?: string;
  /** Preferences for this session, over the defaults. */
  preferences?: PreferencesPatch;
}

/** Starts a run of a workflow. */
export function startWorkflow(deps: EngineDeps, input: StartInput): Promise<Result<StepResponse>> {
  return guard(async () => {
    const found = findWorkflow(await deps.workflows.load(), input.workflowId);
    if (!found.ok) return found;
    const workflow = found.value;
    const { compiled, hash } = workflow;
    const sessionId = randomHex(deps, 8);
    const runId = randomHex(deps, 8);
    const context = input.context ?? {};
    const preferences = applyPreferences(
      deps.defaultPreferences ?? DEFAULT_PREFERENCES,
      input.preferences,
    );
    const state = initialState(compiled, context);
    const root: NodeRecord = {
      sessionId,
      runId,
      nodeId: await deriveNodeId(["root", runId]),
      parentId: null,
      nodeKind: "step",
      depth: 0,
      state,
      context,
      preferences,
      pendingStepId: currentStep(compiled, state)?.id ?? null,
      edgeKind: null,
      notesMarkdown: null,
      notesStepId: null,
    };
    const warnings = [
      ...workflow.warnings,
      ...recommendationWarnings(preferences, compiled.recommendedPreferences),
    ];
    const response = responseFor(deps, root, compiled, { workflowHash: hash, warnings });
    if (compiled.metaGuidance.length > 0) response.metaGuidance = compiled.metaGuidance;
    await deps.store.write(async (tx) => {
      const known = await tx.getSnapshot(hash);
      const { edgeKind: _e, notesMarkdown: _n, notesStepId: _s, ...facts } = root;
      const events: DomainEvent[] = [
        { kind: "session_created", sessionId, title: input.goal ?? compiled.name },
        {
          kind: "run_started",
          sessionId,
          runId,
          workflowId: compiled.id,
          workflowHash: hash,
          goal: input.goal ?? null,
        },
        {
          kind: "workflow_pinned",
          sessionId,
          runId,
          workflowHash: hash,
          compiled: known ? null : compiled,
        },
        { kind: "node_created", ...facts },
      ];
      await tx.append(events);
    });
    return ok(response);
  });
}
