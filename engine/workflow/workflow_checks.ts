/**
 * The compiler's whole-workflow checks: the file's header (its id, top-level ids used once),
 * which top-level steps are loop bodies, and the expanded tree (ids used once, something to run).
 * @module
 */
import type { WorkflowIssue } from "./parse.ts";
import type { WorkflowFile, WorkflowStep } from "./schema.ts";
import type { CompiledNode } from "./compiled.ts";
import { checkWorkflowId } from "./workflow_ids.ts";

function collectIds(nodes: readonly CompiledNode[], out: string[]): string[] {
  for (const n of nodes) {
    out.push(n.id);
    if (n.kind === "loop") collectIds(n.body, out);
  }
  return out;
}

/** Problems of the file's header: an invalid id, top-level step ids used twice. */
export function headerIssues(file: WorkflowFile): WorkflowIssue[] {
  const issues: WorkflowIssue[] = [];
  const idCheck = checkWorkflowId(file.id);
  if (idCheck.status === "invalid") issues.push({ path: "id", message: idCheck.reason });
  const seen = new Map<string, number>();
  file.steps.forEach((step, i) => {
    const first = seen.get(step.id);
    if (first !== undefined) {
      issues.push({
        path: `steps[${i}].id`,
        message:
          `duplicate step id \`${step.id}\` (first at steps[${first}]): give each step its own id`,
      });
    } else seen.set(step.id, i);
  });
  return issues;
}

/** Top-level steps named as a loop's `body`: they run only inside that loop. */
export function loopBodies(file: WorkflowFile): Map<string, WorkflowStep> {
  const bodyRefs = new Set<string>();
  const scan = (steps: readonly WorkflowStep[]) => {
    for (const s of steps) {
      if (typeof s.body === "string") bodyRefs.add(s.body);
      else if (Array.isArray(s.body)) scan(s.body);
    }
  };
  scan(file.steps);
  return new Map(file.steps.filter((s) => bodyRefs.has(s.id)).map((s) => [s.id, s]));
}

/** Problems of the expanded tree: ids used twice, nothing to run. */
export function treeIssues(all: readonly CompiledNode[]): WorkflowIssue[] {
  const seen = new Set<string>();
  const dupes = [...new Set(collectIds(all, []).filter((id) => seen.has(id) || !seen.add(id)))];
  const issues: WorkflowIssue[] = dupes.map((id) => ({
    path: "steps",
    message:
      `step id \`${id}\` is used more than once after loops and templates are expanded: rename one`,
  }));
  if (all.length === 0) {
    issues.push({ path: "steps", message: "the workflow has no runnable step" });
  }
  return issues;
}
