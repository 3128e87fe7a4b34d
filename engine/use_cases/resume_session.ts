/**
 * `resume_session`: read-only lookup for a brand-new chat. Layered search, most precise first
 * (ids; titles, goals and workflow ids; the run's latest notes and artifact previews; every
 * output), stopping as soon as enough runs matched; results are run tips only, ranked
 * deterministically with the caller's workspace (folder, git branch, HEAD), each with fresh
 * tokens. Writes nothing.
 * @module
 */
import { DEFAULT_RUN_ACCESS, refuseActor } from "../access/team_policy.ts";
import type { EngineDeps, RunHit } from "../model/ports.ts";
import { SEARCH_LAYERS, type SearchLayer } from "../model/vocabulary.ts";
import { ok, type Result } from "../model/result.ts";
import type { ResumeCandidate, ResumeResponse } from "../answers/responses.ts";
import { matchScore, matchWorkspace, type WorkspaceObservation } from "../model/workspace.ts";
import {
  idsInText,
  RUN_PREFIX,
  runLabel,
  SESSION_PREFIX,
  sessionLabel,
  stripLabel,
} from "../model/ids.ts";
import { guard } from "../run/error_guard.ts";
import { tokensFor } from "../answers/node_response.ts";

/** Input of {@linkcode resumeSession}. */
export interface ResumeInput {
  /** Words, a title, or a `ses_…`/`run_…` id; omit to list recent runs. */
  query?: string;
  /** How many candidates (default {@linkcode RESUME_DEFAULT_LIMIT}, at most {@linkcode RESUME_MAX_LIMIT}). */
  limit?: number;
}

/** Candidates one call returns when it names no `limit`. */
export const RESUME_DEFAULT_LIMIT = 5;
/** Most candidates one call returns. */
export const RESUME_MAX_LIMIT = 20;
/** Runs read per layer: enough to re-rank by workspace, bounded whatever the store holds. */
const LAYER_READ = 50;
const MAX_TERMS = 12;

/** Splits a query into hex ids and lower-case words (deduplicated, at most 12). */
export function parseQuery(query: string): { ids: string[]; terms: string[] } {
  const terms = new Set<string>();
  for (const m of query.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)) {
    const word = m[0].startsWith(SESSION_PREFIX)
      ? stripLabel(m[0], SESSION_PREFIX)
      : stripLabel(m[0], RUN_PREFIX);
    if (word.length >= 2 && terms.size < MAX_TERMS) terms.add(word);
  }
  return { ids: idsInText(query), terms: [...terms] };
}

interface Ranked {
  hit: RunHit;
  layer: SearchLayer;
  score: number;
}

/** The deterministic order of candidates. */
export function compareRanked(a: Ranked, b: Ranked): number {
  return b.score - a.score ||
    SEARCH_LAYERS.indexOf(a.layer) - SEARCH_LAYERS.indexOf(b.layer) ||
    Math.round((a.hit.relevance - b.hit.relevance) * 1e6) ||
    (a.hit.updatedAt < b.hit.updatedAt ? 1 : a.hit.updatedAt > b.hit.updatedAt ? -1 : 0) ||
    (a.hit.runId < b.hit.runId ? -1 : a.hit.runId > b.hit.runId ? 1 : 0);
}

/** Finds runs to resume. */
export function resumeSession(
  deps: EngineDeps,
  input: ResumeInput,
  options: { workspace?: WorkspaceObservation } = {},
): Promise<Result<ResumeResponse>> {
  return guard(async () => {
    const limit = Math.min(RESUME_MAX_LIMIT, Math.max(1, input.limit ?? RESUME_DEFAULT_LIMIT));
    const query = input.query?.trim() ? input.query.trim() : null;
    const current = options.workspace ?? null;
    const { ids, terms } = query ? parseQuery(query) : { ids: [], terms: [] };
    const layers: SearchLayer[] = [];
    if (ids.length > 0) layers.push("id");
    if (terms.length > 0) layers.push("title", "tip_notes", "deep");
    if (!query) layers.push("recent");
    const found = new Map<string, Ranked>();
    const searched: SearchLayer[] = [];
    for (const layer of layers) {
      if (found.size >= limit) break;
      searched.push(layer);
      const hits = await deps.store.searchRuns(layer, {
        terms,
        ids,
        workspace: current?.workspace ?? null,
        limit: LAYER_READ,
      });
      for (const hit of hits) {
        if (found.has(hit.runId)) continue;
        found.set(hit.runId, { hit, layer, score: matchScore(matchWorkspace(hit, current)) });
      }
    }
    const ranked = [...found.values()].sort(compareRanked).slice(0, limit);
    const candidates = ranked.map((r, i) => candidate(deps, { ...r, rank: i + 1, current }));
    return ok({
      query,
      workspace: current
        ? {
          workspace: current.workspace,
          gitBranch: current.gitBranch,
          gitHeadSha: current.gitHeadSha,
        }
        : null,
      searched,
      candidates,
      policy: "workspace_then_layer_then_relevance_then_recency",
    });
  });
}

/** A ranked hit as a candidate: the run's tip with fresh tokens and how its workspace matches. */
function candidate(
  deps: EngineDeps,
  at: Ranked & { rank: number; current: WorkspaceObservation | null },
): ResumeCandidate {
  const { hit, layer } = at;
  const isComplete = hit.tipPendingStepId === null;
  const tokens = tokensFor(deps, { runId: hit.runId, nodeId: hit.tipNodeId }, isComplete);
  return {
    rank: at.rank,
    sessionId: sessionLabel(hit.sessionId),
    runId: runLabel(hit.runId),
    title: hit.title,
    sessionKind: hit.sessionKind,
    workflowId: hit.workflowId,
    status: hit.status,
    updatedAt: hit.updatedAt,
    match: layer,
    snippet: hit.snippet,
    workspace: {
      workspace: hit.workspace,
      gitBranch: hit.gitBranch,
      gitHeadSha: hit.gitHeadSha,
      ...matchWorkspace(hit, at.current),
    },
    tip: {
      nodeId: hit.tipNodeId,
      pendingStepId: hit.tipPendingStepId,
      isComplete,
      ...tokens,
      ...(hit.tipMadeBy ? { madeBy: hit.tipMadeBy } : {}),
    },
    corrupt: hit.corrupt,
    ...(hit.owner
      ? {
        startedBy: hit.owner,
        access: hit.access ?? DEFAULT_RUN_ACCESS,
        mayContinue: refuseActor(hit, deps.principal) === null,
      }
      : {}),
    ...(hit.delegatedFrom
      ? {
        delegatedFrom: {
          parentRunId: runLabel(hit.delegatedFrom.parentRunId),
          parentStepId: hit.delegatedFrom.stepId,
          index: hit.delegatedFrom.index,
        },
      }
      : {}),
  };
}
