/**
 * The schema's migrations as plain code, shared by every dialect: Kysely's schema builder
 * writes each dialect's DDL, and the few parts that must differ (the log's own numbering, the
 * full-text tables) come from the dialect's `MigrationDialect` (`migration.ts`). Each dialect runs them
 * in order inside one transaction under the same names, so schema status compares across
 * dialects. Never edit a shipped migration; add the next one.
 * @module
 */
import { type Kysely, sql } from "npm:kysely@0.29.9";
import type { SchemaStatus } from "./dialect.ts";
import { activityMinutes } from "./activity_minutes.ts";
import type { Migration, MigrationDialect } from "./migration.ts";

export type { Migration, MigrationDialect } from "./migration.ts";

/** The log, sessions, runs and snapshots. */
async function createLogTables(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  await db.schema.createTable("events")
    .addColumn("seq", "integer", (c) => dialect.sequenceKey(c))
    .addColumn("session_id", "text", (c) => c.notNull())
    .addColumn("run_id", "text")
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("digest", "text", (c) => c.notNull())
    .addColumn("at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("events_by_session").on("events").columns(["session_id", "seq"])
    .execute();
  await db.schema.createTable("sessions")
    .addColumn("session_id", "text", (c) => c.primaryKey())
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("health", "text", (c) => c.notNull().defaultTo("healthy"))
    .addColumn("event_count", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createTable("runs")
    .addColumn("run_id", "text", (c) => c.primaryKey())
    .addColumn("session_id", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("workflow_hash", "text", (c) => c.notNull())
    .addColumn("goal", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("last_node_id", "text")
    .addColumn("status", "text", (c) => c.notNull().defaultTo("running"))
    .addColumn("node_count", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("runs_by_session").on("runs").columns(["session_id", "created_at"])
    .execute();
  await db.schema.createTable("workflow_snapshots")
    .addColumn("workflow_hash", "text", (c) => c.primaryKey())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("compiled", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
}

/** The run graph: nodes, edges, attempts and outputs. */
async function createGraphTables(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable("nodes")
    .addColumn("run_id", "text", (c) => c.notNull())
    .addColumn("node_id", "text", (c) => c.notNull())
    .addColumn("session_id", "text", (c) => c.notNull())
    .addColumn("parent_id", "text")
    .addColumn("node_kind", "text", (c) => c.notNull())
    .addColumn("depth", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("context", "text", (c) => c.notNull())
    .addColumn("preferences", "text", (c) => c.notNull())
    .addColumn("pending_step_id", "text")
    .addColumn("is_complete", "integer", (c) => c.notNull())
    .addColumn("created_seq", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("nodes_pk", ["run_id", "node_id"])
    .execute();
  await db.schema.createIndex("nodes_by_parent").on("nodes")
    .columns(["run_id", "parent_id", "created_seq"]).execute();
  await db.schema.createTable("edges")
    .addColumn("run_id", "text", (c) => c.notNull())
    .addColumn("from_id", "text", (c) => c.notNull())
    .addColumn("to_id", "text", (c) => c.notNull())
    .addColumn("edge_kind", "text", (c) => c.notNull())
    .addColumn("created_seq", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("edges_pk", ["run_id", "to_id"])
    .execute();
  await db.schema.createTable("attempts")
    .addColumn("run_id", "text", (c) => c.notNull())
    .addColumn("node_id", "text", (c) => c.notNull())
    .addColumn("attempt_id", "text", (c) => c.notNull())
    .addColumn("attempt_kind", "text", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("result_node_id", "text", (c) => c.notNull())
    .addColumn("response", "text", (c) => c.notNull())
    .addColumn("response_digest", "text", (c) => c.notNull())
    .addColumn("created_seq", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("attempts_pk", ["run_id", "node_id", "attempt_id", "attempt_kind"])
    .execute();
  await db.schema.createTable("outputs")
    .addColumn("run_id", "text", (c) => c.notNull())
    .addColumn("node_id", "text", (c) => c.notNull())
    .addColumn("step_id", "text")
    .addColumn("notes_markdown", "text")
    .addColumn("artifacts", "text", (c) => c.notNull())
    .addColumn("created_seq", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("outputs_pk", ["run_id", "node_id"])
    .execute();
}

const initial: Migration = {
  async up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
    await createLogTables(db, dialect);
    await createGraphTables(db);
  },
};

/**
 * Workspace observations, step counts, and full-text search for `resume_session`:
 * - `observations` (the projection of `observation_recorded` events) and the latest observation
 *   of each run on its row, indexed for ranking by workspace;
 * - `nodes.step_count`, the number of step nodes from the root to a node (progress);
 * - the dialect's full-text tables, one per search layer: titles, goals and workflow ids of
 *   each run; the latest output of each run (its tip's notes and artifact previews); every
 *   output (deep search).
 */
const resume: Migration = {
  async up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
    await db.schema.alterTable("runs").addColumn("workspace", "text").execute();
    await db.schema.alterTable("runs").addColumn("git_branch", "text").execute();
    await db.schema.alterTable("runs").addColumn("git_head_sha", "text").execute();
    await db.schema.createIndex("runs_by_updated").on("runs").columns(["updated_at", "run_id"])
      .execute();
    await db.schema.createIndex("runs_by_workspace").on("runs")
      .columns(["workspace", "updated_at"]).execute();
    await db.schema.createIndex("sessions_by_updated").on("sessions")
      .columns(["updated_at", "session_id"]).execute();
    await db.schema.alterTable("sessions").addColumn(
      "kind",
      "text",
      (c) => c.notNull().defaultTo("workflow"),
    ).execute();
    await db.schema.alterTable("nodes").addColumn(
      "step_count",
      "integer",
      (c) => c.notNull().defaultTo(0),
    ).execute();
    await db.schema.createTable("observations")
      .addColumn("seq", "integer", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("run_id", "text", (c) => c.notNull())
      .addColumn("node_id", "text", (c) => c.notNull())
      .addColumn("workspace", "text")
      .addColumn("git_branch", "text")
      .addColumn("git_head_sha", "text")
      .addColumn("at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("observations_by_run").on("observations").columns(["run_id", "seq"])
      .execute();
    await dialect.createSearchTables(db);
  },
};

/**
 * Context stored once per change: `contexts` holds each distinct context of a run, and a node
 * points at its row by `context_id` instead of carrying a copy. Rows written before keep their
 * context inline and are read as they are.
 */
const contextRefs: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createTable("contexts")
      .addColumn("run_id", "text", (c) => c.notNull())
      .addColumn("context_id", "text", (c) => c.notNull())
      .addColumn("context", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("contexts_pk", ["run_id", "context_id"])
      .execute();
    await db.schema.alterTable("nodes").addColumn("context_id", "text").execute();
  },
};

/**
 * Replays that differ: each attempt keeps the digest of the payload it was made with, so a
 * replay carrying other notes can say so. Attempts recorded before have none.
 */
const payloadDigests: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("attempts").addColumn("payload_digest", "text").execute();
  },
};

/**
 * Which bundles were imported, by the digest of the whole bundle, so importing one twice is a
 * no-op; not a projection of the log (the log of an imported session is the bundle's).
 */
const bundleImports: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createTable("bundle_imports")
      .addColumn("bundle_digest", "text", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("source_session_id", "text", (c) => c.notNull())
      .addColumn("imported_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("bundle_imports_by_session").on("bundle_imports")
      .columns(["session_id"]).execute();
  },
};

/**
 * Nested runs and what is recorded at nodes: `run_links` (the projection of `run_stacked`: a
 * run's stack, agent and parent run and node) and `node_events` (reviews, gaps and aborts, by
 * node, for the viewer and the quality gate's attempt count).
 */
const deepwork: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createTable("run_links")
      .addColumn("run_id", "text", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("agent_id", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("parent_run_id", "text")
      .addColumn("parent_node_id", "text")
      .addColumn("job_dir", "text")
      .addColumn("created_seq", "integer", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("run_links_by_stack").on("run_links")
      .columns(["session_id", "agent_id", "created_seq"]).execute();
    await db.schema.createTable("node_events")
      .addColumn("seq", "integer", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("run_id", "text", (c) => c.notNull())
      .addColumn("node_id", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("node_events_by_node").on("node_events")
      .columns(["run_id", "node_id", "seq"]).execute();
  },
};

/**
 * Outputs indexed when the index is read: a dialect that takes the full-text upkeep of outputs
 * off the write path records how far its index has come (libSQL; see `store/libsql/fts.ts`).
 */
const searchBacklog: Migration = {
  async up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
    await dialect.createSearchBacklog?.(db);
  },
};

/**
 * The workflow-file cache (`store/workflow_files/cache.ts`), which is not session data: `workflow_files`
 * maps a file (path and source; looked up by path) at a version (its stat, or a bundled file's digest) to the id it
 * declares and the digest of its text; `workflow_outcomes` keeps, by that digest, what loading
 * the file gave (compiled workflow or load error), its summary as listed, and the routines it
 * was compiled against.
 */
const workflowCache: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createTable("workflow_files")
      .addColumn("source", "text", (c) => c.notNull())
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("version", "text", (c) => c.notNull())
      .addColumn("digest", "text", (c) => c.notNull())
      .addColumn("workflow_id", "text")
      .addColumn("written_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("workflow_files_pk", ["path", "source"])
      .execute();
    await db.schema.createTable("workflow_outcomes")
      .addColumn("digest", "text", (c) => c.primaryKey())
      .addColumn("routines_key", "text")
      .addColumn("written_at", "text", (c) => c.notNull())
      .addColumn("summary", "text", (c) => c.notNull())
      .addColumn("outcome", "text", (c) => c.notNull())
      .execute();
  },
};

/**
 * Stacks have holders: `run_links.owner` is the connection holding a run's stack (the DeepWork
 * profile's agent), so two agents in one project keep their own stacks; `""` for stacks
 * recorded before, which any connection may take over.
 */
const stackOwners: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("run_links")
      .addColumn("owner", "text", (c) => c.notNull().defaultTo("")).execute();
    await db.schema.createIndex("run_links_by_owner").on("run_links")
      .columns(["owner", "agent_id"]).execute();
  },
};

/**
 * A log that shows a missing row: each event's `position` in its session's log, 1, 2, 3, ...
 * with no gaps, unique per session, so a deleted row is a hole doctor sees (the global `seq`
 * skips numbers of other sessions, so it cannot). Rows already logged are numbered in `seq`
 * order. `sessions.event_count` is the last position given, so the hole a deleted last row
 * leaves shows too.
 */
const logPositions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("events").addColumn("position", "integer").execute();
    await sql`UPDATE events SET position = numbered.n FROM (
        SELECT seq, row_number() OVER (PARTITION BY session_id ORDER BY seq) AS n FROM events
      ) AS numbered WHERE events.seq = numbered.seq`.execute(db);
    await db.schema.createIndex("events_by_position").unique().on("events")
      .columns(["session_id", "position"]).execute();
  },
};

/**
 * What doctor sets aside instead of deleting: a stored text value that is not UTF-8 is copied
 * here as its bytes (hex) with where it was, and replaced where it was with a readable rendering.
 */
const quarantine: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createTable("quarantine")
      .addColumn("table_name", "text", (c) => c.notNull())
      .addColumn("row_key", "text", (c) => c.notNull())
      .addColumn("column_name", "text", (c) => c.notNull())
      .addColumn("original_hex", "text", (c) => c.notNull())
      .addColumn("replaced_with", "text", (c) => c.notNull())
      .addColumn("quarantined_at", "text", (c) => c.notNull())
      .execute();
  },
};

/**
 * Delegated child runs: `run_delegations` (the projection of `run_delegated`) links a child run
 * to the parent run, node and parallel step that opened it, found by its parent.
 */
const delegations: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createTable("run_delegations")
      .addColumn("run_id", "text", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("parent_run_id", "text", (c) => c.notNull())
      .addColumn("parent_node_id", "text", (c) => c.notNull())
      .addColumn("step_id", "text", (c) => c.notNull())
      .addColumn("idx", "integer", (c) => c.notNull())
      .addColumn("created_seq", "integer", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("run_delegations_by_parent").on("run_delegations")
      .columns(["parent_run_id", "parent_node_id", "idx"]).execute();
  },
};

/**
 * Personal access tokens of the HTTP service, for teams without an identity provider: each
 * token's SHA-256 (never the token), who it names, its scopes, expiry and revocation. Not session
 * data and not a projection of the log.
 */
const personalTokens: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createTable("personal_tokens")
      .addColumn("token_id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("scopes", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("expires_at", "text")
      .addColumn("revoked_at", "text")
      .execute();
  },
};

/**
 * Review passes: `review_passes` (the projection of `review_passed`), a review's pass in a
 * session, found by review id whichever session (workspace, machine) recorded it.
 */
const reviewPasses: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createTable("review_passes")
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("review_id", "text", (c) => c.notNull())
      .addColumn("rule", "text", (c) => c.notNull())
      .addColumn("files", "text", (c) => c.notNull())
      .addColumn("principal", "text")
      .addColumn("created_seq", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("review_passes_pk", ["session_id", "review_id"])
      .execute();
    await db.schema.createIndex("review_passes_by_id").on("review_passes").column("review_id")
      .execute();
  },
};

/**
 * Who did what: the principal who started a run (`runs.owner`, its `principal` as JSON, with
 * `owner_subject` to find a principal's runs) and the run's access (`team_policy.ts`), and the
 * principal whose call made each node (`nodes.made_by`). All `null` for unauthenticated calls
 * and rows written before; projected from the events' `principal`, so rebuilt from the log.
 */
const principals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("runs").addColumn("owner", "text").execute();
    await db.schema.alterTable("runs").addColumn("owner_subject", "text").execute();
    await db.schema.alterTable("runs").addColumn("access", "text").execute();
    await db.schema.alterTable("nodes").addColumn("made_by", "text").execute();
    await db.schema.createIndex("runs_by_owner").on("runs")
      .columns(["owner_subject", "created_at"]).execute();
  },
};

/**
 * A run's latest event of a kind in one index step: an acknowledgement reads its run's token
 * total from the latest `usage_recorded` event, which without this index costs a scan of the
 * run's node events (and grows with the run).
 */
const nodeEventsByKind: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex("node_events_by_kind").on("node_events")
      .columns(["run_id", "kind", "seq"]).execute();
  },
};

/** Every migration, by name; names sort in application order. */
export const MIGRATIONS: Record<string, Migration> = {
  "0001_initial": initial,
  "0002_resume": resume,
  "0003_context_refs": contextRefs,
  "0004_payload_digests": payloadDigests,
  "0005_bundle_imports": bundleImports,
  "0006_deepwork": deepwork,
  "0007_search_backlog": searchBacklog,
  "0008_workflow_cache": workflowCache,
  "0009_stack_owners": stackOwners,
  "0010_log_positions": logPositions,
  "0011_quarantine": quarantine,
  "0012_delegations": delegations,
  "0013_personal_tokens": personalTokens,
  "0014_review_passes": reviewPasses,
  "0015_principals": principals,
  "0016_node_events_by_kind": nodeEventsByKind,
  "0017_activity_minutes": activityMinutes,
};

/** The schema status of a database that has applied `applied` (in any order). */
export function schemaStatusOf(applied: readonly string[]): SchemaStatus {
  const known = Object.keys(MIGRATIONS).sort();
  return {
    applied: [...applied].sort(),
    pending: known.filter((name) => !applied.includes(name)),
    unknown: applied.filter((name) => !(name in MIGRATIONS)).sort(),
  };
}

/** The refusal for a database written by a newer waymark. */
export function newerSchemaMessage(unknown: readonly string[]): string {
  return `this database was written by a newer waymark (it has migration${
    unknown.length === 1 ? "" : "s"
  } ${
    unknown.join(", ")
  }, which this version does not know); it was left untouched: upgrade waymark, or point --db at another database`;
}

/** A migration's failure, named. */
export function migrationFailed(name: string, error: unknown): Error {
  return new Error(
    `database migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}
