/**
 * The compiled form: what runs are pinned to, hashed and stored. Its format version is part of
 * the hash, and older stored formats are read as the current one here.
 * @module
 */
import { hashJson } from "../common/hash.ts";
import type { Capability, CapabilityNeed, WorkflowKind } from "../model/vocabulary.ts";
import type { Condition, LoopConfig, UserDependency, ValidationCriteria } from "./schema.ts";
import type { JobInputSpec, JobOutputSpec, JobReviewSpec } from "../deepwork/job.ts";
import type { CompiledVerify } from "./verify_block.ts";

/** Version of the compiled form; part of the hash so a format change never aliases. */
export const COMPILED_FORMAT = 2;

/** A step's output contract, resolved. */
export interface CompiledContract {
  /** The `wr.contracts.*` id. */
  contractRef: string;
  /** Whether a missing or invalid artifact blocks (or is a gap under never-stop). */
  required: boolean;
  /** The artifact kind that fulfils it. */
  artifactKind: string;
}

/** An assessment a step asks for, resolved from the workflow's `assessments`. */
export interface CompiledAssessment {
  /** Assessment id. */
  id: string;
  /** Its dimensions in declared order. */
  dimensions: { id: string; levels: string[]; required: boolean }[];
}

/** A follow-up a step requires when a submitted level matches. */
export interface CompiledConsequence {
  /** The level that triggers it. */
  anyEqualsLevel: string;
  /** Only this assessment's dimensions trigger it (any of the step's when absent). */
  forAssessment?: string;
  /** What the agent must do before retrying: the blocker's suggested fix. */
  guidance: string;
}

/** A step as runs see it. */
export interface CompiledStep {
  /** Node kind. */
  kind: "step";
  /** Step id, unique within the workflow. */
  id: string;
  /** Human title. */
  title: string;
  /** Prompt text with `{{var}}` placeholders still in it. */
  promptTemplate: string;
  /** The effective role: the step's own, else the workflow's. */
  agentRole?: string;
  /** Whether the agent must check with the user before acknowledging (or when, as a condition). */
  requireConfirmation: boolean | Condition;
  /** Run only when this holds for the context at the time the step comes up. */
  runCondition?: Condition;
  /** Text appended to the prompt when its condition holds. */
  fragments?: { when?: Condition; text: string }[];
  /** The output the step must produce. */
  outputContract?: CompiledContract;
  /** Checks on the step's notes. */
  validation?: ValidationCriteria;
  /** Context keys only the user can supply. */
  userDependencies?: UserDependency[];
  /** Set on an injected capability probe: the capability it observes. */
  probe?: Capability;
  /** Set on a step compiled from a DeepWork job: what it declares. */
  job?: CompiledJobStep;
  /** Set when the author marked notes optional (a step with a contract never requires them). */
  notesOptional?: true;
  /** Assessments the acknowledgement must carry, in `assessmentRefs` order. */
  assessments?: CompiledAssessment[];
  /** Follow-ups by level, in declaration order. */
  consequences?: CompiledConsequence[];
  /** Context paths that must be set when the step is acknowledged. */
  requiredContext?: string[];
  /** Set on a parallel step: one child run is opened per delegation whose condition holds. */
  delegations?: CompiledDelegation[];
  /** Set on the step injected after a parallel step: that step's id (its children's results come here). */
  synthesisOf?: string;
  /** The command the server runs when the step is acknowledged, if the user allows it. */
  verify?: CompiledVerify;
}

/** One delegation of a parallel step, as runs open it. */
export interface CompiledDelegation {
  /** The child run's workflow (a routine or any workflow). */
  workflowId: string;
  /** The child run's goal. */
  goal?: string;
  /** Open the child only when this holds for the parent's context. */
  runCondition?: Condition;
  /** Parent context key → child context key. */
  contextMapping?: Record<string, string>;
  /** Values set in the child's context (over mapped ones). */
  args?: Record<string, unknown>;
  /** The model tier the author recommends for the subagent. */
  modelTier?: string;
  /** Tools the author suggests the subagent use (a hint, not enforced). */
  allowedTools?: string[];
}

/** What a DeepWork job step declares, as runs check it. */
export interface CompiledJobStep {
  /** The job step ids this entry runs (several for a concurrent group; the first is primary). */
  stepIds: string[];
  /** Expected outputs (a concurrent group's, together). */
  outputs: JobOutputSpec[];
  /** Quality reviews. */
  reviews: JobReviewSpec[];
  /** What it reads. */
  inputs: JobInputSpec[];
  /** Hooks declared (not run). */
  hooks: string[];
  /** The nested workflow the step runs, as `job/workflow`. */
  subWorkflow?: { job: string; workflow: string };
}

/** A loop as runs see it. */
export interface CompiledLoop {
  /** Node kind. */
  kind: "loop";
  /** Loop id. */
  id: string;
  /** Human title. */
  title: string;
  /** Enter only when this holds. */
  runCondition?: Condition;
  /** Loop settings, defaults filled in. */
  loop: {
    /** Loop kind. */
    type: LoopConfig["type"];
    /** while/until over context (and loop variables). */
    condition?: Condition;
    /** while/until decided by the last loop-control artifact reported in an iteration. */
    artifact?: { contractRef: string; loopId?: string };
    /** forEach: the context variable holding the array. */
    items?: string;
    /** for: the count, or the context variable holding it. */
    count?: number | string;
    /** Safety limit. */
    maxIterations: number;
    /** The iteration counter's name (from 1). */
    iterationVar: string;
    /** forEach: the current item's name. */
    itemVar: string;
    /** for/forEach: the current index's name (from 0). */
    indexVar: string;
  };
  /** The body, in order. */
  body: CompiledNode[];
}

/** A node of the compiled step tree. */
export type CompiledNode = CompiledStep | CompiledLoop;

/** A compiled workflow: the unit that is hashed, pinned and stored. */
export interface CompiledWorkflow {
  /** Compiled format version. */
  format: typeof COMPILED_FORMAT;
  /** Workflow id. */
  id: string;
  /** Workflow or routine. */
  kind: WorkflowKind;
  /** Human name. */
  name: string;
  /** What the workflow is for. */
  description: string;
  /** The author's version string. */
  version: string;
  /** Guidance shown once, at start (features' guidance included). */
  metaGuidance: string[];
  /** Most automation the author recommends. */
  recommendedPreferences?: { autonomy?: string; riskPolicy?: string };
  /** Tokens a run may use before its answers warn (absent: none from the workflow). */
  tokenBudget?: number;
  /** Optional capabilities and how much the workflow needs them. */
  capabilities: Partial<Record<Capability, CapabilityNeed>>;
  /** Features applied. */
  features: string[];
  /** Every contract pack the workflow uses, resolved (schema and example). */
  contracts: Record<
    string,
    { artifactKind: string; schema: Record<string, unknown>; example: Record<string, unknown> }
  >;
  /** Steps and loops in order. */
  steps: CompiledNode[];
  /** Set on a workflow compiled from a DeepWork job. */
  job?: {
    /** Job name. */
    name: string;
    /** Workflow name within the job. */
    workflow: string;
    /** Shared context for every step. */
    commonJobInfo: string;
    /** Shown when the workflow completes. */
    postWorkflowInstructions?: string;
  };
}

/**
 * Reads a stored compiled workflow of any format as the current one: format-1 snapshots (flat
 * steps, no kinds) still run.
 */
export function normalizeCompiled(stored: CompiledWorkflow): CompiledWorkflow {
  if ((stored as { format: number }).format !== 1) return stored;
  const old = stored as unknown as Omit<CompiledWorkflow, "steps"> & {
    steps: Omit<CompiledStep, "kind">[];
  };
  return {
    ...old,
    format: COMPILED_FORMAT,
    kind: "workflow",
    capabilities: {},
    features: [],
    contracts: {},
    steps: old.steps.map((s) => ({ kind: "step", ...s })),
  };
}

/** The `workflowHash` of a compiled workflow. */
export function workflowHash(compiled: CompiledWorkflow): Promise<string> {
  return hashJson(compiled);
}
