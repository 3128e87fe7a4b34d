/**
 * `start_workflow`: pins the compiled workflow by hash, opens a session and a run, and returns
 * the first pending step with fresh tokens. One write transaction.
 * @module
 */
import type { DomainEvent } from "../model/events.ts";
import type { EngineDeps, NodeRecord } from "../model/ports.ts";
import {
  applyPreferences,
  DEFAULT_PREFERENCES,
  type PreferencesPatch,
  recommendationWarnings,
} from "../model/preferences.ts";
import { checkContext } from "../model/limits.ts";
import { fail, ok, type Result } from "../model/result.ts";
import type { StepResponse } from "../answers/responses.ts";
import type { Warning } from "../workflow/catalog.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import type { SessionKind } from "../model/vocabulary.ts";
import { lookupWorkflow } from "./inspect_workflow.ts";
import { randomHex, sessionLabel } from "../model/ids.ts";
import { guard } from "../run/error_guard.ts";
import {
  noticeWarning,
  snapshotEvent,
  snapshotFolder,
  snapshotForStart,
} from "../run/snapshot_step.ts";
import type { CallOptions } from "../run/record_attempt.ts";
import { nodeCreated, rootNode } from "../run/node_events.ts";
import { responseFor } from "../answers/node_response.ts";
import { arrive } from "../run/arrive.ts";
import { loadDelegates } from "../run/delegations.ts";
import { startDelegated } from "./start_delegated.ts";

/** Input of {@linkcode startWorkflow}: a workflow id, or a delegation token (and nothing else). */
export interface StartInput {
  /** Which workflow. */
  workflowId?: string;
  /** A child run a parallel step opened: drive it (its preferred tip, fresh tokens). */
  delegationToken?: string;
  /** External facts that conditions and placeholders read. */
  context?: Record<string, unknown>;
  /** What this run is for; becomes the session title. */
  goal?: string;
  /** Preferences for this session, over the defaults. */
  preferences?: PreferencesPatch;
}

/** Options of {@linkcode startWorkflow}. */
export interface StartOptions {
  /** The caller's workspace, recorded as the run's first observation. */
  workspace?: WorkspaceObservation;
  /** Told the new session (`ses_…`) after its events committed. */
  onAppend?: (sessionId: string) => void;
  /** Told the run's root node after it committed (see {@linkcode CallOptions.onAnswered}). */
  onAnswered?: CallOptions["onAnswered"];
}

/** Starts a run of a workflow. */
export function startWorkflow(
  deps: EngineDeps,
  input: StartInput,
  options: StartOptions = {},
): Promise<Result<StepResponse>> {
  return guard(async () => {
    if (input.delegationToken !== undefined) return await startDelegated(deps, input);
    if (input.workflowId === undefined) {
      return fail(
        "INVALID_ARGUMENTS",
        "start_workflow needs `workflowId` (or a `delegationToken`).",
        {
          details: { field: "workflowId" },
        },
      );
    }
    const checked = checkContext(input.context);
    if (!checked.ok) return checked;
    const found = await lookupWorkflow(deps.workflows, input.workflowId);
    if (!found.ok) return found;
    const workflow = found.value;
    return await beginRun(deps, {
      compiled: workflow.compiled,
      hash: workflow.hash,
      warnings: workflow.warnings,
      title: input.goal ?? workflow.compiled.name,
      goal: input.goal ?? null,
      context: input.context ?? {},
      preferences: input.preferences,
      sessionKind: "workflow",
    }, options);
  });
}

/** What {@linkcode beginRun} opens. */
export interface NewRun {
  /** The compiled workflow to pin. */
  compiled: CompiledWorkflow;
  /** Its hash. */
  hash: string;
  /** Load warnings to pass on. */
  warnings: Warning[];
  /** Session title. */
  title: string;
  /** The run's goal. */
  goal: string | null;
  /** Initial context. */
  context: Record<string, unknown>;
  /** Preference changes over the defaults. */
  preferences?: PreferencesPatch;
  /** Session kind. */
  sessionKind: SessionKind;
}

/** Opens a session with one run of a compiled workflow, in one write transaction. */
export async function beginRun(
  deps: EngineDeps,
  run: NewRun,
  options: StartOptions = {},
): Promise<Result<StepResponse>> {
  const { compiled, hash, context } = run;
  const sessionId = randomHex(deps, 8);
  const runId = randomHex(deps, 8);
  const preferences = applyPreferences(
    deps.defaultPreferences ?? DEFAULT_PREFERENCES,
    run.preferences,
  );
  const root = await rootNode(compiled, { sessionId, runId, context, preferences });
  const warnings = [
    ...run.warnings,
    ...recommendationWarnings(preferences, compiled.recommendedPreferences),
  ];
  const delegates = await loadDelegates(deps, compiled);
  if (!delegates.ok) return delegates;
  const taken = await snapshotForStart(deps, { runId, workspace: snapshotFolder(options) });
  const response = await deps.store.write(async (tx) => {
    const answer = responseFor(deps, root, compiled, { workflowHash: hash, warnings });
    noticeWarning(answer, taken);
    if (compiled.metaGuidance.length > 0) answer.metaGuidance = compiled.metaGuidance;
    const pinned = await tx.hasSnapshot(hash);
    const arrived = await arrive({ ...deps, store: tx }, {
      acked: null,
      created: root,
      compiled,
      response: answer,
      delegates: delegates.value,
    });
    await tx.append([
      ...runEvents(run, { root, pinned, workspace: options.workspace }),
      ...(taken ? [snapshotEvent(taken, root)] : []),
      ...arrived,
    ]);
    return answer;
  });
  options.onAppend?.(sessionLabel(root.sessionId));
  options.onAnswered?.({ node: root, compiled, artifacts: [] });
  return ok(response);
}

/** The events that open a run: session, run, pinned snapshot (once per hash), root, workspace. */
function runEvents(
  run: NewRun,
  at: { root: NodeRecord; pinned: boolean; workspace?: WorkspaceObservation },
): DomainEvent[] {
  const { sessionId, runId, nodeId } = at.root;
  return [
    {
      kind: "session_created",
      sessionId,
      title: run.title,
      ...(run.sessionKind === "notes" ? { sessionKind: "notes" as const } : {}),
    },
    {
      kind: "run_started",
      sessionId,
      runId,
      workflowId: run.compiled.id,
      workflowHash: run.hash,
      goal: run.goal,
    },
    {
      kind: "workflow_pinned",
      sessionId,
      runId,
      workflowHash: run.hash,
      compiled: at.pinned ? null : run.compiled,
    },
    ...nodeCreated(at.root),
    ...(at.workspace
      ? [{ kind: "observation_recorded" as const, sessionId, runId, nodeId, ...at.workspace }]
      : []),
  ];
}
