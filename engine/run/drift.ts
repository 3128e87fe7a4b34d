/**
 * The disk-drift check: a run keeps its pinned snapshot, and is told when the workflow file it
 * was started from changed or went away.
 * @module
 */
import type { EngineDeps, WorkflowSource } from "../model/ports.ts";
import type { Warning } from "../workflow/catalog.ts";
import { findCurrentWorkflow } from "../use_cases/inspect_workflow.ts";
import { SESSION_NOTES_ID } from "./session_notes.ts";

/** Warnings when the workflow on disk no longer matches the run's pinned snapshot. */
export async function driftWarnings(
  deps: Pick<EngineDeps, "workflows">,
  workflowId: string,
  pinnedHash: string,
): Promise<Warning[]> {
  if (workflowId === SESSION_NOTES_ID) return [];
  const current = await findCurrentWorkflow(deps.workflows, workflowId);
  if (!current) {
    return [{
      code: "WORKFLOW_FILE_GONE",
      message:
        `\`${workflowId}\` is no longer in any workflow source; this run continues on its pinned copy.`,
    }];
  }
  if (current.hash !== pinnedHash) {
    return [{
      code: "WORKFLOW_CHANGED_ON_DISK",
      message:
        `\`${workflowId}\` changed on disk since this run started; the run continues on its pinned copy (${
          pinnedHash.slice(0, 19)
        }…). Start a new run to use the new version.`,
    }];
  }
  return [];
}

/** A run's workflow: its id and the hash of the snapshot it is pinned to (neither changes). */
export interface RunWorkflow {
  /** The workflow id. */
  id: string;
  /** The pinned snapshot's hash. */
  hash: string;
}

/** Runs whose workflow is kept, at most, per workflow source. */
const KEPT_RUNS = 4096;
const WORKFLOWS = new WeakMap<WorkflowSource, Map<string, RunWorkflow>>();

/**
 * Keeps the workflow of a run read by a call on `source`, so that a later call on the run can
 * check for drift before reading it (an attempt does, before its transaction). Kept per source,
 * the one whose lookups say what drifted; the run read later confirms it.
 */
export function noteWorkflow(
  source: WorkflowSource,
  run: { runId: string; workflowId: string; workflowHash: string },
): void {
  let runs = WORKFLOWS.get(source);
  if (!runs) WORKFLOWS.set(source, runs = new Map());
  if (runs.has(run.runId)) return;
  if (runs.size >= KEPT_RUNS) runs.delete(runs.keys().next().value!);
  runs.set(run.runId, { id: run.workflowId, hash: run.workflowHash });
}

/** The workflow of a run read by a call on `source` before, or `undefined`. */
export function knownWorkflow(source: WorkflowSource, runId: string): RunWorkflow | undefined {
  return WORKFLOWS.get(source)?.get(runId);
}

/** Whether `run` is on the workflow `known` says. */
export function isKnown(
  run: { workflowId: string; workflowHash: string },
  known: RunWorkflow,
): boolean {
  return run.workflowId === known.id && run.workflowHash === known.hash;
}
