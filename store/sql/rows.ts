/**
 * Decoding stored rows into engine records: the one read path for JSON columns, nodes,
 * attempts and pinned snapshots, used by the store's reader and by the viewer's reads alike.
 * A row that fails its schema is storage corruption, never a crash; the viewer, which only
 * shows data, asks for a fallback instead.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { tokenUsageSchema } from "../../engine/cost/usage.ts";
import { createHash } from "node:crypto";
import { canonicalJson } from "../../engine/common/hash.ts";
import { runLabel } from "../../engine/model/ids.ts";
import type { AttemptRecord, NodeRecord, RunOwnership } from "../../engine/model/ports.ts";
import { type Principal, principalSchema } from "../../engine/access/principal.ts";
import { evidenceSchema } from "../../engine/verification/evidence.ts";
import { autonomySchema, riskPolicySchema } from "../../engine/model/preferences.ts";
import { InvariantViolationError, StorageCorruptionError } from "../../engine/model/result.ts";
import {
  ATTEMPT_OUTCOMES,
  EDGE_KINDS,
  isMember,
  NODE_KINDS,
  RUN_ACCESS,
  SESSION_KINDS,
  type SessionKind,
} from "../../engine/model/vocabulary.ts";
import { type CompiledWorkflow, normalizeCompiled } from "../../engine/workflow/compiled.ts";
import type { RunState } from "../../engine/workflow/interpreter.ts";

/** SHA-256 hex, synchronously: digests are computed on every append and replay. */
export function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function buildJsonText<T extends z.ZodType>(schema: T) {
  return z.string().transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "is not valid JSON" });
      return z.NEVER;
    }
  }).pipe(schema);
}

/** Each schema's {@linkcode jsonText}: building a zod schema costs far more than running it. */
const jsonTexts = new WeakMap<z.ZodType, z.ZodType>();

/** A text column holding JSON that must match `schema` (built once per schema). */
function jsonText<T extends z.ZodType>(schema: T): ReturnType<typeof buildJsonText<T>> {
  let built = jsonTexts.get(schema);
  if (!built) jsonTexts.set(schema, built = buildJsonText(schema));
  return built as ReturnType<typeof buildJsonText<T>>;
}

/** `nodes.state`: a v1 (`{v: 1, pc}`) or v2 interpreter state; the interpreter reads both. */
export const stateColumn = z.looseObject({ pc: z.number() });
/**
 * `nodes.context`: an object of context variables, kept exactly as parsed (a schema's copy would
 * drop a `__proto__` key, which is data here).
 */
export const contextColumn = z.custom<Record<string, unknown>>(
  (value) => value !== null && typeof value === "object" && !Array.isArray(value),
  { message: "is not an object" },
);
/** `nodes.preferences`: the preferences in effect (unknown keys are dropped). */
export const preferencesColumn = z.object({
  autonomy: autonomySchema,
  riskPolicy: riskPolicySchema,
});
/** `outputs.artifacts`: the artifacts recorded with an output. */
export const artifactsColumn = z.array(z.unknown());
/** What the viewer reads of `attempts.response`: its blockers and gaps. */
export const responseColumn = z.looseObject({
  blockers: z.array(z.unknown()).optional(),
  gaps: z.array(z.unknown()).optional(),
});
/** A `usage_recorded` event's `node_events.payload`, as the run's total is read from it. */
export const runTotalColumn = z.looseObject({ runTotal: tokenUsageSchema.nullable() });
/** An `evidence_recorded` event's `node_events.payload`, as recaps read it: the evidence. */
export const evidenceColumn = evidenceSchema;
/** `node_events.payload`, as the viewer reads it: an event with its kind. */
export const eventColumn = z.looseObject({ kind: z.string() });
/** `workflow_snapshots.compiled`, before normalisation to the current compiled format. */
const snapshotColumn = z.looseObject({ id: z.string(), steps: z.array(z.unknown()) });

/** A node row as the reader selects it: the node, its edge kind, the notes recorded on arrival. */
const nodeRowSchema = z.object({
  run_id: z.string(),
  node_id: z.string(),
  session_id: z.string(),
  parent_id: z.string().nullable(),
  node_kind: z.enum(NODE_KINDS),
  depth: z.number(),
  state: jsonText(stateColumn),
  context: jsonText(contextColumn),
  preferences: jsonText(preferencesColumn),
  pending_step_id: z.string().nullable(),
  edge_kind: z.enum(EDGE_KINDS).nullable(),
  notes_markdown: z.string().nullable(),
  notes_step_id: z.string().nullable(),
  step_count: z.number(),
  created_at: z.string().optional(),
});

/** The columns of a node row as selected, before they are checked. */
export type NodeRow =
  & Record<keyof z.input<typeof nodeRowSchema>, unknown>
  & { run_id: string; node_id: string; session_id: string };

/** Where an issue was found, for the corruption message. */
function issuePath(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.join(".") || "row"} ${issue.message}` : "row";
}

/** A node record from its row; a row that fails its schema is storage corruption. */
export function decodeNode(row: NodeRow): NodeRecord {
  const parsed = nodeRowSchema.safeParse(row);
  if (!parsed.success) {
    throw new StorageCorruptionError(
      `Stored node ${row.node_id} of run ${runLabel(row.run_id)} fails its shape check (${
        issuePath(parsed.error)
      })`,
      row.session_id,
    );
  }
  const r = parsed.data;
  return {
    sessionId: r.session_id,
    runId: r.run_id,
    nodeId: r.node_id,
    parentId: r.parent_id,
    nodeKind: r.node_kind,
    depth: r.depth,
    state: r.state as unknown as RunState,
    context: r.context,
    preferences: r.preferences,
    pendingStepId: r.pending_step_id,
    edgeKind: r.edge_kind,
    notesMarkdown: r.notes_markdown,
    notesStepId: r.notes_step_id,
    stepCount: r.step_count,
    ...(r.created_at === undefined ? {} : { createdAt: r.created_at }),
  };
}

/** An attempt row with its session's id and health. */
export interface StoredAttemptRow {
  /** `attempts.node_id`. */
  node_id: string;
  /** `attempts.attempt_id`. */
  attempt_id: string;
  /** `attempts.outcome`. */
  outcome: string;
  /** `attempts.result_node_id`. */
  result_node_id: string;
  /** `attempts.response`. */
  response: string;
  /** `attempts.response_digest`. */
  response_digest: string;
  /** `attempts.payload_digest`. */
  payload_digest: string | null;
  /** The run's session. */
  session_id: string;
  /** `sessions.health`. */
  health: string;
  /** `runs.run_id`. */
  run_id: string;
  /** `runs.owner`. */
  owner: string | null;
  /** `runs.access`. */
  access: string | null;
}

const outcomeSchema = z.enum(ATTEMPT_OUTCOMES);

/**
 * An attempt record from its row, once its response matches its digest and its outcome is
 * one the engine knows; otherwise storage corruption.
 */
export function decodeAttempt(row: StoredAttemptRow): AttemptRecord {
  const what = `attempt ${row.attempt_id} on node ${row.node_id}`;
  if (digest(row.response) !== row.response_digest) {
    throw new StorageCorruptionError(
      `The recorded response of ${what} fails its digest check`,
      row.session_id,
    );
  }
  const outcome = outcomeSchema.safeParse(row.outcome);
  if (!outcome.success) {
    throw new StorageCorruptionError(`The recorded outcome of ${what} is unknown`, row.session_id);
  }
  return {
    nodeId: row.node_id,
    attemptId: row.attempt_id,
    outcome: outcome.data,
    resultNodeId: row.result_node_id,
    response: row.response,
    sessionId: row.session_id,
    corrupt: row.health === "corrupt",
    payloadDigest: row.payload_digest,
    ...decodeOwnership(row),
  };
}

/** The columns of a run row that say who owns it. */
export interface OwnerColumns {
  /** `runs.run_id`. */
  run_id: string;
  /** `runs.session_id`. */
  session_id: string;
  /** `runs.owner`: the starting principal as JSON, or `null`. */
  owner: string | null;
  /** `runs.access`. */
  access: string | null;
}

const accessSchema = z.enum(RUN_ACCESS);

/**
 * Who owns a run, from its row. An owner or access that does not decode is storage corruption:
 * the team policy's guard must never lift because a column was damaged.
 */
export function decodeOwnership(row: OwnerColumns): RunOwnership {
  if (row.owner === null) return { runId: row.run_id, owner: null, access: null };
  const owner = jsonText(principalSchema).safeParse(row.owner);
  const access = accessSchema.safeParse(row.access);
  if (!owner.success || !access.success) {
    throw new StorageCorruptionError(
      `The owner of run ${row.run_id} does not decode`,
      row.session_id,
    );
  }
  return { runId: row.run_id, owner: owner.data, access: access.data };
}

/** A principal column (`nodes.made_by`, `runs.owner`) for display: `null` when absent or unreadable. */
export function decodePrincipal(text: string | null | undefined): Principal | null {
  return decodeJsonOr(principalSchema, text, null);
}

/** `sessions.kind` as a session kind: anything but a notes session holds workflow runs. */
export function decodeSessionKind(kind: string): SessionKind {
  return isMember(SESSION_KINDS, kind) ? kind : "workflow";
}

/**
 * A pinned snapshot read as the current compiled format (format-1 snapshots still run and
 * still show); one that is not JSON or not a workflow is storage corruption.
 */
export function decodeSnapshot(text: string, hash: string): CompiledWorkflow {
  const parsed = jsonText(snapshotColumn).safeParse(text);
  if (!parsed.success) {
    throw new StorageCorruptionError(
      `The pinned workflow ${hash} is not a stored workflow (${issuePath(parsed.error)})`,
      null,
    );
  }
  return normalizeCompiled(parsed.data as unknown as CompiledWorkflow);
}

/**
 * A pinned snapshot for a run to execute: decoded as {@linkcode decodeSnapshot} does, after
 * checking that its stored JSON hashes to the key it is stored under. Bad JSON is corruption;
 * content that hashes to another key breaks the pinning invariant (`INVARIANT_VIOLATION`).
 */
export function decodePinnedSnapshot(text: string, hash: string): CompiledWorkflow {
  const compiled = decodeSnapshot(text, hash);
  checkSnapshotHash(text, hash);
  return compiled;
}

/** Throws `InvariantViolationError` unless a snapshot's stored JSON hashes to `hash`. */
export function checkSnapshotHash(text: string, hash: string): void {
  const contentHash = `sha256:${digest(canonicalJson(JSON.parse(text)))}`;
  if (contentHash === hash) return;
  throw new InvariantViolationError(
    `The pinned workflow ${hash} does not match its stored content, which hashes to ${contentHash}`,
    { invariant: "snapshot_hash", workflowHash: hash, contentHash },
  );
}

/** A JSON column decoded by `schema`, or `fallback` when it is absent, not JSON or off-schema. */
export function decodeJsonOr<T extends z.ZodType, F>(
  schema: T,
  text: string | null | undefined,
  fallback: F,
): z.output<T> | F {
  if (text === null || text === undefined) return fallback;
  const parsed = jsonText(schema).safeParse(text);
  return parsed.success ? parsed.data : fallback;
}
