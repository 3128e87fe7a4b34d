/**
 * The database's tables as Kysely types, so a query naming a wrong table or column fails to
 * compile. `events` is the truth; every other table is a projection of it.
 * @module
 */
import type { Generated, GeneratedAlways } from "npm:kysely@0.29.9";

/** The append-only log. */
export interface EventsTable {
  seq: Generated<number>;
  session_id: string;
  run_id: string | null;
  kind: string;
  payload: string;
  /** `sha256` of `kind` and `payload`, checked when the log is verified. */
  digest: string;
  at: string;
  /** The event's place in its session's log: 1, 2, 3, ... with no gaps (`0010_log_positions`). */
  position: number | null;
}

/** One row per session. */
export interface SessionsTable {
  session_id: string;
  title: string;
  created_at: string;
  updated_at: string;
  /** `healthy` or `corrupt`. */
  health: string;
  event_count: number;
  /** `workflow`, or `notes` for a checkpoint-only session. */
  kind: Generated<string>;
  /** `updated_at` through the minute, derived by the database (`activity_minutes.ts`). */
  updated_minute: GeneratedAlways<string>;
}

/** One row per run. */
export interface RunsTable {
  run_id: string;
  session_id: string;
  workflow_id: string;
  workflow_hash: string;
  goal: string | null;
  created_at: string;
  updated_at: string;
  /** The newest node. */
  last_node_id: string | null;
  /** `running` or `complete` (some branch reached the end). */
  status: string;
  node_count: number;
  /** The latest workspace observation of the run. */
  workspace: string | null;
  git_branch: string | null;
  git_head_sha: string | null;
  /** The principal who started it, as JSON; `null` for an unauthenticated start. */
  owner: string | null;
  /** Its subject, to find a principal's runs. */
  owner_subject: string | null;
  /** Who besides its owner may act on it (`owner` or `team`); `null` without an owner. */
  access: string | null;
  /** `updated_at` through the minute, derived by the database (`activity_minutes.ts`). */
  updated_minute: GeneratedAlways<string>;
}

/** Compiled workflows by hash; immutable. */
export interface WorkflowSnapshotsTable {
  workflow_hash: string;
  workflow_id: string;
  compiled: string;
  created_at: string;
}

/** Run graph nodes. */
export interface NodesTable {
  run_id: string;
  node_id: string;
  session_id: string;
  parent_id: string | null;
  node_kind: string;
  depth: number;
  state: string;
  /** The context inline (rows written before `0003_context_refs`), or `''` with `context_id`. */
  context: string;
  /** The node's context in `contexts`, or `null` for a row that keeps it inline. */
  context_id: string | null;
  preferences: string;
  pending_step_id: string | null;
  is_complete: number;
  created_seq: number;
  created_at: string;
  /** Step nodes from the root to this node, itself included. */
  step_count: Generated<number>;
  /** The principal whose call made the node, as JSON; `null` for an unauthenticated call. */
  made_by: string | null;
}

/** Each distinct context of a run, once: nodes point at it by `context_id`. */
export interface ContextsTable {
  run_id: string;
  /** `sha256` of `context`. */
  context_id: string;
  context: string;
}

/** Run graph edges. */
export interface EdgesTable {
  run_id: string;
  from_id: string;
  to_id: string;
  edge_kind: string;
  created_seq: number;
}

/** Attempts (acks and checkpoints) with their exact responses. */
export interface AttemptsTable {
  run_id: string;
  node_id: string;
  attempt_id: string;
  attempt_kind: string;
  outcome: string;
  result_node_id: string;
  response: string;
  response_digest: string;
  created_seq: number;
  /** The digest of the payload the attempt was made with (`null` before `0004`). */
  payload_digest: string | null;
}

/** Durable outputs, attached to the node they led to. */
export interface OutputsTable {
  run_id: string;
  node_id: string;
  step_id: string | null;
  notes_markdown: string | null;
  artifacts: string;
  created_seq: number;
}

/** Workspace observations (the projection of `observation_recorded`). */
export interface ObservationsTable {
  seq: number;
  session_id: string;
  run_id: string;
  node_id: string;
  workspace: string | null;
  git_branch: string | null;
  git_head_sha: string | null;
  at: string;
}

/** Runs on a workflow stack (the projection of `run_stacked`). */
export interface RunLinksTable {
  run_id: string;
  session_id: string;
  /** The sub-agent whose stack it is; `""` for the main agent. */
  agent_id: string;
  parent_run_id: string | null;
  parent_node_id: string | null;
  job_dir: string | null;
  created_seq: number;
  /** The connection holding the stack; `""` when unknown. */
  owner: string;
}

/** A delegated child run and the parent node whose parallel step opened it. */
export interface RunDelegationsTable {
  run_id: string;
  session_id: string;
  parent_run_id: string;
  parent_node_id: string;
  /** The parallel step's id. */
  step_id: string;
  /** The delegation's position in the step, from 0. */
  idx: number;
  created_seq: number;
}

/** Review passes (the projection of `review_passed`): one row per review passed per session. */
export interface ReviewPassesTable {
  session_id: string;
  review_id: string;
  rule: string;
  /** The files and their hashes, as JSON (`[{path, sha256}]`). */
  files: string;
  /** The principal who passed it, as JSON, or `null`. */
  principal: string | null;
  created_seq: number;
  created_at: string;
}

/** Events recorded at a node that the viewer shows there: reviews, gaps, an abort. */
export interface NodeEventsTable {
  seq: number;
  session_id: string;
  run_id: string;
  node_id: string;
  kind: string;
  payload: string;
}

/** An FTS5 table; `rowid` ties each row to its source row. */
export interface SearchTable {
  rowid: number;
  text: string;
}

/** Bundles imported, by the digest of the whole bundle (not a projection of the log). */
export interface BundleImportsTable {
  bundle_digest: string;
  /** The session the bundle became here (re-keyed when its id was taken). */
  session_id: string;
  /** The session id inside the bundle. */
  source_session_id: string;
  imported_at: string;
}

/** The workflow-file cache's index: a file at a version, its declared id and text digest. */
export interface WorkflowFilesTable {
  source: string;
  path: string;
  version: string;
  digest: string;
  workflow_id: string | null;
  written_at: string;
}

/** The workflow-file cache's outcomes: what loading the text with a digest gave, as JSON. */
export interface WorkflowOutcomesTable {
  digest: string;
  /** The routines compiled against, or `null` when the compiler used none. */
  routines_key: string | null;
  written_at: string;
  /** What listing shows of the outcome (summary or error), as JSON. */
  summary: string;
  outcome: string;
}

/** Values doctor set aside (text that was not UTF-8), as their bytes, never deleted. */
export interface QuarantineTable {
  /** The table the value was in. */
  table_name: string;
  /** Its row there (`rowid`). */
  row_key: string;
  /** Its column. */
  column_name: string;
  /** The value's bytes, in hex. */
  original_hex: string;
  /** What the value was replaced with (its readable rendering). */
  replaced_with: string;
  quarantined_at: string;
}

/** Personal access tokens (`0013_personal_tokens`): only each secret's SHA-256 is kept. */
export interface PersonalTokensTable {
  token_id: string;
  /** The name the creator gave; the principal's display name. */
  name: string;
  /** `person` or `bot`. */
  kind: string;
  /** Lowercase hex SHA-256 of the whole token. */
  token_hash: string;
  /** The scopes granted, space-separated. */
  scopes: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

/** The whole schema. */
export interface Database {
  events: EventsTable;
  sessions: SessionsTable;
  runs: RunsTable;
  workflow_snapshots: WorkflowSnapshotsTable;
  nodes: NodesTable;
  contexts: ContextsTable;
  edges: EdgesTable;
  attempts: AttemptsTable;
  outputs: OutputsTable;
  observations: ObservationsTable;
  run_links: RunLinksTable;
  run_delegations: RunDelegationsTable;
  node_events: NodeEventsTable;
  /** Review passes, found by review id. */
  review_passes: ReviewPassesTable;
  /** Layer 1: session title, goal and workflow id, by `runs.rowid`. */
  search_titles: SearchTable;
  /** Layer 2: the run's latest notes and artifact preview, by `runs.rowid`. */
  search_tips: SearchTable;
  /** Layer 3: every output, by `outputs.rowid`. */
  search_outputs: SearchTable;
  /** Bundles imported (`waymark import`). */
  bundle_imports: BundleImportsTable;
  /** The workflow-file cache (`store/workflow_files/cache.ts`). */
  workflow_files: WorkflowFilesTable;
  /** The workflow-file cache's outcomes. */
  workflow_outcomes: WorkflowOutcomesTable;
  /** What doctor set aside (`0011_quarantine`). */
  quarantine: QuarantineTable;
  /** Personal access tokens of the HTTP service (`personal_tokens.ts`). */
  personal_tokens: PersonalTokensTable;
}
