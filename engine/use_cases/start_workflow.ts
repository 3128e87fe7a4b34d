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
import { canonicalJson, sha256HexSync } from "../common/hash.ts";
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
  /**
   * Makes a retried start open one run: the run's ids and its first tokens derive from this key
   * (which the adapter scopes to its caller) and the start's input, so a start sent again finds
   * its run already written and answers, byte for byte, what the first one did.
   */
  replayKey?: string;
}

/**
 * Random bytes that are a function of `seed`: SHA-256 of the seed and a counter, in turn.
 * Used in place of the clock-free randomness for a keyed start, so its ids and tokens repeat.
 */
function seededRandom(seed: string): EngineDeps["random"] {
  let counter = 0;
  let pool = new Uint8Array(0);
  return {
    bytes(n) {
      while (pool.length < n) {
        const block = sha256HexSync(`${seed}|${counter++}`);
        const bytes = Uint8Array.from(block.match(/../g)!, (h) => parseInt(h, 16));
        const grown = new Uint8Array(pool.length + bytes.length);
        grown.set(pool);
        grown.set(bytes, pool.length);
        pool = grown;
      }
      const out = pool.slice(0, n);
      pool = pool.slice(n);
      return out;
    },
  };
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
    // the key with what was asked and the workflow it found: a different request opens its own run
    const seed = options.replayKey === undefined ? undefined : sha256HexSync(
      canonicalJson({ key: options.replayKey, input, hash: workflow.hash }),
    );
    return await beginRun(deps, {
      replaySeed: seed,
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
  /** A keyed start's seed: ids and tokens derive from it (`StartOptions.replayKey`). */
  replaySeed?: string;
}

/** Opens a session with one run of a compiled workflow, in one write transaction. */
export async function beginRun(
  deps: EngineDeps,
  run: NewRun,
  options: StartOptions = {},
): Promise<Result<StepResponse>> {
  const { compiled, hash, context } = run;
  const seed = run.replaySeed;
  const ids = seed === undefined ? deps : { random: seededRandom(seed) };
  const sessionId = randomHex(ids, 8);
  const runId = randomHex(ids, 8);
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
    // each try mints from the start of its stream, so a keyed start's repeat mints the same
    const minting = seed === undefined ? deps : { ...deps, random: seededRandom(`${seed}|answer`) };
    const answer = responseFor(minting, root, compiled, { workflowHash: hash, warnings });
    noticeWarning(answer, taken);
    if (compiled.metaGuidance.length > 0) answer.metaGuidance = compiled.metaGuidance;
    const pinned = await tx.hasSnapshot(hash);
    const arrived = await arrive({ ...minting, store: tx }, {
      acked: null,
      created: root,
      compiled,
      response: answer,
      delegates: delegates.value,
    });
    // a keyed start sent again finds its run written: it answers what the first did
    if (seed !== undefined && await tx.getNode(runId, root.nodeId)) return answer;
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
