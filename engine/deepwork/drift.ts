/**
 * A running workflow keeps the job as it was when it started (pinned); when `job.yml` or a
 * step's instructions changed since, the answers say which file, and that a new start picks the
 * change up, as the default profile reports drift.
 * @module
 */
import type { CompiledNode, CompiledWorkflow } from "../workflow/compiled.ts";
import type { LoadedJobs } from "./job_catalog.ts";
import type { StackFrame } from "../model/ports.ts";
import { workflowLabel } from "./stack.ts";

/** A warning in a DeepWork answer. */
export interface JobWarning {
  /** `JOB_CHANGED_ON_DISK`. */
  code: "JOB_CHANGED_ON_DISK";
  /** What changed, and what to do. */
  message: string;
}

function prompts(compiled: CompiledWorkflow): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (nodes: readonly CompiledNode[]) => {
    for (const n of nodes) {
      if (n.kind === "step") out.set(n.id, n.promptTemplate);
      else if ("body" in n && Array.isArray(n.body)) walk(n.body as CompiledNode[]);
    }
  };
  walk(compiled.steps);
  return out;
}

/** The drift warning of a running workflow against the jobs on disk now, if any. */
export function jobDrift(
  loaded: LoadedJobs,
  at: { frame: Pick<StackFrame, "workflowId" | "workflowHash">; pinned: CompiledWorkflow },
): JobWarning[] {
  const { frame, pinned } = at;
  const label = workflowLabel(frame.workflowId);
  const job = loaded.jobs.find((j) => frame.workflowId.startsWith(`${j.name}.`));
  const current = job?.workflows.find((w) => w.compiled.id === frame.workflowId);
  const tail =
    "This run goes on with the version it started with; a new start_workflow picks up the change.";
  if (!job || !current) {
    return [{
      code: "JOB_CHANGED_ON_DISK",
      message: `\`${label}\` is no longer defined by any job.yml it can be loaded from. ${tail}`,
    }];
  }
  if (current.hash === frame.workflowHash) return [];
  const now = prompts(current.compiled);
  const changed = [...prompts(pinned)].filter(([id, text]) => now.get(id) !== text)
    .map(([id]) => `${job.dir}/${job.stepFiles[id] ?? "job.yml"}`);
  const files = [...new Set(changed.length > 0 ? changed : [`${job.dir}/job.yml`])];
  return [{
    code: "JOB_CHANGED_ON_DISK",
    message: `\`${label}\` changed since this run started: ${
      files.map((f) => `\`${f}\``).join(", ")
    }. ${tail}`,
  }];
}
