/**
 * Every closed set of names the engine, the store, the tools and the viewer share, written once.
 * Types, zod enums (`z.enum(NODE_KINDS)`) and lookup sets derive from these lists. The order of
 * a list is part of published schemas and pinned hashes: append, never reorder.
 * @module
 */

/** The optional agent capabilities a workflow can ask for. */
export const CAPABILITIES = ["delegation", "web_browsing"] as const;
/** A capability. */
export type Capability = typeof CAPABILITIES[number];

/** How much a workflow needs a capability. */
export const CAPABILITY_NEEDS = ["required", "preferred"] as const;
/** How much a workflow needs a capability. */
export type CapabilityNeed = typeof CAPABILITY_NEEDS[number];

/** What a branch has observed about a capability. */
export const CAPABILITY_STATUSES = ["available", "unavailable", "unknown"] as const;
/** What a branch has observed about a capability. */
export type CapabilityStatus = typeof CAPABILITY_STATUSES[number];

/** How far the agent may go without the user, least autonomous first. */
export const AUTONOMY_LEVELS = [
  "guided",
  "full_auto_stop_on_user_deps",
  "full_auto_never_stop",
] as const;
/** An autonomy level. */
export type Autonomy = typeof AUTONOMY_LEVELS[number];

/** How much risk the agent may take, most careful first. */
export const RISK_POLICIES = ["conservative", "balanced", "aggressive"] as const;
/** A risk policy. */
export type RiskPolicy = typeof RISK_POLICIES[number];

/** The kinds of node in a run graph. */
export const NODE_KINDS = ["step", "checkpoint", "blocked_attempt"] as const;
/** A node kind. */
export type NodeKind = typeof NODE_KINDS[number];

/** The kinds of edge in a run graph. */
export const EDGE_KINDS = ["acked_step", "checkpoint"] as const;
/** An edge kind. */
export type EdgeKind = typeof EDGE_KINDS[number];

/**
 * What a session holds: workflow runs, only checkpoints (`start_session`), or a project's review
 * passes (`mark_review_as_passed`, one session per workspace).
 */
export const SESSION_KINDS = ["workflow", "notes", "reviews"] as const;
/** A session kind. */
export type SessionKind = typeof SESSION_KINDS[number];

/** Whether a session passed every integrity check (a corrupt one is read-only). */
export const SESSION_HEALTHS = ["healthy", "corrupt"] as const;
/** A session's health. */
export type SessionHealth = typeof SESSION_HEALTHS[number];

/** Whether a run still has a pending step, or was abandoned (`abort_workflow`). */
export const RUN_STATUSES = ["running", "complete", "aborted"] as const;
/** A run's status. */
export type RunStatus = typeof RUN_STATUSES[number];

/**
 * Who may act on a run another principal started (`team_policy.ts`): only its owner, or any
 * member of the team. Recorded on the run when it starts.
 */
export const RUN_ACCESS = ["owner", "team"] as const;
/** A run's access policy. */
export type RunAccess = typeof RUN_ACCESS[number];

/** Where a delegated child run stands, as its parent sees it. */
export const DELEGATION_STATUSES = ["open", "complete", "aborted"] as const;
/** A delegated child run's status. */
export type DelegationStatus = typeof DELEGATION_STATUSES[number];

/** The outcomes of an acknowledgement. */
export const ADVANCE_OUTCOMES = ["advanced", "blocked"] as const;
/** An acknowledgement's outcome. */
export type AdvanceOutcome = typeof ADVANCE_OUTCOMES[number];

/** What a recorded attempt produced: an acknowledgement's outcome, or a checkpoint recorded. */
export const ATTEMPT_OUTCOMES = [...ADVANCE_OUTCOMES, "checkpointed"] as const;
/** An attempt's outcome. */
export type AttemptOutcome = typeof ATTEMPT_OUTCOMES[number];

/** Reasons a step can depend on something only the user can provide. */
export const USER_DEPENDENCY_REASONS = [
  "user_decision",
  "user_approval",
  "user_provided_document",
  "user_credentials",
  "user_domain_knowledge",
  "user_environment_access",
] as const;

/** Severities of a recorded gap, most severe first. */
export const GAP_SEVERITIES = ["critical", "major", "minor"] as const;
/** A gap severity. */
export type GapSeverity = typeof GAP_SEVERITIES[number];

/** Where a workflow file came from, in precedence order (the first to define an id wins). */
export const SOURCE_KINDS = ["bundled", "user", "project", "extra"] as const;
/** A source kind. */
export type SourceKind = typeof SOURCE_KINDS[number];

/** What a loaded file defines. */
export const WORKFLOW_KINDS = ["workflow", "routine"] as const;
/** A workflow kind. */
export type WorkflowKind = typeof WORKFLOW_KINDS[number];

/** Whether a workflow id has a namespace (`ns.name`) or is a legacy id. */
export const ID_STATUSES = ["namespaced", "legacy"] as const;
/** A workflow id's status. */
export type IdStatus = typeof ID_STATUSES[number];

/** The search layers of `resume_session`, most precise first, then the no-query listing. */
export const SEARCH_LAYERS = ["id", "title", "tip_notes", "deep", "recent"] as const;
/** A search layer. */
export type SearchLayer = typeof SEARCH_LAYERS[number];

/** The kinds of signed token. */
export const TOKEN_KINDS = ["state", "ack", "checkpoint", "delegation"] as const;
/** A token kind. */
export type TokenKind = typeof TOKEN_KINDS[number];
/** The kinds of attempt: those of the tokens that name one. */
export type AttemptKind = Extract<TokenKind, "ack" | "checkpoint">;

/** Every kind of domain event (`events.ts` checks this list against its union both ways). */
export const EVENT_KINDS = [
  "session_created",
  "run_started",
  "workflow_pinned",
  "node_created",
  "edge_created",
  "output_recorded",
  "observation_recorded",
  "preference_changed",
  "advance_recorded",
  "gap_recorded",
  "capability_observed",
  "divergence_recorded",
  "assessment_recorded",
  "checkpoint_recorded",
  "run_stacked",
  "run_aborted",
  "review_recorded",
  "stack_claimed",
  "run_delegated",
  "delegations_settled",
  "delegations_collected",
  "evidence_recorded",
  "review_passed",
  "usage_recorded",
  "snapshot_recorded",
] as const;

/** Why a session bundle could not be written or read (`waymark sessions export` / `import`). */
export const BUNDLE_ERROR_CODES = [
  "SESSION_NOT_FOUND",
  "SESSION_CORRUPT",
  "BUNDLE_INVALID",
  "BUNDLE_VERSION_UNSUPPORTED",
  "STORAGE_BUSY",
  "IMPORT_FAILED",
] as const;
/** A bundle error code. */
export type BundleErrorCode = typeof BUNDLE_ERROR_CODES[number];

/** What `waymark doctor` checks, in the order it reports them. */
export const DOCTOR_CHECKS = [
  "version",
  "database",
  "schema",
  "integrity",
  "text_encoding",
  "event_log",
  "snapshots",
  "projections",
  "search_index",
  "keyring",
  "permissions",
  "wal",
  "workflows",
  "session_rules",
] as const;
/** A doctor check. */
export type DoctorCheck = typeof DOCTOR_CHECKS[number];
/** The value types a DeepWork job output (or step argument) may declare. */
export const JOB_OUTPUT_TYPES = ["file", "files", "file_path", "string"] as const;
/** A job output type. */
export type JobOutputType = typeof JOB_OUTPUT_TYPES[number];

/** The statuses of DeepWork's `finished_step`. */
export const JOB_STEP_STATUSES = ["needs_work", "next_step", "workflow_complete"] as const;
/** A `finished_step` status. */
export type JobStepStatus = typeof JOB_STEP_STATUSES[number];

/**
 * How a review rule turns the changed files it matches into review tasks: one per file, one for
 * all of them, or one for every changed file once any matches.
 */
export const REVIEW_STRATEGIES = ["individual", "matches_together", "all_changed_files"] as const;
/** A review strategy. */
export type ReviewStrategy = typeof REVIEW_STRATEGIES[number];

/** Who reviewed a step's outputs: the agent itself, an external command, a JSON Schema. */
export const REVIEWERS = ["self", "external", "json_schema"] as const;
/** A reviewer. */
export type Reviewer = typeof REVIEWERS[number];

/** What a review concluded (`requested`: self-review instructions were handed out). */
export const REVIEW_VERDICTS = ["requested", "passed", "failed", "error"] as const;
/** A review verdict. */
export type ReviewVerdict = typeof REVIEW_VERDICTS[number];

/**
 * What a step's verification command came to (`engine/verification/policy.ts`): it ran and passed,
 * failed (non-zero exit), ran out of time, could not be started; or it did not run because the
 * user's config does not allow it there, or the host cannot run commands.
 */
export const VERIFICATION_VERDICTS = [
  "passed",
  "failed",
  "timed_out",
  "error",
  "not_allowed",
  "unavailable",
] as const;
/** A verification verdict. */
export type VerificationVerdict = typeof VERIFICATION_VERDICTS[number];

/** The warnings of a verification command that did not run (the step falls back to prose). */
export const VERIFICATION_NOTICES = [
  "VERIFICATION_NOT_ALLOWED",
  "VERIFICATION_UNAVAILABLE",
] as const;
/** A verification notice code. */
export type VerificationNotice = typeof VERIFICATION_NOTICES[number];

/** Whether `value` belongs to the closed set `list`; narrows it to the set's type. */
export function isMember<T extends string>(list: readonly T[], value: unknown): value is T {
  return (list as readonly unknown[]).includes(value);
}

/** A run seen as an MCP task: its status, a pure function of the run (`run/task_status.ts`). */
export const TASK_STATUSES = [
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
] as const;
/** A task status. */
export type TaskStatus = typeof TASK_STATUSES[number];

/** Where a step stands in a run's progress plan (`workflow/plan.ts`). */
export const PLAN_STEP_STATUSES = ["pending", "current", "done", "skipped", "blocked"] as const;
/** A plan step's status. */
export type PlanStepStatus = typeof PLAN_STEP_STATUSES[number];

/** What sessions can be filtered by (viewer, `sessions list --status`): a run status, or corrupt. */
export const SESSION_STATUS_FILTERS = [...RUN_STATUSES, "corrupt"] as const;
