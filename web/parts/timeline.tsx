/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * A session's timeline: one lane per run, a dot per node at its creation time.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { raw } from "npm:hono@4.13.19/html";
import { paths, type TimelineView } from "../model.ts";
import { colorClass, esc, fmtTime } from "./display_text.ts";
import type { Html } from "./shell.tsx";

/** Props of {@linkcode Timeline}. */
export type TimelineProps = { timeline: TimelineView; sessionId: string };

/** The timeline panel; the dots are built as a string (escaped ids only) to stay cheap. */
export const Timeline: FC<TimelineProps> = ({ timeline, sessionId }: TimelineProps): Html => {
  const LABEL = 190;
  const W = 1000;
  const LANE_H = 30;
  const top = 8;
  const height = top + timeline.lanes.length * LANE_H + 22;
  const t0 = Date.parse(timeline.from);
  const t1 = Date.parse(timeline.to);
  const span = Math.max(1, t1 - t0);
  const laneOf = new Map(timeline.lanes.map((l) => [l.runId, l]));
  const xOf = (iso: string) => LABEL + 10 + ((Date.parse(iso) - t0) / span) * (W - LABEL - 20);
  return (
    <section class="panel timeline" id="timeline" data-live="1">
      <h2>
        Timeline <span class="muted small">a lane per run</span>
      </h2>
      {timeline.truncated
        ? <p class="muted small">Only the newest {timeline.nodes.length} nodes are drawn.</p>
        : null}
      <svg viewBox={`0 0 ${W} ${height}`} role="img" aria-label="Session timeline">
        {timeline.lanes.map((l) => {
          const y = top + l.index * LANE_H + LANE_H / 2;
          return (
            <g>
              <text x="0" y={y + 4} class="lane-label">
                {l.workflowId.length > 26 ? `${l.workflowId.slice(0, 25)}…` : l.workflowId}
              </text>
              <line x1={LABEL} x2={W - 4} y1={y} y2={y} class="track" />
            </g>
          );
        })}
        {raw(
          timeline.nodes.map((n) => {
            const lane = laneOf.get(n.runId);
            if (!lane) return "";
            const y = top + lane.index * LANE_H + LANE_H / 2;
            const href = esc(`${paths.node(sessionId, n.runId, n.nodeId)}#node`);
            const title = esc(`${n.kind} ${n.nodeId} · ${fmtTime(n.createdAt)}`);
            const cls = `tdot ${esc(n.kind)} ${colorClass(lane.index)}`;
            return `<a href="${href}" data-nav="1"><title>${title}</title><circle cx="${
              xOf(n.createdAt).toFixed(1)
            }" cy="${y}" r="4.5" class="${cls}"/></a>`;
          }).join(""),
        )}
        <text x={LABEL} y={height - 4} class="axis">{fmtTime(timeline.from)}</text>
        <text x={W - 4} y={height - 4} class="axis" text-anchor="end">{fmtTime(timeline.to)}</text>
      </svg>
    </section>
  );
};
