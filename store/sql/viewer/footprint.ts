/**
 * Each step's footprint as the viewer and `sessions show` read it: how long the step took (its
 * node's creation after its parent's, both as the store recorded them), the files it changed (the
 * node's `snapshot_recorded` event), the verification evidence recorded there, and the tokens the
 * host's model calls cost in it (`usage_recorded`). Read along one branch, root first.
 * @module
 */
import { sql } from "npm:kysely@0.29.9";
import { z } from "npm:zod@4.6.7";
import {
  addUsage,
  NO_USAGE,
  type TokenUsage,
  tokenUsageSchema,
} from "../../../engine/cost/usage.ts";
import { ancestorsCte } from "../graph_sql.ts";
import { decodeJsonOr, eventColumn } from "../rows.ts";
import type { NodeAt } from "./run.ts";
import type { ViewerDb } from "./sessions_list.ts";

/** Most steps whose footprints are read along one branch (the nearest the node are kept). */
export const MAX_FOOTPRINT_STEPS = 100;

/** The node events a footprint is made of. */
const FOOTPRINT_KINDS = ["snapshot_recorded", "evidence_recorded", "usage_recorded"] as const;

const changedFile = z.looseObject({
  path: z.string(),
  status: z.string(),
  linesAdded: z.number().catch(0),
  linesRemoved: z.number().catch(0),
});

/** What a snapshot says changed since the parent node's (as `snapshot_recorded` records it). */
const changesSchema = z.looseObject({
  added: z.number().catch(0),
  modified: z.number().catch(0),
  deleted: z.number().catch(0),
  linesAdded: z.number().catch(0),
  linesRemoved: z.number().catch(0),
  files: z.array(changedFile).catch([]),
  diff: z.string().catch(""),
  diffTruncated: z.boolean().catch(false),
});

/** Files a step changed, with their unified diff (cut with a marker when large). */
export type StepChanges = z.infer<typeof changesSchema>;

const snapshotEvent = z.looseObject({
  kind: z.literal("snapshot_recorded"),
  snapshot: z.looseObject({
    commit: z.string().nullable().catch(null),
    dirty: z.boolean().catch(false),
  }).nullable().catch(null),
  changes: changesSchema.nullable().catch(null),
  notice: z.unknown().optional(),
});
const evidenceEvent = z.looseObject({
  kind: z.literal("evidence_recorded"),
  verdict: z.string(),
  commandLine: z.string().catch(""),
  exitCode: z.number().nullable().catch(null),
});
const usageEvent = z.looseObject({
  kind: z.literal("usage_recorded"),
  source: z.string().catch("unknown"),
  usage: tokenUsageSchema.nullable().catch(null),
  notice: z.looseObject({ code: z.string(), message: z.string() }).nullable().catch(null),
});

/** One step's footprint. */
export interface StepFootprint {
  /** The node the step's acknowledgement (or checkpoint) created. */
  nodeId: string;
  /** Its kind (`step`, `checkpoint`, `blocked_attempt`). */
  kind: string;
  /** The step acknowledged to get here (its parent's pending step); `null` at the root. */
  completedStepId: string | null;
  /** ISO time of the node's creation. */
  createdAt: string;
  /** Milliseconds from the parent node's creation to this one's; `null` at the root. */
  durationMs: number | null;
  /** What the step changed in the workspace; `null` when no snapshot was recorded. */
  changes: StepChanges | null;
  /** The node's snapshot commit and whether the files differed from HEAD, when one was taken. */
  snapshot: { commit: string; dirty: boolean } | null;
  /** Why there is no snapshot, when the server said (not a git repository, over its budget). */
  snapshotNotice: string | null;
  /** The verification the server ran on the acknowledgement, when one was recorded. */
  evidence: { verdict: string; commandLine: string; exitCode: number | null } | null;
  /** The host's tokens in the step, when its transcript was read. */
  tokens: TokenUsage | null;
  /** Why tokens are missing or partial, when they are. */
  tokensNotice: string | null;
}

/** Options of {@linkcode getStepFootprints}. */
export interface FootprintOptions {
  /** Most steps (default {@linkcode MAX_FOOTPRINT_STEPS}). */
  limit?: number;
  /** Whether to keep each step's diff text (the chart and listings need only the counts). */
  withDiff?: boolean;
}

/** The footprints of the branch from the root to a node, root first. */
export async function getStepFootprints(
  db: ViewerDb,
  at: NodeAt,
  options: FootprintOptions = {},
): Promise<StepFootprint[]> {
  const result = await sql<{
    node_id: string;
    node_kind: string;
    created_at: string;
    parent_created: string | null;
    parent_pending: string | null;
    hop: number;
  }>`
    ${ancestorsCte(at.runId, at.nodeId, options.limit ?? MAX_FOOTPRINT_STEPS)}
    SELECT n.node_id, n.node_kind, n.created_at, up.hop,
           p.created_at AS parent_created, p.pending_step_id AS parent_pending
    FROM up JOIN nodes n ON n.run_id = ${at.runId} AND n.node_id = up.node_id
    LEFT JOIN nodes p ON p.run_id = n.run_id AND p.node_id = n.parent_id
    ORDER BY up.hop DESC`.execute(db);
  const rows = result.rows;
  const events = await footprintEvents(db, at.runId, rows.map((r) => r.node_id));
  return rows.map((r) => {
    const steps: StepFootprint = {
      nodeId: r.node_id,
      kind: r.node_kind,
      completedStepId: r.parent_created === null ? null : r.parent_pending,
      createdAt: r.created_at,
      durationMs: r.parent_created === null ? null : elapsed(r.parent_created, r.created_at),
      changes: null,
      snapshot: null,
      snapshotNotice: null,
      evidence: null,
      tokens: null,
      tokensNotice: null,
    };
    for (const payload of events.get(r.node_id) ?? []) fold(steps, payload, options);
    return steps;
  });
}

function elapsed(from: string, to: string): number | null {
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}

async function footprintEvents(
  db: ViewerDb,
  runId: string,
  nodeIds: string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (let i = 0; i < nodeIds.length; i += 500) {
    const rows = await db.selectFrom("node_events").select(["node_id", "payload"])
      .where("run_id", "=", runId).where("node_id", "in", nodeIds.slice(i, i + 500))
      .where("kind", "in", [...FOOTPRINT_KINDS]).orderBy("seq").execute();
    for (const row of rows) out.set(row.node_id, [...out.get(row.node_id) ?? [], row.payload]);
  }
  return out;
}

function noticeText(notice: unknown): string | null {
  if (typeof notice === "string") return notice;
  if (notice && typeof notice === "object" && "message" in notice) {
    return String((notice as { message: unknown }).message);
  }
  return null;
}

/** Adds one stored event to a footprint; a payload that fails its shape adds nothing. */
function fold(step: StepFootprint, payload: string, options: FootprintOptions): void {
  const event = decodeJsonOr(eventColumn, payload, null);
  if (event?.kind === "snapshot_recorded") {
    const snapshot = snapshotEvent.safeParse(event);
    if (!snapshot.success) return;
    const { changes, notice } = snapshot.data;
    const commit = snapshot.data.snapshot?.commit;
    if (commit) step.snapshot = { commit, dirty: snapshot.data.snapshot?.dirty ?? false };
    step.changes = changes && options.withDiff === false ? { ...changes, diff: "" } : changes;
    step.snapshotNotice = noticeText(notice);
  } else if (event?.kind === "evidence_recorded") {
    const evidence = evidenceEvent.safeParse(event);
    if (!evidence.success) return;
    const { verdict, commandLine, exitCode } = evidence.data;
    step.evidence = { verdict, commandLine, exitCode };
  } else if (event?.kind === "usage_recorded") {
    const usage = usageEvent.safeParse(event);
    if (!usage.success) return;
    step.tokens = usage.data.usage;
    step.tokensNotice = usage.data.notice?.message ?? null;
  }
}

/** A run's tokens over every branch (abandoned ones too: they were paid for), and steps counted. */
export async function sumRunTokens(
  db: ViewerDb,
  runId: string,
): Promise<{ total: TokenUsage; steps: number } | null> {
  const rows = await db.selectFrom("node_events").select("payload")
    .where("run_id", "=", runId).where("kind", "=", "usage_recorded").execute();
  if (rows.length === 0) return null;
  let total = NO_USAGE;
  let steps = 0;
  for (const row of rows) {
    const usage = decodeJsonOr(usageEvent, row.payload, null)?.usage;
    if (usage) {
      total = addUsage(total, usage);
      steps++;
    }
  }
  return { total, steps };
}
