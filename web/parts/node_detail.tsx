/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The session page's node panel: the focused node's facts, notes, artifacts, assessments,
 * blockers, the pending step's prompt, where it leads (children, attempts) and its context and
 * state.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { principalLabel } from "../../engine/access/team_policy.ts";
import { type NodeView, paths } from "../model.ts";
import { fmtTime, json } from "./display_text.ts";
import { Artifacts, Markdown } from "./notes.tsx";
import { NodeEvents } from "./node_events.tsx";
import { Footprint } from "./footprint.tsx";
import type { StepFootprint } from "../../store/sql/viewer/footprint.ts";
import type { Html } from "./shell.tsx";

/** What the node panel's pieces take: the node and how to link to another node of its run. */
type Part = { node: NodeView; link: (nodeId: string) => string };

function blockerText(b: unknown): string {
  if (b && typeof b === "object") {
    const o = b as Record<string, unknown>;
    const parts = [o.code, o.pointer && JSON.stringify(o.pointer), o.message].filter(Boolean);
    return parts.map(String).join(" · ");
  }
  return String(b);
}

const isAssessment = (e: Record<string, unknown>) => e.kind === "assessment_recorded";

/** The assessments the acknowledgement that led here recorded: each dimension's level. */
const Assessments: FC<{ events: Record<string, unknown>[] }> = ({ events }) => (
  <section class="section" id="assessments">
    <h3>Assessments</h3>
    <ul class="kids">
      {events.map((e) => (
        <li>
          <code>{String(e.assessmentId)}</code>
          {e.stepId ? <span class="muted small">{` on ${String(e.stepId)}`}</span> : null}:{" "}
          {Object.entries((e.dimensions ?? {}) as Record<string, unknown>).map((
            [dim, level],
            i,
          ) => (
            <>
              {i > 0 ? ", " : ""}
              {dim} <strong>{String(level)}</strong>
            </>
          ))}
        </li>
      ))}
    </ul>
  </section>
);

/** Kind and status badges, title, and the facts list. */
const NodeHead: FC<Part> = ({ node, link }) => (
  <>
    <div class="node-head">
      <span
        class={`badge ${
          node.kind === "step" ? "" : node.kind === "checkpoint" ? "checkpoint" : "blocked"
        }`}
      >
        {node.kind.replace("_", " ")}
      </span>
      {node.isPreferredTip ? <span class="badge tip">preferred tip</span> : null}
      {node.isComplete ? <span class="badge complete">run complete here</span> : null}
      {node.children.filter((c) => c.kind === "step").length > 1
        ? <span class="badge running">forks here</span>
        : null}
    </div>
    <h2>{node.label.title}</h2>
    <dl class="facts">
      <dt>node</dt>
      <dd class="mono">{node.nodeId}</dd>
      {node.label.stepId
        ? (
          <>
            <dt>step</dt>
            <dd class="mono">{node.label.stepId}</dd>
          </>
        )
        : null}
      <dt>depth</dt>
      <dd>{node.depth}</dd>
      <dt>created</dt>
      <dd>{fmtTime(node.createdAt)}</dd>
      {node.madeBy
        ? (
          <>
            <dt>by</dt>
            <dd class="made-by" title={node.madeBy.subject}>{principalLabel(node.madeBy)}</dd>
          </>
        )
        : null}
      {node.parentId
        ? (
          <>
            <dt>parent</dt>
            <dd>
              <a class="mono" href={link(node.parentId)} data-nav="1">{node.parentId}</a>
              {node.edgeKind
                ? <span class="muted">{` via ${node.edgeKind.replace("_", " ")}`}</span>
                : null}
            </dd>
          </>
        )
        : null}
    </dl>
  </>
);

/** What was recorded on the node: notes, artifacts, assessments, blockers and gaps. */
const NodeRecord: FC<{ node: NodeView }> = ({ node }) => {
  const assessments = node.events.filter(isAssessment);
  const blockers = node.attempts.flatMap((a) => a.blockers);
  const gaps = node.attempts.flatMap((a) => a.gaps);
  return (
    <>
      <section class="section" id="notes">
        <h3>Notes{node.notesStepId ? ` on ${node.notesStepId}` : ""}</h3>
        {node.notesMarkdown
          ? <Markdown text={node.notesMarkdown} />
          : <p class="muted small">No notes were recorded here.</p>}
      </section>

      {node.artifacts.length > 0
        ? (
          <section class="section">
            <h3>Artifacts ({node.artifacts.length})</h3>
            <Artifacts artifacts={node.artifacts} />
          </section>
        )
        : null}

      {assessments.length > 0 ? <Assessments events={assessments} /> : null}

      {blockers.length > 0 || gaps.length > 0
        ? (
          <section class="section">
            <h3>Blockers and gaps</h3>
            <ul class="blockers">
              {blockers.map((b, i) => <li key={i}>{blockerText(b)}</li>)}
              {gaps.map((g, i) => <li key={`g${i}`}>gap: {blockerText(g)}</li>)}
            </ul>
          </section>
        )
        : null}
    </>
  );
};

/** The step pending after this node (its prompt), or why there is none. */
const PendingStep: FC<{ node: NodeView }> = ({ node }) => (
  <section class="section">
    <h3>{node.pending ? "Pending step" : "Next"}</h3>
    {node.pending
      ? (
        <div class="prompt">
          <div class="node-head">
            <strong>{node.pending.title}</strong>
            <code>{node.pending.stepId}</code>
            {node.pending.requireConfirmation
              ? <span class="badge checkpoint">asks the user first</span>
              : null}
          </div>
          {node.pending.agentRole ? <p class="role">Role: {node.pending.agentRole}</p> : null}
          <Markdown text={node.pending.prompt} />
        </div>
      )
      : (
        <p class="muted small">
          {node.isComplete
            ? "The run is complete at this node: no step is pending."
            : "The pinned workflow snapshot is missing, so the prompt cannot be shown."}
        </p>
      )}
  </section>
);

/** Where the node leads: its children (branches when more than one) and recorded attempts. */
const NodeLinks: FC<Part> = ({ node, link }) => (
  <>
    {node.children.length > 0
      ? (
        <section class="section">
          <h3>
            {node.children.length > 1
              ? `Branches from here (${node.children.length})`
              : "Next node"}
          </h3>
          <ul class="kids">
            {node.children.map((c) => (
              <li>
                <a href={link(c.nodeId)} data-nav="1">
                  {node.childLabels[c.nodeId]?.title ?? c.nodeId}
                </a>{" "}
                <span class="muted mono small">{c.nodeId}</span>
              </li>
            ))}
          </ul>
        </section>
      )
      : null}

    {node.attempts.length > 0
      ? (
        <section class="section">
          <h3>Attempts on this node ({node.attempts.length})</h3>
          <ul class="kids">
            {node.attempts.map((a) => (
              <li>
                <span class={`badge ${a.outcome === "blocked" ? "blocked" : ""}`}>{a.kind}</span>
                {" "}
                {a.outcome} →{" "}
                <a class="mono" href={link(a.resultNodeId)} data-nav="1">{a.resultNodeId}</a>
              </li>
            ))}
          </ul>
        </section>
      )
      : null}
  </>
);

/** The focused node: notes, artifacts, the pending step's prompt, attempts, branches. */
export const NodeDetail: FC<{ node: NodeView; sessionId: string; footprint?: StepFootprint }> = (
  { node, sessionId, footprint }: {
    node: NodeView;
    sessionId: string;
    footprint?: StepFootprint;
  },
): Html => {
  const link = (id: string) => `${paths.node(sessionId, node.runId, id)}#node`;
  // snapshots and token counts are shown as the step's footprint
  const others = node.events.filter((e) =>
    !isAssessment(e) && e.kind !== "snapshot_recorded" && e.kind !== "usage_recorded"
  );
  return (
    <div>
      <NodeHead node={node} link={link} />
      {footprint && (footprint.durationMs !== null || footprint.snapshot)
        ? <Footprint step={footprint} />
        : null}
      <NodeRecord node={node} />
      {others.length > 0
        ? <NodeEvents events={others} runHref={(runId) => paths.run(sessionId, runId)} />
        : null}
      <PendingStep node={node} />
      <NodeLinks node={node} link={link} />

      <details class="section">
        <summary>Context, preferences and state</summary>
        <pre class="json">{json({ context: node.context, preferences: node.preferences, state: node.state })}</pre>
      </details>
    </div>
  );
};
