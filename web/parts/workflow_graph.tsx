/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * A workflow drawn as SVG on the server, from the same graph model `workflows inspect --graph`
 * prints as Mermaid (`engine/authoring/graph.ts`): one row per step, loops as boxes around their
 * body with their bound, conditions beside the step they guard, a parallel step's delegations
 * under it, routine steps tagged. On a run's page the run's path is marked: steps its preferred
 * branch took, steps only other branches took, and the pending step. No script, no CDN: the
 * viewer's CSP allows neither, and a top-down list of rows needs no layout engine.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { type GraphItem, type WorkflowGraph, workflowGraph } from "../../engine/authoring/graph.ts";
import { paths, type Pinned, type RunGraph } from "../model.ts";
import type { Html } from "./shell.tsx";

/** What a run did with each step: taken on the preferred branch, only on others, pending. */
export interface PathMarks {
  /** Steps the preferred branch acknowledged or is at. */
  taken: ReadonlySet<string>;
  /** Steps only other branches reached. */
  branched: ReadonlySet<string>;
  /** The pending step of the preferred tip. */
  current: string | null;
}

type Row =
  | { kind: "step"; item: Extract<GraphItem, { kind: "step" }>; depth: number }
  | { kind: "loop"; item: Extract<GraphItem, { kind: "loop" }>; depth: number; last: number }
  | { kind: "delegate"; workflowId: string; condition?: string; depth: number; of: string };

/** Most rows drawn (a longer workflow says how many were left out). */
export const MAX_GRAPH_ROWS = 400;

function rowsOf(items: readonly GraphItem[], depth: number, out: Row[]): Row[] {
  for (const item of items) {
    if (item.kind === "loop") {
      const row: Row = { kind: "loop", item, depth, last: 0 };
      out.push(row);
      rowsOf(item.body, depth + 1, out);
      row.last = out.length - 1;
      continue;
    }
    out.push({ kind: "step", item, depth });
    for (const d of item.delegations ?? []) {
      out.push({ kind: "delegate", ...d, depth: depth + 1, of: item.id });
    }
  }
  return out;
}

const ROW = 44;
const BOX = { w: 300, h: 32 };
const INDENT = 22;
const LEFT = 12;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function markOf(row: Row, marks?: PathMarks): string {
  if (!marks || row.kind !== "step") return "";
  const id = row.item.id;
  if (marks.current === id) return " current";
  if (marks.taken.has(id)) return " taken";
  if (marks.branched.has(id)) return " branched";
  return " untaken";
}

const RowShape: FC<{ row: Row; index: number; marks?: PathMarks }> = (
  { row, index, marks },
) => {
  const x = LEFT + row.depth * INDENT;
  const y = index * ROW + 6;
  if (row.kind === "delegate") {
    return (
      <g class="wg-delegate">
        <rect x={x} y={y + 4} width={BOX.w - 40} height={BOX.h - 8} rx="4" />
        <text x={x + 8} y={y + 21}>child run: {cut(row.workflowId, 34)}</text>
        {row.condition
          ? <text class="wg-cond" x={x + BOX.w - 30} y={y + 21}>if {cut(row.condition, 60)}</text>
          : null}
      </g>
    );
  }
  const item = row.item;
  const cls = row.kind === "loop" ? "wg-loop-head" : `wg-step${item.condition ? " cond" : ""}`;
  const sub = row.kind === "loop" ? row.item.bound : item.id;
  return (
    <g class={`${cls}${markOf(row, marks)}`} data-step={item.id}>
      <title>{`${item.title} (${item.id})${item.condition ? `, if ${item.condition}` : ""}`}</title>
      <rect x={x} y={y} width={BOX.w} height={BOX.h} rx={row.kind === "loop" ? 12 : 5} />
      <text x={x + 8} y={y + 14}>{cut(item.title, 44)}</text>
      <text class="wg-id" x={x + 8} y={y + 27}>{cut(sub, 52)}</text>
      {item.condition
        ? <text class="wg-cond" x={x + BOX.w + 10} y={y + 20}>if {cut(item.condition, 70)}</text>
        : null}
      {row.kind === "step" && row.item.routine
        ? <text class="wg-routine" x={x + BOX.w - 6} y={y + 27}>{row.item.routine}</text>
        : null}
    </g>
  );
};

/** The loop boxes and their "next iteration" arrows, behind the rows. */
const LoopFrames: FC<{ rows: Row[] }> = ({ rows }) => (
  <g class="wg-frames">
    {rows.map((row, i) => {
      if (row.kind !== "loop") return null;
      const x = LEFT + row.depth * INDENT - 6;
      const y = i * ROW + 2;
      const h = (row.last - i + 1) * ROW;
      const right = x + BOX.w + INDENT + 12;
      return (
        <g>
          <rect class="wg-loop" x={x} y={y} width={right - x} height={h} rx="8" />
          <path
            class="wg-back"
            d={`M ${right - 8} ${y + h - 16} V ${y + 16} H ${right - 16}`}
            marker-end="url(#wg-arrow)"
          />
        </g>
      );
    })}
  </g>
);

/** The arrows from each row to the next one at the same depth or shallower. */
const Edges: FC<{ rows: Row[] }> = ({ rows }) => (
  <g class="wg-edges">
    {rows.map((row, i) => {
      const next = rows.slice(i + 1).findIndex((r) => r.kind !== "delegate");
      if (row.kind === "delegate" || next < 0) return null;
      const to = i + 1 + next;
      const x = LEFT + Math.min(row.depth, rows[to]!.depth) * INDENT + 16;
      return (
        <path
          class={rows[to]!.kind === "step" && (rows[to] as { item: GraphItem }).item.condition
            ? "wg-edge cond"
            : "wg-edge"}
          d={`M ${x} ${i * ROW + 6 + BOX.h} V ${to * ROW + 6}`}
          marker-end="url(#wg-arrow)"
        />
      );
    })}
  </g>
);

/** The workflow graph, with a run's path when `marks` is given. */
export const WorkflowGraphSvg: FC<{ graph: WorkflowGraph; marks?: PathMarks }> = (
  { graph, marks }: { graph: WorkflowGraph; marks?: PathMarks },
): Html => {
  const all = rowsOf(graph.items, 0, []);
  const rows = all.slice(0, MAX_GRAPH_ROWS);
  const depth = Math.max(0, ...rows.map((r) => r.depth));
  const width = LEFT + depth * INDENT + BOX.w + 560;
  const height = rows.length * ROW + 8;
  return (
    <div class="wg-scroll">
      <svg
        class={`wf-graph${marks ? " marked" : ""}`}
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        role="img"
        aria-label={`Graph of ${graph.workflowId}`}
      >
        <defs>
          <marker
            id="wg-arrow"
            viewBox="0 0 8 8"
            refX="7"
            refY="4"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M 0 0 L 8 4 L 0 8 z" />
          </marker>
        </defs>
        <LoopFrames rows={rows} />
        <Edges rows={rows} />
        {rows.map((row, i) => <RowShape key={i} row={row} index={i} marks={marks} />)}
      </svg>
      {all.length > rows.length
        ? <p class="muted small">{all.length - rows.length} more rows not drawn.</p>
        : null}
    </div>
  );
};

/** The legend of a marked graph. */
export const PathLegend: FC = (): Html => (
  <p class="muted small wg-legend">
    <span class="wg-key taken">taken</span> <span class="wg-key branched">on another branch</span>
    {" "}
    <span class="wg-key current">pending</span> <span class="wg-key untaken">not reached</span>{" "}
    · dashed: conditional
  </p>
);

/** The marks of a run's path from its graph's nodes: each node's pending step, by branch. */
export function pathMarks(
  nodes: readonly { pendingStepId: string | null; preferred: boolean; nodeId: string }[],
  preferredTipId: string | null,
): PathMarks {
  const taken = new Set<string>();
  const other = new Set<string>();
  let current: string | null = null;
  for (const n of nodes) {
    if (n.pendingStepId === null) continue;
    (n.preferred ? taken : other).add(n.pendingStepId);
    if (n.nodeId === preferredTipId) current = n.pendingStepId;
  }
  return { taken, branched: new Set([...other].filter((s) => !taken.has(s))), current };
}

/** The run page's panel: the pinned workflow with the run's path marked, and its page's link. */
export const WorkflowGraphPanel: FC<{ graph: RunGraph; pinned: Pinned }> = (
  { graph, pinned }: { graph: RunGraph; pinned: Pinned },
): Html => (
  <section class="panel" id="workflow-graph">
    <h2>
      Path through the workflow{" "}
      <a class="small" href={paths.workflow(graph.run.workflowHash)}>workflow page</a>
    </h2>
    <PathLegend />
    <WorkflowGraphSvg
      graph={workflowGraph(pinned.compiled)}
      marks={pathMarks(graph.nodes, graph.preferredTipId)}
    />
  </section>
);
