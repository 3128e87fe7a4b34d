/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The session page's sidebar: the session's facts, its runs (each in its branch colour) and
 * links to the export, the timeline, the notes and the JSON.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { sessionLabel } from "../../engine/model/ids.ts";
import { principalLabel } from "../../engine/access/team_policy.ts";
import { paths, type SessionView } from "../model.ts";
import { colorClass, fmtTime, plural } from "./display_text.ts";
import type { Html } from "./shell.tsx";

type Run = SessionView["detail"]["runs"][number];

function titleOf(runs: readonly Run[], runId: string): string {
  return runs.find((r) => r.runId === runId)?.title ?? runId;
}

/** The run a run hangs from: the one below it on a stack, or the parent that delegated it. */
const above = (r: Run) => r.parentRunId ?? r.delegatedFrom?.parentRunId ?? null;

/**
 * `nest1`..`nest3`: how deep a run sits under stacked or delegating runs (indented in the
 * list); a delegated child is also marked `delegated`.
 */
function nestClass(runs: readonly Run[], run: Run): string | undefined {
  let depth = 0;
  for (let r: Run | undefined = run; r && above(r) && depth < 3;) {
    const up: string = above(r)!;
    r = runs.find((x) => x.runId === up);
    if (r) depth++;
  }
  const classes = [depth > 0 ? `nest${depth}` : "", run.delegatedFrom ? "delegated" : ""];
  return classes.filter(Boolean).join(" ") || undefined;
}

/** One run in the sidebar's list: its title, workflow, status, where it hangs, who started it. */
function RunItem(
  { runs, r, i, current, sessionId }: {
    runs: readonly Run[];
    r: Run;
    i: number;
    current: string | undefined;
    sessionId: string;
  },
): Html {
  return (
    <li class={nestClass(runs, r)}>
      <a
        href={paths.run(sessionId, r.runId)}
        class={colorClass(i)}
        aria-current={r.runId === current ? "true" : undefined}
      >
        <span class="rt">{r.title}</span>
        <span class="rm">
          <span class="mono">{r.workflowId}</span>
          <span class={`badge ${r.status}`}>{r.status}</span>
        </span>
        {r.delegatedFrom
          ? (
            <span class="rm delegated-by">
              <span>
                {`child of ${
                  titleOf(runs, r.delegatedFrom.parentRunId)
                } · step ${r.delegatedFrom.stepId}`}
              </span>
            </span>
          )
          : null}
        {r.parentRunId || r.agentId
          ? (
            <span class="rm nested-in">
              {r.parentRunId ? <span>{`nested in ${titleOf(runs, r.parentRunId)}`}</span> : null}
              {r.agentId ? <span>{`agent ${r.agentId}`}</span> : null}
            </span>
          )
          : null}
        {r.startedBy
          ? (
            <span class="rm started-by">
              <span>{`started by ${principalLabel(r.startedBy)}`}</span>
              <span class="muted">
                {r.access === "team" ? "team may continue" : "owner only"}
              </span>
            </span>
          )
          : null}
        <span class="rm">
          <span>{r.nodeCount} nodes</span>
          <span>
            {r.branchCount} branch{plural(r.branchCount, "es")}
          </span>
        </span>
      </a>
    </li>
  );
}

/** The sidebar of a session page; the run on show is marked current. */
export const RunsSidebar: FC<{ view: SessionView }> = ({ view }: { view: SessionView }): Html => {
  const { session, runs } = view.detail;
  const current = view.graph?.run.runId;
  return (
    <aside class="panel" id="sidebar" data-live="1">
      <h1>{session.title}</h1>
      <span class={`badge ${session.status}`}>{session.status}</span>
      <dl class="facts">
        <dt>session</dt>
        <dd class="mono">{sessionLabel(session.sessionId)}</dd>
        <dt>created</dt>
        <dd>{fmtTime(session.createdAt)}</dd>
        <dt>updated</dt>
        <dd>{fmtTime(session.updatedAt)}</dd>
        <dt>events</dt>
        <dd>{session.eventCount}</dd>
        {session.health !== "healthy"
          ? (
            <>
              <dt>health</dt>
              <dd>
                <span class="badge corrupt">{session.health}</span>
              </dd>
            </>
          )
          : null}
      </dl>
      <h2 class="section">Runs ({runs.length}{view.detail.runsTruncated ? "+" : ""})</h2>
      <ul class="runs">
        {runs.map((r, i) => (
          <RunItem runs={runs} r={r} i={i} current={current} sessionId={session.sessionId} />
        ))}
      </ul>
      <div class="actions">
        <a href={paths.exportMd(session.sessionId)}>Export as Markdown</a>
        <a href={paths.bundle(session.sessionId)} download class="download-bundle">
          Download bundle
        </a>
        <a href="#timeline">Timeline</a>
        <a href="#session-notes">Session notes</a>
        <a href={`/api/sessions/${sessionLabel(session.sessionId)}`}>JSON</a>
      </div>
    </aside>
  );
};
