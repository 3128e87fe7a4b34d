/**
 * `get_workflows` and `start_workflow` of the DeepWork profile. Starting while a run is on the
 * caller's stack pushes a child run into the stack's session, linked to the parent run and the
 * node it stands at (`run_stacked`); otherwise it opens a new session, a new stack held by the
 * caller. Every workflow started has its own `session_id` (its run). One write transaction.
 * @module
 */
import type { DomainEvent } from "../model/events.ts";
import { parseRunLabel, randomHex } from "../model/ids.ts";
import type { NodeRecord, StackFrame } from "../model/ports.ts";
import { applyPreferences, DEFAULT_PREFERENCES } from "../model/preferences.ts";
import { checkContext } from "../model/limits.ts";
import { fail, ok, type Result } from "../model/result.ts";
import { guard } from "../run/error_guard.ts";
import { nodeCreated, rootNode } from "../run/node_events.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import type { WorkspaceObservation } from "../model/workspace.ts";
import type { LoadedJob, LoadedJobs, LoadedJobWorkflow } from "./job_catalog.ts";
import type { JobDeps, JobPorts } from "./ports.ts";
import type { GetWorkflowsResponse, JobStartResponse } from "./job_responses.ts";
import { findStack, stackCaller } from "./find_stack.ts";
import { beginStep, noActiveWorkflow, stackEntries } from "./stack.ts";
import { sessionOfJobDir } from "./session_jobs.ts";

/** `get_workflows`: every job visible from the workspace, and every job that failed to load. */
export function getWorkflows(
  ports: Pick<JobPorts, "jobs">,
  at: { workspace: string | null },
): Promise<Result<GetWorkflowsResponse>> {
  return guard(async () => {
    const loaded = await ports.jobs.load(at.workspace);
    return ok({
      jobs: loaded.jobs.map((j) => ({
        name: j.name,
        summary: j.summary,
        workflows: j.workflows.map((w) => ({ name: w.name, summary: w.summary })),
      })),
      errors: loaded.errors.map((e) => ({
        job_name: e.jobName,
        job_dir: e.jobDir,
        error: e.error,
      })),
    });
  });
}

/** Input of {@linkcode startJobWorkflow}, as the tool takes it. */
export interface JobStartInput {
  /** What the run is for. */
  goal: string;
  /** The job. */
  job_name: string;
  /** The workflow (ignored when the job has only one). */
  workflow_name: string;
  /** Names this instance of the workflow (kept in the run's context). */
  instance_id?: string | null;
  /** Values for the workflow's inputs (kept in the run's context). */
  inputs?: Record<string, unknown>;
  /** Nest the new workflow under this one (a `run_…` that begin_step returned), on its stack. */
  session_id?: string;
  /** A sub-agent's own stack. */
  agent_id?: string;
}

/** Finds the job and workflow, or says which names exist. */
export function pickWorkflow(
  loaded: LoadedJobs,
  input: Pick<JobStartInput, "job_name" | "workflow_name">,
): Result<{ job: LoadedJob; workflow: LoadedJobWorkflow }> {
  const job = loaded.jobs.find((j) => j.name === input.job_name);
  if (!job) {
    const broken = loaded.errors.find((e) => e.jobName === input.job_name);
    return fail(
      "WORKFLOW_NOT_FOUND",
      broken
        ? `Job \`${input.job_name}\` failed to load: ${broken.error}`
        : `Job \`${input.job_name}\` not found. Available jobs: ${
          loaded.jobs.map((j) => j.name).join(", ") || "(none)"
        }.`,
      { details: { job_name: input.job_name, jobs: loaded.jobs.map((j) => j.name) } },
    );
  }
  const workflow = job.workflows.length === 1
    ? job.workflows[0]!
    : job.workflows.find((w) => w.name === input.workflow_name);
  if (!workflow) {
    const names = job.workflows.map((w) => w.name);
    return fail(
      "WORKFLOW_NOT_FOUND",
      `Workflow \`${input.workflow_name}\` not found in job \`${job.name}\`. Available workflows: ${
        names.join(", ") || "(none)"
      }.`,
      { details: { job_name: job.name, workflow_name: input.workflow_name, workflows: names } },
    );
  }
  if (workflow.compiled.steps.length === 0) {
    return fail(
      "WORKFLOW_NOT_FOUND",
      `Workflow \`${job.name}/${workflow.name}\` has no steps; add steps to it in ${job.dir}/job.yml.`,
      { details: { job_name: job.name, workflow_name: workflow.name } },
    );
  }
  return ok({ job, workflow });
}

/** Where a new run goes: its session (`null`: a new one), agent and holder, the frames it joins. */
interface Placement {
  sessionId: string | null;
  agentId: string | null;
  owner: string;
  frames: StackFrame[];
  parent: StackFrame | null;
}

/**
 * The caller's running stack takes the new run on top (`session_id`: the stack of that
 * workflow, the new run nested under it). With none, a sub-agent's first run is linked to its
 * main agent's top; otherwise the run opens a new session: a new stack, held by the caller.
 */
async function placement(
  deps: JobDeps,
  input: JobStartInput & { workspace: WorkspaceObservation },
): Promise<Result<Placement>> {
  const caller = stackCaller(input);
  const found = await findStack(deps, caller, { claim: input.session_id !== undefined });
  if (!found.ok) return found;
  const { sessionId, agentId, owner, view, target } = found.value;
  if (target) return ok({ sessionId, agentId, owner, frames: view.frames, parent: target });
  if (input.session_id !== undefined) return noActiveWorkflow(input.session_id);
  const self = deps.presence.self;
  if (agentId === null) {
    return ok({ sessionId: null, agentId, owner: self, frames: [], parent: null });
  }
  const main = await findStack(deps, { ...caller, agentId: undefined }, { claim: false });
  const mainTop = main.ok ? main.value.target : null;
  return ok({
    sessionId: mainTop?.sessionId ?? null,
    agentId,
    owner: self,
    frames: [],
    parent: mainTop,
  });
}

/**
 * A session job started with a `session_id` that names no running workflow (the agent's own
 * session key) opens a new stack rather than nest; otherwise `session_id` nests as always.
 */
async function placedAs<T extends JobStartInput>(
  deps: JobDeps,
  input: T,
  job: LoadedJob,
): Promise<T> {
  if (input.session_id === undefined || sessionOfJobDir(job.dir) === null) return input;
  const runId = parseRunLabel(input.session_id);
  const frame = runId ? await deps.store.getStackFrame(runId) : null;
  return frame?.status === "running" ? input : { ...input, session_id: undefined };
}

/** Starts a job's workflow: a new session, or a child run on the caller's stack. */
export function startJobWorkflow(
  deps: JobDeps,
  input: JobStartInput & { workspace: WorkspaceObservation },
): Promise<Result<JobStartResponse>> {
  return guard(async () => {
    const sized = checkContext(runContext(input));
    if (!sized.ok) return sized;
    const picked = pickWorkflow(
      await deps.jobs.load(input.workspace.workspace, { session: input.session_id }),
      input,
    );
    if (!picked.ok) return picked;
    const placed = await placement(deps, await placedAs(deps, input, picked.value.job));
    if (!placed.ok) return placed;
    const { sessionId, agentId, owner, frames, parent } = placed.value;
    // the run's context: its `inputs`, and `instance_id` when given
    const root = await rootNode(picked.value.workflow.compiled, {
      sessionId: sessionId ?? randomHex(deps, 8),
      runId: randomHex(deps, 8),
      context: runContext(input),
      preferences: applyPreferences(deps.defaultPreferences ?? DEFAULT_PREFERENCES, undefined),
    });
    const { compiled, hash } = picked.value.workflow;
    const jobDir = picked.value.job.dir;
    const frame: StackFrame = {
      runId: root.runId,
      sessionId: root.sessionId,
      agentId,
      owner,
      parentRunId: parent?.runId ?? null,
      parentNodeId: parent?.tipNodeId ?? null,
      depth: frames.length,
      jobDir,
      workflowId: compiled.id,
      workflowHash: hash,
      status: "running",
      tipNodeId: root.nodeId,
      pendingStepId: root.pendingStepId,
    };
    await deps.store.write(async (tx) => {
      const pinned = await tx.hasSnapshot(hash);
      await tx.append(
        startEvents({
          root,
          frame,
          compiled: pinned ? null : compiled,
          input,
          newSession: sessionId === null,
        }),
      );
    });
    return ok({
      begin_step: beginStep(compiled, root, jobDir)!,
      stack: stackEntries([...frames, frame]),
    });
  });
}

/** The events of a start: the session (when new), the run, its pinned workflow, its root, its workspace and its place on the stack. */
function startEvents(at: {
  root: NodeRecord;
  frame: StackFrame;
  /** The compiled workflow, or `null` when its hash is already stored. */
  compiled: CompiledWorkflow | null;
  input: JobStartInput & { workspace: WorkspaceObservation };
  newSession: boolean;
}): DomainEvent[] {
  const { root, frame, input } = at;
  const ids = { sessionId: root.sessionId, runId: root.runId };
  return [
    ...(at.newSession
      ? [{ kind: "session_created" as const, sessionId: root.sessionId, title: input.goal }]
      : []),
    {
      kind: "run_started",
      ...ids,
      workflowId: frame.workflowId,
      workflowHash: frame.workflowHash,
      goal: input.goal,
    },
    { kind: "workflow_pinned", ...ids, workflowHash: frame.workflowHash, compiled: at.compiled },
    ...nodeCreated(root),
    { kind: "observation_recorded", ...ids, nodeId: root.nodeId, ...input.workspace },
    {
      kind: "run_stacked",
      ...ids,
      agentId: frame.agentId,
      parentRunId: frame.parentRunId,
      parentNodeId: frame.parentNodeId,
      jobDir: frame.jobDir,
      owner: frame.owner,
    },
  ];
}

/** A new run's context: its `inputs`, and `instance_id` when given. */
function runContext(input: JobStartInput): Record<string, unknown> {
  const context: Record<string, unknown> = { ...(input.inputs ?? {}) };
  if (input.instance_id) context.instance_id = input.instance_id;
  return context;
}
