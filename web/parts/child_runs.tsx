/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * Delegation on the session page: the child runs each parallel step of the run on show opened,
 * listed under that step (status, goal, workflow, the abort's explanation, a link to each
 * child), and, on a child run, the way back to its parent run and step. Stacked runs (the
 * sidebar's "nested in") are another relation and are not shown here.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { runLabel } from "../../engine/model/ids.ts";
import { paths, type SessionView } from "../model.ts";
import type { ChildGroup, RunSummary } from "../queries.ts";
import type { Html } from "./shell.tsx";

const ChildList: FC<{ group: ChildGroup; sessionId: string }> = ({ group, sessionId }) => (
  <ul class="children">
    {group.children.map((c) => (
      <li class="child" data-run={runLabel(c.runId)} data-status={c.status}>
        <span class={`badge ${c.status}`}>{c.status}</span>{" "}
        <a href={paths.run(sessionId, c.runId)}>{c.goal ?? c.workflowId}</a>{" "}
        <span class="muted small">
          <span class="mono">{c.workflowId}</span> · <span class="mono">{runLabel(c.runId)}</span>
        </span>
        {c.abortExplanation
          ? <p class="abort-reason">{`Abandoned: ${c.abortExplanation}`}</p>
          : null}
      </li>
    ))}
  </ul>
);

/** One line on where a group stands: how many children ended, and which one settled it. */
function standing(group: ChildGroup): string {
  const ended = group.children.filter((c) => c.status !== "open").length;
  const total = group.children.length;
  return group.settledBy
    ? `All ${total} ended · settled by ${runLabel(group.settledBy)}`
    : `${ended} of ${total} ended`;
}

/** The child runs of the run on show, under the parallel step (and node) that opened them. */
export const ChildRuns: FC<{ view: SessionView }> = ({ view }: { view: SessionView }): Html => {
  const run = view.graph?.run;
  const sid = view.detail.session.sessionId;
  const { groups, truncated } = view.children;
  if (!run || groups.length === 0) return <div id="children" data-live="1"></div>;
  return (
    <section class="panel" id="children" data-live="1">
      <h2>Child runs</h2>
      {truncated ? <p class="trunc">Only the oldest child runs are listed.</p> : null}
      {groups.map((g) => (
        <div class="child-group" data-step={g.stepId} data-node={g.parentNodeId}>
          <h3>
            {view.pinned?.steps.get(g.stepId)?.title ?? g.stepId} <code>{g.stepId}</code>
            <span class="muted small">
              {" at node "}
              <a class="mono" href={`${paths.node(sid, run.runId, g.parentNodeId)}#node`}>
                {g.parentNodeId}
              </a>
            </span>
          </h3>
          <p class="muted small settled">{standing(g)}</p>
          <ChildList group={g} sessionId={sid} />
        </div>
      ))}
    </section>
  );
};

/** On a child run's head: the parent run and the parallel step that opened it, linked. */
export const DelegatedFrom: FC<{ run: RunSummary; view: SessionView }> = (
  { run, view }: { run: RunSummary; view: SessionView },
): Html | null => {
  const from = run.delegatedFrom;
  if (!from) return null;
  const sid = view.detail.session.sessionId;
  const parent = view.detail.runs.find((r) => r.runId === from.parentRunId);
  return (
    <p class="delegated-from small">
      {`Child run ${from.index + 1} of step `}
      <code>{from.stepId}</code>
      {" in "}
      <a href={`${paths.node(sid, from.parentRunId, from.parentNodeId)}#node`}>
        {parent?.title ?? runLabel(from.parentRunId)}
      </a>{" "}
      <span class="mono muted">{runLabel(from.parentRunId)}</span>
    </p>
  );
};
