/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The session page's "Workflow" panel: the pinned workflow's steps and their prompt templates,
 * a window of them around the pending step.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import type { Pinned } from "../model.ts";
import type { RunSummary } from "../queries.ts";
import { shortHash } from "./display_text.ts";
import { Markdown } from "./notes.tsx";
import type { Html } from "./shell.tsx";

/** Most workflow steps listed at once (a window around the pending one). */
const MAX_WORKFLOW_STEPS = 100;

/** Props of {@linkcode WorkflowSteps}. */
export type WorkflowStepsProps = { pinned: Pinned; run: RunSummary; pendingStepId: string | null };

/** The workflow panel of a run; the pending step is open. */
export const WorkflowSteps: FC<WorkflowStepsProps> = (
  { pinned, run, pendingStepId }: WorkflowStepsProps,
): Html => {
  const steps = pinned.list;
  const at = pendingStepId === null ? -1 : steps.findIndex((s) => s.id === pendingStepId);
  const start = Math.max(
    0,
    Math.min(at - MAX_WORKFLOW_STEPS / 2, steps.length - MAX_WORKFLOW_STEPS),
  );
  const shown = steps.slice(start, start + MAX_WORKFLOW_STEPS);
  return (
    <section class="panel" id="workflow">
      <h2>
        Workflow <span class="mono small">{pinned.compiled.id}</span>
        <span class="muted small">
          v{pinned.compiled.version} · pinned {shortHash(run.workflowHash)}
        </span>
      </h2>
      <p class="muted small">{pinned.compiled.description}</p>
      {start > 0 ? <p class="muted small">{start} earlier steps not listed.</p> : null}
      <ol class="wf-steps" start={start + 1}>
        {shown.map((s) => (
          <li class={s.id === pendingStepId ? "current" : ""}>
            <details open={s.id === pendingStepId}>
              <summary>
                {s.title} <code>{s.id}</code>
                {s.runCondition ? <span class="badge">conditional</span> : null}
                {s.loopId ? <span class="badge">in loop {s.loopId}</span> : null}
              </summary>
              <Markdown text={s.promptTemplate} />
            </details>
          </li>
        ))}
      </ol>
      {start + shown.length < steps.length
        ? <p class="muted small">{steps.length - start - shown.length} more steps not listed.</p>
        : null}
    </section>
  );
};
