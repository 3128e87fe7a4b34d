/**
 * The disk-drift check: a run keeps its pinned snapshot, and is told when the workflow file it
 * was started from changed or went away.
 * @module
 */
import type { EngineDeps } from "../model/ports.ts";
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
