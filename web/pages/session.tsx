/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * A session's page (`/sessions/:sid`, `…/runs/:rid`, `…/nodes/:nid`): the runs sidebar, one
 * run's branch graph beside the focused node, then the branch, the pinned workflow, the
 * timeline and the session notes. Updates live from the session's event stream.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { runLabel } from "../../engine/model/ids.ts";
import { paths, type RunGraph, type SessionView } from "../model.ts";
import { BranchSteps } from "../parts/branch_steps.tsx";
import { ChildRuns, DelegatedFrom } from "../parts/child_runs.tsx";
import { fmtTime, plural } from "../parts/display_text.ts";
import { Graph, Legend } from "../parts/graph.tsx";
import { NodeDetail } from "../parts/node_detail.tsx";
import { FootprintChart } from "../parts/footprint.tsx";
import { ReviewPasses } from "../parts/review_passes.tsx";
import { RunsSidebar } from "../parts/runs_sidebar.tsx";
import { SessionNotes } from "../parts/session_notes.tsx";
import { type Html, Layout } from "../parts/shell.tsx";
import { Timeline } from "../parts/timeline.tsx";
import { WorkflowSteps } from "../parts/workflow_steps.tsx";
import { WorkflowGraphPanel } from "../parts/workflow_graph.tsx";

const RunHead: FC<{ run: RunGraph["run"]; view: SessionView }> = ({ run, view }) => (
  <div id="run-head" data-live="1">
    <h2>
      {run.title}
      <span class={`badge ${run.status}`}>{run.status}</span>
    </h2>
    <div class="muted small">
      <span class="mono">{run.workflowId}</span> · <span class="mono">{runLabel(run.runId)}</span>
      {" · "}
      {run.nodeCount} nodes · {run.branchCount} branch{plural(run.branchCount, "es")}
      {" · started "}
      {fmtTime(run.createdAt)}
    </div>
    <DelegatedFrom run={run} view={view} />
  </div>
);

/** How many child runs each node of the run on show opened. */
function childCounts(view: SessionView): Map<string, number> {
  const out = new Map<string, number>();
  for (const g of view.children.groups) {
    out.set(g.parentNodeId, (out.get(g.parentNodeId) ?? 0) + g.children.length);
  }
  return out;
}

/** The run on show: its head, the graph with its legend, and the focused node's panel. */
const RunPanel: FC<{ graph: RunGraph; view: SessionView }> = ({ graph, view }) => {
  const sid = view.detail.session.sessionId;
  const node = view.node;
  return (
    <section class="panel" id="run">
      <RunHead run={graph.run} view={view} />
      <div class="run-body">
        <div>
          <Legend />
          <div class="graph-scroll" id="graph-scroll" data-keep-scroll="1">
            <div id="graph" data-live="1">
              {graph.truncated
                ? <p class="trunc">Only the newest {graph.nodes.length} nodes are drawn.</p>
                : null}
              <Graph
                graph={graph}
                sessionId={sid}
                selected={node?.nodeId ?? null}
                childCounts={childCounts(view)}
              />
            </div>
          </div>
        </div>
        <div class="panel" id="node" data-live="1">
          {node
            ? (
              <NodeDetail
                node={node}
                sessionId={sid}
                footprint={view.footprints.find((f) => f.nodeId === node.nodeId)}
              />
            )
            : <p class="muted">This run has no nodes yet.</p>}
        </div>
      </div>
    </section>
  );
};

/** A session: runs sidebar, one run's graph and the focused node, branch, workflow, timeline. */
export const SessionPageView: FC<{ view: SessionView }> = (
  { view }: { view: SessionView },
): Html => {
  const { session } = view.detail;
  const graph = view.graph;
  const node = view.node;
  const sid = session.sessionId;
  const crumbs = (
    <>
      <a href="/">Sessions</a>
      <span>/</span>
      <span>{session.title}</span>
    </>
  );
  return (
    <Layout
      title={`${session.title} · waymark`}
      events={paths.sessionEvents(sid)}
      version={view.version}
      crumbs={crumbs}
    >
      <div class="session-grid">
        <RunsSidebar view={view} />
        <div>
          {graph
            ? <RunPanel graph={graph} view={view} />
            : view.passes.length > 0
            ? null
            : (
              <section class="panel">
                <p class="muted">This session has no runs yet.</p>
              </section>
            )}
          {graph
            ? (
              <FootprintChart
                steps={view.footprints}
                sessionId={sid}
                runId={graph.run.runId}
              />
            )
            : null}
          <ReviewPasses passes={view.passes} />
          <ChildRuns view={view} />
          {graph && node && view.branch
            ? (
              <BranchSteps
                branch={view.branch}
                sessionId={sid}
                runId={graph.run.runId}
                focus={node.nodeId}
              />
            )
            : null}
          {graph && view.pinned ? <WorkflowGraphPanel graph={graph} pinned={view.pinned} /> : null}
          {graph && view.pinned
            ? (
              <WorkflowSteps
                pinned={view.pinned}
                run={graph.run}
                pendingStepId={node?.pending?.stepId ?? null}
              />
            )
            : null}
          <Timeline timeline={view.timeline} sessionId={sid} />
          <SessionNotes notes={view.notes} sessionId={sid} />
        </div>
      </div>
    </Layout>
  );
};
