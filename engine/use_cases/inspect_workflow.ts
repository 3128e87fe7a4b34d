/**
 * `inspect_workflow`: metadata and a preview of the steps. Read-only; never starts anything.
 * @module
 */
import type { EngineDeps, WorkflowSource } from "../model/ports.ts";
import { fail, ok, type Result } from "../model/result.ts";
import type { InspectResponse } from "../answers/responses.ts";
import type { LoadedSet, LoadedWorkflow } from "../workflow/catalog.ts";
import { guard } from "../run/error_guard.ts";
import { summarize } from "./list_workflows.ts";
import { allSteps } from "../workflow/interpreter.ts";
import { FORMER_IDS_UNTIL, formerBundledAlias } from "../workflow/workflow_ids.ts";

const PREVIEW_CHARS = 280;

/** Finds a workflow by id, or explains which ids exist. */
export function findWorkflow(set: LoadedSet, workflowId: string): Result<LoadedWorkflow> {
  const found = set.workflows.find((w) => w.id === workflowId);
  if (found) return ok(found);
  const known = set.workflows.map((w) => w.id);
  const failed = set.errors.length > 0
    ? ` ${set.errors.length} workflow file(s) failed to load; list_workflows shows why.`
    : "";
  return fail(
    "WORKFLOW_NOT_FOUND",
    `No workflow has the id \`${workflowId}\`. Call list_workflows and use one of its ids.${failed}`,
    { details: { workflowId, knownIds: known.slice(0, 50) } },
  );
}

/** The workflow that defines exactly `workflowId`, compiling only it when the source can. */
async function findExact(
  source: WorkflowSource,
  workflowId: string,
): Promise<LoadedWorkflow | null> {
  return await source.find?.(workflowId) ??
    (await source.load()).workflows.find((w) => w.id === workflowId) ?? null;
}

/**
 * The workflow an id names now: the one that defines it, or, when none does, the bundled
 * workflow a former bundled id (`wr.<name>`) became, with a warning saying the new id. A user's
 * own `wr.*` file always wins over the alias.
 */
export async function findCurrentWorkflow(
  source: WorkflowSource,
  workflowId: string,
): Promise<LoadedWorkflow | null> {
  const found = await findExact(source, workflowId);
  const renamed = found ? null : formerBundledAlias(workflowId);
  if (!renamed) return found;
  const target = await findExact(source, renamed);
  if (target?.source !== "bundled") return null;
  return {
    ...target,
    warnings: [...target.warnings, {
      code: "WORKFLOW_ID_RENAMED",
      message:
        `\`${workflowId}\` is now \`${renamed}\`: waymark's bundled workflows moved out of WorkRail's \`wr.\` namespace. ` +
        `The old id works until waymark ${FORMER_IDS_UNTIL}; use \`${renamed}\`.`,
    }],
  };
}

/** Finds a workflow by id (or a former bundled id), or explains which ids exist. */
export async function lookupWorkflow(
  source: WorkflowSource,
  workflowId: string,
): Promise<Result<LoadedWorkflow>> {
  const found = await findCurrentWorkflow(source, workflowId);
  return found ? ok(found) : findWorkflow(await source.load(), workflowId);
}

/** Inspects one workflow. */
export function inspectWorkflow(
  deps: Pick<EngineDeps, "workflows">,
  input: { workflowId: string },
): Promise<Result<InspectResponse>> {
  return guard(async () => {
    const found = await lookupWorkflow(deps.workflows, input.workflowId);
    if (!found.ok) return found;
    const workflow = found.value;
    const { compiled } = workflow;
    const details: InspectResponse["workflow"] = {
      ...summarize(workflow),
      description: compiled.description,
      file: workflow.file,
      metaGuidance: compiled.metaGuidance,
    };
    if (compiled.recommendedPreferences) {
      details.recommendedPreferences = compiled.recommendedPreferences;
    }
    if (Object.keys(compiled.capabilities ?? {}).length > 0) {
      details.capabilities = compiled.capabilities;
    }
    if (compiled.features?.length) details.features = compiled.features;
    return ok({
      workflow: details,
      steps: allSteps(compiled).map((step) => {
        const preview: InspectResponse["steps"][number] = {
          stepId: step.id,
          title: step.title,
          requireConfirmation: step.requireConfirmation !== false,
          conditional: step.runCondition !== undefined,
          promptPreview: step.promptTemplate.length > PREVIEW_CHARS
            ? `${step.promptTemplate.slice(0, PREVIEW_CHARS - 1)}…`
            : step.promptTemplate,
        };
        if (step.agentRole !== undefined) preview.agentRole = step.agentRole;
        if (step.loopId !== undefined) preview.loopId = step.loopId;
        if (step.outputContract) preview.outputContract = step.outputContract.contractRef;
        return preview;
      }),
      warnings: workflow.warnings,
    });
  });
}
