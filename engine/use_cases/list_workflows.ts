/**
 * `list_workflows`: every workflow from every source; files that fail to load are listed, not
 * thrown.
 * @module
 */
import type { EngineDeps } from "../model/ports.ts";
import { ok, type Result } from "../model/result.ts";
import type { ListResponse, WorkflowSummary } from "../answers/responses.ts";
import type { LoadedWorkflow } from "../workflow/catalog.ts";
import { guard } from "../run/error_guard.ts";
import { stepCount } from "../workflow/interpreter.ts";

/** The summary of a loaded workflow (what `list_workflows` shows of it). */
export function summarize(workflow: LoadedWorkflow): WorkflowSummary {
  const { compiled } = workflow;
  const firstLine = compiled.description.split("\n")[0] ?? "";
  return {
    id: workflow.id,
    name: compiled.name,
    summary: firstLine.length > 200 ? `${firstLine.slice(0, 199)}…` : firstLine,
    kind: workflow.kind,
    idStatus: workflow.idStatus,
    source: workflow.source,
    version: compiled.version,
    stepCount: stepCount(compiled),
    workflowHash: workflow.hash,
    ...(workflow.layers
      ? {
        overlay: {
          layers: workflow.layers.layers.map((l) => l.workflowId),
          ...(workflow.layers.writtenAgainst
            ? { baseChangedFrom: workflow.layers.writtenAgainst }
            : {}),
        },
      }
      : {}),
  };
}

/** Lists workflows, sorted namespace → kind (workflow first) → id. */
export function listWorkflows(deps: Pick<EngineDeps, "workflows">): Promise<Result<ListResponse>> {
  return guard(async () => {
    if (deps.workflows.summaries) {
      const { workflows, errors } = await deps.workflows.summaries();
      return ok({ workflows, loadErrors: errors });
    }
    const set = await deps.workflows.load();
    return ok({ workflows: set.workflows.map(summarize), loadErrors: set.errors });
  });
}
