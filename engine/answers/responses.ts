/**
 * The shapes use-cases return, as zod schemas: the MCP adapter publishes them as output
 * schemas, and the engine's types are inferred from them, so the two cannot drift.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { evidenceSchema } from "../verification/evidence.ts";
import { preferencesSchema } from "../model/preferences.ts";
import { principalSchema } from "../access/principal.ts";
import { workspaceDiffersSchema } from "../model/snapshots.ts";
import {
  CAPABILITIES,
  CAPABILITY_NEEDS,
  CAPABILITY_STATUSES,
  DELEGATION_STATUSES,
  GAP_SEVERITIES,
  ID_STATUSES,
  NODE_KINDS,
  RUN_ACCESS,
  SEARCH_LAYERS,
  SESSION_KINDS,
  SOURCE_KINDS,
  USER_DEPENDENCY_REASONS,
  WORKFLOW_KINDS,
} from "../model/vocabulary.ts";

/** A structured warning. */
export const warningSchema = z.object({
  code: z.string().describe("Machine-readable warning code."),
  message: z.string().describe("What it means and what to do."),
});

/** The step to do now. */
export const pendingSchema = z.object({
  stepId: z.string(),
  title: z.string(),
  prompt: z.string().describe("What to do, with context placeholders filled."),
  agentRole: z.string().optional().describe(
    "The role to take; given on start and rehydrate, and when it changes.",
  ),
  requireConfirmation: z.boolean().optional().describe(
    "true: confirm with the user before acknowledging.",
  ),
  outputContract: z.object({
    contractRef: z.string(),
    required: z.boolean(),
    example: z.record(z.string(), z.unknown()).describe("A valid artifact for output.artifacts."),
  }).optional().describe("The artifact the acknowledgement must carry in output.artifacts."),
  assessments: z.array(z.object({
    assessmentId: z.string(),
    dimensions: z.array(z.object({
      id: z.string(),
      levels: z.array(z.string()),
      required: z.boolean(),
    })),
  })).optional().describe(
    "The assessments the acknowledgement must carry, one `wr.assessment` artifact each: {kind, assessmentId, dimensions: {dimensionId: level}}.",
  ),
  notesOptional: z.literal(true).optional().describe(
    "Present when output.notesMarkdown may be left out (the step has an output contract or is marked notesOptional); otherwise notes are required.",
  ),
  loop: z.object({
    loopId: z.string(),
    iteration: z.number().int(),
    maxIterations: z.number().int(),
  }).optional().describe("The innermost loop this step runs in."),
  requiredContext: z.array(z.string()).optional().describe(
    "Context keys the acknowledgement must set in `context` (unless set already).",
  ),
  userDependencies: z.array(z.object({
    key: z.string(),
    reason: z.enum(USER_DEPENDENCY_REASONS),
    message: z.string().describe("What the user must provide."),
  })).optional().describe(
    "Context keys only the user can supply: ask the user, then set each `key` in `context`.",
  ),
  notesRules: z.array(z.object({
    message: z.string().describe("What the rule asks, as a failure would say it."),
    label: z.string().optional().describe("The notes need a line starting with this label."),
    contains: z.string().optional().describe("The notes must mention this text."),
  })).optional().describe("What output.notesMarkdown must contain, one entry per rule."),
  followUps: z.array(z.object({
    level: z.string(),
    assessmentId: z.string().optional().describe("Only this assessment's dimensions; else any."),
    guidance: z.string(),
  })).optional().describe(
    "A dimension rated `level` keeps the step pending: do `guidance`, then acknowledge again with a new assessment.",
  ),
});

/** What a blocker points at. */
export const blockerPointerSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("context_key"), key: z.string() }),
  z.object({ kind: z.literal("output_contract"), contractRef: z.string() }),
  z.object({ kind: z.literal("capability"), capability: z.enum(CAPABILITIES) }),
  z.object({ kind: z.literal("workflow_step"), stepId: z.string() }),
  z.object({ kind: z.literal("context_budget") }),
  z.object({
    kind: z.literal("assessment_dimension"),
    assessmentId: z.string(),
    dimensionId: z.string(),
  }),
]);

/** The closed set of blocker codes (WorkRail's), sorted (blockers are ordered by code first). */
export const BLOCKER_CODES = [
  "ASSESSMENT_FOLLOWUP_REQUIRED",
  "CONTEXT_BUDGET_EXCEEDED",
  "DELEGATIONS_OPEN",
  "INVALID_REQUIRED_OUTPUT",
  "INVARIANT_VIOLATION",
  "MISSING_CONTEXT_KEY",
  "MISSING_REQUIRED_NOTES",
  "MISSING_REQUIRED_OUTPUT",
  "REQUIRED_CAPABILITY_UNAVAILABLE",
  "REQUIRED_CAPABILITY_UNKNOWN",
  "STORAGE_CORRUPTION_DETECTED",
  "USER_ONLY_DEPENDENCY",
  "VERIFICATION_FAILED",
] as const;

/** Why an acknowledgement did not advance. */
export const blockerSchema = z.object({
  code: z.enum(BLOCKER_CODES),
  pointer: blockerPointerSchema,
  message: z.string().describe("What is wrong (at most 512 bytes)."),
  suggestedFix: z.string().optional().describe("How to fix it (at most 1024 bytes)."),
});

/** A blocker code. */
export type BlockerCode = typeof BLOCKER_CODES[number];
/** What a blocker points at (a closed set). */
export type BlockerPointer = z.infer<typeof blockerPointerSchema>;
/** One reason an acknowledgement cannot advance (or, under never-stop, a critical gap). */
export type Blocker = z.infer<typeof blockerSchema>;

/** A gap recorded instead of blocking (full_auto_never_stop), or disclosed by the agent. */
export const gapSchema = z.object({
  severity: z.enum(GAP_SEVERITIES),
  code: z.string().describe("The blocker code it stands for, or AGENT_DISCLOSED."),
  pointer: blockerPointerSchema.optional(),
  message: z.string(),
});

/** One entry of a recap: the notes a completed step or checkpoint left. */
export const recapEntrySchema = z.object({
  nodeId: z.string(),
  kind: z.enum(NODE_KINDS).exclude(["blocked_attempt"]),
  stepId: z.string().nullable(),
  notesMarkdown: z.string(),
  verification: evidenceSchema.pick({
    verdict: true,
    commandLine: true,
    exitCode: true,
    gitHead: true,
    gitDirty: true,
  }).optional().describe("What the step's verification command came to, when it has one."),
});

/** Notes recorded so far along this branch, most recent first, cut to a byte budget. */
export const recapSchema = z.object({
  entries: z.array(recapEntrySchema).describe("Most recent first."),
  truncated: z.boolean().describe("Whether older entries were left out."),
  omitted: z.number().int().describe(
    "Entries left out (0 when not truncated); an upper bound when omittedExact is false.",
  ),
  omittedExact: z.boolean().describe(
    "False when part of a very long branch was not read, so omitted counts nodes, not notes.",
  ),
  policy: z.literal("most_recent_first").describe(
    "Which entries are kept when cut: the most recent ones that fit the budget.",
  ),
  budgetBytes: z.number().int().describe("The budget, in UTF-8 bytes of notes."),
  usedBytes: z.number().int().describe("Bytes of notes kept."),
});

/** A summary of an existing child branch of a node. */
export const branchSchema = z.object({
  nodeId: z.string(),
  kind: z.enum(NODE_KINDS),
  pendingStepId: z.string().nullable(),
  notesPreview: z.string().nullable(),
});

/** Tokens of another node (the tip of the preferred branch). */
export const tipSchema = z.object({
  nodeId: z.string(),
  stateToken: z.string(),
  ackToken: z.string().optional(),
  checkpointToken: z.string(),
  pendingStepId: z.string().nullable(),
  isComplete: z.boolean(),
});

/** One child run of a parallel step, as the parent agent sees it. */
export const delegationViewSchema = z.object({
  index: z.number().int().describe("The delegation's position in the step, from 0."),
  workflowId: z.string(),
  goal: z.string().nullable(),
  runId: z.string(),
  status: z.enum(DELEGATION_STATUSES).describe(
    "`open` until the child completes or is aborted (abort_workflow with an explanation).",
  ),
  delegationToken: z.string().describe(
    "Hand it to a subagent: start_workflow with only this token drives the child run.",
  ),
  instruction: z.string().describe("A ready-made task text for a subagent."),
  modelTier: z.string().optional().describe("The model tier the workflow recommends."),
  tip: tipSchema.optional().describe(
    "When blocked: the open child's current tokens, to drive it yourself (serial fallback).",
  ),
});

/** What a child run's answer says about the parallel step that opened it. */
export const delegatedFromSchema = z.object({
  parentRunId: z.string(),
  parentStepId: z.string(),
  index: z.number().int(),
  settled: z.boolean().optional().describe(
    "On the call that ended the last open child: the parent's step can now be acknowledged.",
  ),
});

/** What every execution tool answers about the node it leaves the run at. */
const nodeResponseSchema = z.object({
  kind: z.enum(["ok", "blocked"]).describe(
    "`blocked`: the acknowledgement did not advance; see `blockers`, fix, and retry with the new ackToken.",
  ),
  stateToken: z.string().describe("Names this snapshot; pass it to continue_workflow."),
  ackToken: z.string().optional().describe(
    "Acknowledges the pending step; absent once the run is complete.",
  ),
  checkpointToken: z.string().describe(
    "Records notes here without advancing (checkpoint_workflow).",
  ),
  pending: pendingSchema.nullable().describe("The step to do now, or null when complete."),
  isComplete: z.boolean().optional().describe(
    "On start and rehydrate; after an acknowledgement only once true (then pending is null).",
  ),
  session: z.object({ sessionId: z.string(), runId: z.string(), nodeId: z.string() }).optional()
    .describe("On start and rehydrate."),
  workflow: z.object({ id: z.string(), name: z.string(), hash: z.string() }).optional().describe(
    "The run's pinned workflow; on start and rehydrate.",
  ),
  preferences: preferencesSchema.optional().describe(
    "In effect here; on start and rehydrate, and when this call changed them.",
  ),
  warnings: z.array(warningSchema).optional().describe("Present when there are any."),
  capabilities: z.record(
    z.string(),
    z.object({
      requested: z.enum(CAPABILITY_NEEDS),
      observed: z.enum(CAPABILITY_STATUSES),
    }),
  ).optional().describe("The workflow's optional capabilities and what this branch observed."),
  delegations: z.array(delegationViewSchema).optional().describe(
    "When the pending step is a parallel step: its child runs. Acknowledge the step once none is open.",
  ),
  delegatedFrom: delegatedFromSchema.optional().describe(
    "When this run is a child of a parallel step (on start with a delegationToken, and on its end).",
  ),
});

const metaGuidanceSchema = z.array(z.string()).optional().describe(
  "Workflow-wide guidance, on start.",
);
const checkpointNodeSchema = z.object({ nodeId: z.string() }).optional().describe(
  "The checkpoint node recorded.",
);

/** The response of `start_workflow` (and `start_session`): a run's first node. */
export const startStepResponseSchema = nodeResponseSchema.extend({
  metaGuidance: metaGuidanceSchema,
});

/** The response of `start_workflow`: a run's first node, or a child run taken up where it stands. */
export const startWorkflowResponseSchema = startStepResponseSchema.extend({
  recap: recapSchema.optional().describe(
    "On taking up a child run with a delegationToken: the notes it has so far.",
  ),
});

/** The response of `checkpoint_workflow`: the checkpoint node, the step still pending. */
export const checkpointStepResponseSchema = nodeResponseSchema.extend({
  checkpoint: checkpointNodeSchema,
});

/**
 * The response of `continue_workflow`, and the type of every execution tool's (start and
 * checkpoint answer a part of it: {@linkcode startStepResponseSchema}, {@linkcode checkpointStepResponseSchema}).
 */
export const stepResponseSchema = nodeResponseSchema.extend({
  workspaceDiffers: workspaceDiffersSchema.optional(),
  forked: z.object({
    existingBranches: z.array(branchSchema).describe("The node's other children, oldest first."),
    preferredTipNodeId: z.string().optional().describe(
      "The newest node under the fork point: the tip of the branch most recently worked on.",
    ),
    downstreamRecap: recapSchema.optional().describe(
      "Notes from the fork point down to the preferred tip: what the other branch did.",
    ),
  }).optional().describe("Present when this advance started a new branch beside existing ones."),
  recap: recapSchema.optional(),
  tip: tipSchema.optional().describe(
    "On rehydrating a node that is not a tip: the preferred branch's tip, to carry on there.",
  ),
  checkpoint: checkpointNodeSchema,
  metaGuidance: metaGuidanceSchema,
  blockers: z.array(blockerSchema).optional().describe(
    "When blocked: ordered by (code, pointer), at most 10.",
  ),
  example: z.object({
    context: z.record(z.string(), z.unknown()).optional(),
    output: z.object({
      notesMarkdown: z.string().optional(),
      artifacts: z.array(z.unknown()).optional(),
    }).optional(),
  }).optional().describe("When blocked: the shape of an acknowledgement that would pass."),
  blockedAttempt: z.object({ nodeId: z.string() }).optional().describe(
    "When blocked: the recorded attempt.",
  ),
  gaps: z.array(gapSchema).optional().describe("Gaps recorded by this acknowledgement."),
  verification: evidenceSchema.optional().describe(
    "The step's verification command as the server ran it on this acknowledgement (or why it did not run); also recorded on the node.",
  ),
});

/** The response of every execution tool. */
export type StepResponse = z.infer<typeof stepResponseSchema>;
/** A pending step. */
export type Pending = z.infer<typeof pendingSchema>;
/** A recap. */
export type Recap = z.infer<typeof recapSchema>;
/** A branch summary. */
export type Branch = z.infer<typeof branchSchema>;
/** A gap in a response. */
export type Gap = z.infer<typeof gapSchema>;

/** How far a branch is, told after an acknowledgement advanced (MCP progress notifications). */
export const stepProgressSchema = z.object({
  done: z.number().int().describe("Step nodes acknowledged on this branch (the root excluded)."),
  total: z.number().int().describe(
    "done plus the steps still ahead (loop bodies once: conditions and loop exits may skip some).",
  ),
  stepTitle: z.string().nullable().describe("The title of the step just completed."),
});

/** How far a branch is after an advance. */
export type StepProgress = z.infer<typeof stepProgressSchema>;

/** One workflow in a listing. */
export const workflowSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  summary: z.string(),
  kind: z.enum(WORKFLOW_KINDS),
  idStatus: z.enum(ID_STATUSES),
  source: z.enum(SOURCE_KINDS),
  version: z.string(),
  stepCount: z.number().int(),
  workflowHash: z.string(),
  overlay: z.object({
    layers: z.array(z.string()).describe("The base first, then each overlay's id."),
    baseChangedFrom: z.string().optional().describe(
      "Set when the base changed since the overlay was written: the hash it was written against.",
    ),
  }).optional().describe("Set on an overlay: a workflow layered over another one."),
});

/** A file that failed to load. */
export const loadErrorSchema = z.object({
  file: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })),
});

/** Result of listing workflows. */
export const listResponseSchema = z.object({
  workflows: z.array(workflowSummarySchema),
  loadErrors: z.array(loadErrorSchema),
});

/** Result of inspecting a workflow. */
export const inspectResponseSchema = z.object({
  workflow: workflowSummarySchema.extend({
    description: z.string(),
    file: z.string(),
    metaGuidance: z.array(z.string()),
    recommendedPreferences: z.object({
      autonomy: z.string().optional(),
      riskPolicy: z.string().optional(),
    }).optional(),
    capabilities: z.record(z.string(), z.enum(CAPABILITY_NEEDS)).optional().describe(
      "Optional agent capabilities the workflow uses; a required one is probed first.",
    ),
    features: z.array(z.string()).optional().describe("Compiler features applied."),
  }),
  steps: z.array(z.object({
    stepId: z.string(),
    title: z.string(),
    agentRole: z.string().optional(),
    requireConfirmation: z.boolean(),
    conditional: z.boolean().describe("Runs only when its runCondition holds."),
    loopId: z.string().optional().describe("The innermost loop the step runs in."),
    outputContract: z.string().optional().describe("The contract its acknowledgement must meet."),
    promptPreview: z.string().describe("The first 280 characters of the prompt template."),
  })),
  warnings: z.array(warningSchema),
});

/** A listing. */
export type ListResponse = z.infer<typeof listResponseSchema>;
/** An inspection. */
export type InspectResponse = z.infer<typeof inspectResponseSchema>;
/** A workflow summary. */
export type WorkflowSummary = z.infer<typeof workflowSummarySchema>;

/** How a candidate's stored workspace compares with the caller's. */
export const workspaceMatchSchema = z.object({
  workspace: z.string().nullable().describe("The folder recorded for the run."),
  gitBranch: z.string().nullable(),
  gitHeadSha: z.string().nullable(),
  sameWorkspace: z.boolean(),
  sameBranch: z.boolean(),
  sameHead: z.boolean(),
});

/** One `resume_session` candidate: a run's tip with fresh tokens. */
export const resumeCandidateSchema = z.object({
  rank: z.number().int().describe("1 is the best match."),
  sessionId: z.string(),
  runId: z.string(),
  title: z.string(),
  sessionKind: z.enum(SESSION_KINDS),
  workflowId: z.string(),
  status: z.string().describe("`running`, `complete` or `aborted`."),
  updatedAt: z.string(),
  match: z.enum(SEARCH_LAYERS).describe(
    "Which search layer found it: id, title, tip_notes (the run's latest notes), deep (any output), recent (no query).",
  ),
  snippet: z.string().nullable().describe("A short excerpt to tell candidates apart."),
  workspace: workspaceMatchSchema,
  tip: z.object({
    nodeId: z.string(),
    pendingStepId: z.string().nullable(),
    isComplete: z.boolean(),
    stateToken: z.string().describe("Rehydrate with continue_workflow {stateToken} first."),
    ackToken: z.string().optional(),
    checkpointToken: z.string(),
    madeBy: principalSchema.optional().describe(
      "Whose call made the tip (acknowledged the last step); absent when it was unauthenticated.",
    ),
  }).describe("The run's tip (its newest node) with fresh tokens."),
  corrupt: z.boolean().describe("The session failed an integrity check: read-only."),
  startedBy: principalSchema.optional().describe(
    "Who started the run (an authenticated call); absent when it was started without authentication.",
  ),
  access: z.enum(RUN_ACCESS).optional().describe(
    "Who besides its starter may continue the run: `owner` (no one) or `team` (any member).",
  ),
  mayContinue: z.boolean().optional().describe(
    "Whether you may acknowledge or checkpoint on it (the team policy); false: read it only.",
  ),
  delegatedFrom: delegatedFromSchema.omit({ settled: true }).optional().describe(
    "When the run is a child a parallel step opened: its parent run and step. Resume the parent to see every child.",
  ),
});

/** The response of `resume_session`. */
export const resumeResponseSchema = z.object({
  query: z.string().nullable(),
  workspace: z.object({
    workspace: z.string().nullable(),
    gitBranch: z.string().nullable(),
    gitHeadSha: z.string().nullable(),
  }).nullable().describe("The caller's workspace as observed for this call."),
  searched: z.array(z.enum(SEARCH_LAYERS)).describe(
    "The layers consulted, in order; deeper layers run only while fewer than `limit` runs matched.",
  ),
  candidates: z.array(resumeCandidateSchema),
  policy: z.literal("workspace_then_layer_then_relevance_then_recency").describe(
    "Ranking: same folder, branch and HEAD first; then the most precise layer; then FTS relevance; then the most recent; then run id.",
  ),
});

/** A resume candidate. */
export type ResumeCandidate = z.infer<typeof resumeCandidateSchema>;
/** The response of `resume_session`. */
export type ResumeResponse = z.infer<typeof resumeResponseSchema>;
