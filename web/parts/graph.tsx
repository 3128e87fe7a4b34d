/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The branch graph of one run: SVG lanes (one per branch) beside a list of rows, and its legend.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { raw } from "npm:hono@4.13.19/html";
import { type GraphNode, paths, type RunGraph } from "../model.ts";
import { colorClass, esc, firstLine, fmtClock, plural } from "./display_text.ts";
import type { Html } from "./shell.tsx";

/** Rows of the graph, in px (the stylesheet's `--row`). */
const ROW = 26;
/** Lane width, in px. */
const LANE = 14;
/** Left and right padding of the lanes, in px. */
const PAD = 11;

function nodeShape(node: GraphNode, x: number, y: number, color: string): string {
  if (node.kind === "checkpoint") {
    return `<polygon points="${x},${y - 5.5} ${x + 5.5},${y} ${x},${y + 5.5} ${
      x - 5.5
    },${y}" class="hollow ${color}"/>`;
  }
  if (node.kind === "blocked_attempt") {
    return `<rect x="${x - 4.5}" y="${y - 4.5}" width="9" height="9" class="blocked"/>`;
  }
  if (node.isComplete) return `<circle cx="${x}" cy="${y}" r="5" class="done ${color}"/>`;
  if (node.parentId === null || node.cut) {
    return `<circle cx="${x}" cy="${y}" r="5" class="hollow ${color}"/>`;
  }
  return `<circle cx="${x}" cy="${y}" r="4.5" class="dot ${color}"/>`;
}

/**
 * The lanes of a run graph as an SVG string: only numbers, class names and escaped ids go in
 * (no agent-written text), and building it by hand keeps a 1,000-node page well inside budget.
 */
function graphSvg(graph: RunGraph, sessionId: string, selected: string | null): string {
  const width = PAD * 2 + (graph.laneCount - 1) * LANE;
  const height = Math.max(1, graph.nodes.length) * ROW;
  const byId = new Map(graph.nodes.map((n) => [n.nodeId, n]));
  const x = (lane: number) => PAD + lane * LANE;
  const y = (row: number) => row * ROW + ROW / 2;
  const out: string[] = [
    `<svg width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" aria-hidden="true">`,
  ];
  for (const e of graph.edges) {
    const from = byId.get(e.from)!;
    const to = byId.get(e.to)!;
    const [xa, ya, xb, yb] = [x(from.lane), y(from.row), x(to.lane), y(to.row)];
    const d = e.fork
      ? `M${xa} ${ya}C${xa} ${ya + ROW * 0.7} ${xb} ${ya + ROW * 0.3} ${xb} ${ya + ROW}L${xb} ${yb}`
      : `M${xa} ${ya}L${xb} ${yb}`;
    out.push(`<path d="${d}" class="edge ${colorClass(to.branch)}"/>`);
  }
  for (const n of graph.nodes) {
    if (!n.cut) continue;
    const d = `M${x(n.lane)} ${y(n.row) - ROW / 2}L${x(n.lane)} ${y(n.row)}`;
    out.push(`<path d="${d}" class="edge cut ${colorClass(n.branch)}"/>`);
  }
  for (const n of graph.nodes) {
    const cx = x(n.lane);
    const cy = y(n.row);
    const href = esc(`${paths.node(sessionId, graph.run.runId, n.nodeId)}#node`);
    out.push(`<a href="${href}" data-nav="1" tabindex="-1">`);
    if (n.nodeId === graph.preferredTipId) {
      out.push(`<circle cx="${cx}" cy="${cy}" r="8.5" class="ring"/>`);
    }
    if (n.nodeId === selected) out.push(`<circle cx="${cx}" cy="${cy}" r="10.5" class="selring"/>`);
    out.push(nodeShape(n, cx, cy, colorClass(n.branch)), "</a>");
  }
  out.push("</svg>");
  return out.join("");
}

/** Props of {@linkcode Graph}: `childCounts` says how many child runs a node's parallel step opened. */
export type GraphProps = {
  graph: RunGraph;
  sessionId: string;
  selected: string | null;
  childCounts?: ReadonlyMap<string, number>;
};

/** The branch graph of one run: SVG lanes beside a list of rows. */
export const Graph: FC<GraphProps> = (
  { graph, sessionId, selected, childCounts }: GraphProps,
): Html => {
  const runId = graph.run.runId;
  return (
    <div class="graph" role="group" aria-label="Branch graph">
      {raw(graphSvg(graph, sessionId, selected))}
      <ol>
        {graph.nodes.map((n) => (
          <li
            id={`n-${n.nodeId}`}
            class={`kind-${n.kind}${n.nodeId === selected ? " sel" : ""}`}
            data-node={n.nodeId}
            data-branch={String(n.branch)}
          >
            <a
              href={`${paths.node(sessionId, runId, n.nodeId)}#node`}
              data-nav="1"
              aria-current={n.nodeId === selected ? "true" : undefined}
            >
              {n.kind === "step" && n.parentId !== null ? "✓ " : ""}
              {n.label.title}
            </a>
            {n.nodeId === graph.preferredTipId ? <span class="badge tip">tip</span> : null}
            {n.isComplete && n.kind === "step" ? <span class="badge complete">done</span> : null}
            {childCounts?.get(n.nodeId)
              ? (
                <a class="badge delegated" href="#children">
                  {`${childCounts.get(n.nodeId)} child run${plural(childCounts.get(n.nodeId)!)}`}
                </a>
              )
              : null}
            {n.notesPreview ? <span class="note">{firstLine(n.notesPreview)}</span> : null}
            <span class="t">{fmtClock(n.createdAt)}</span>
          </li>
        ))}
      </ol>
    </div>
  );
};

/** What the graph's shapes mean. */
export const Legend: FC = (): Html => (
  <div class="legend" aria-hidden="true">
    <span>
      <svg viewBox="0 0 14 14">
        <circle cx="7" cy="7" r="4.5" class="dot c0" />
      </svg>step
    </span>
    <span>
      <svg viewBox="0 0 14 14">
        <polygon points="7,1.5 12.5,7 7,12.5 1.5,7" class="hollow c0" />
      </svg>checkpoint
    </span>
    <span>
      <svg viewBox="0 0 14 14">
        <rect x="2.5" y="2.5" width="9" height="9" class="blocked" />
      </svg>blocked attempt
    </span>
    <span>
      <svg viewBox="0 0 14 14">
        <circle cx="7" cy="7" r="4" class="done c0" />
      </svg>complete
    </span>
    <span>
      <svg viewBox="0 0 14 14">
        <circle cx="7" cy="7" r="5.5" class="ring" />
        <circle cx="7" cy="7" r="2.5" class="dot c0" />
      </svg>preferred tip
    </span>
  </div>
);
