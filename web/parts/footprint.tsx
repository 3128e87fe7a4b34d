/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * What a step did, on the node its acknowledgement created: how long it took, the files it
 * changed with their diff, the verification evidence, the tokens it cost; and the chart of a
 * branch's time, change and tokens per step. The chart is inline SVG with attributes only (the
 * CSP forbids inline style); step names are agent-chosen, so they pass through JSX's escaping.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { totalTokens } from "../../engine/cost/usage.ts";
import type { StepFootprint } from "../../store/sql/viewer/footprint.ts";
import { paths } from "../model.ts";
import { DiffView } from "./diff_view.tsx";
import type { Html } from "./shell.tsx";

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`. */
export function fmtDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  const m = Math.floor(whole / 60);
  if (m < 60) return `${m} min ${String(whole % 60).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** `12,345` */
const fmtCount = (n: number) => n.toLocaleString("en-US");

/** Tokens as one line: the total, then each kind. */
export function fmtTokens(t: NonNullable<StepFootprint["tokens"]>): string {
  return `${fmtCount(totalTokens(t))} tokens (${fmtCount(t.inputTokens)} in, ${
    fmtCount(t.outputTokens)
  } out, ${fmtCount(t.cacheCreationInputTokens)} cache write, ${
    fmtCount(t.cacheReadInputTokens)
  } cache read; ${t.calls} call${t.calls === 1 ? "" : "s"})`;
}

const Changes: FC<{ changes: NonNullable<StepFootprint["changes"]> }> = ({ changes }) => (
  <>
    <p class="small" id="changes-summary">
      {changes.files.length} file{changes.files.length === 1 ? "" : "s"} changed · {changes.added}
      {" "}
      added, {changes.modified} modified, {changes.deleted} deleted ·{" "}
      <span class="plus">+{changes.linesAdded}</span>{" "}
      <span class="minus">−{changes.linesRemoved}</span>
    </p>
    {changes.files.length > 0
      ? (
        <ul class="changed-files">
          {changes.files.map((f) => (
            <li>
              <span class={`badge diff-${f.status}`}>{f.status}</span> <code>{f.path}</code>{" "}
              <span class="plus small">+{f.linesAdded}</span>{" "}
              <span class="minus small">−{f.linesRemoved}</span>
            </li>
          ))}
        </ul>
      )
      : null}
    {changes.diff || changes.diffTruncated
      ? <DiffView diff={changes.diff} truncated={changes.diffTruncated} />
      : null}
  </>
);

/** The footprint of the step that led to a node. */
export const Footprint: FC<{ step: StepFootprint }> = (
  { step }: { step: StepFootprint },
): Html => (
  <section class="section" id="footprint">
    <h3>What the step did</h3>
    <dl class="facts">
      <dt>took</dt>
      <dd id="step-duration">
        {step.durationMs === null ? "— (the run's start)" : fmtDuration(step.durationMs)}
      </dd>
      <dt>tokens</dt>
      <dd id="step-tokens">
        {step.tokens ? fmtTokens(step.tokens) : "not counted"}
        {step.tokensNotice ? <span class="muted small">{` (${step.tokensNotice})`}</span> : null}
      </dd>
      {step.snapshot
        ? (
          <>
            <dt>snapshot</dt>
            <dd>
              <code class="mono" title={step.snapshot.commit}>
                {step.snapshot.commit.slice(0, 12)}
              </code>
              {step.snapshot.dirty
                ? <span class="muted small">&#32;(files differed from HEAD)</span>
                : null}
            </dd>
          </>
        )
        : null}
      {step.evidence
        ? (
          <>
            <dt>verified</dt>
            <dd>
              <span class={`badge ${step.evidence.verdict === "passed" ? "complete" : "blocked"}`}>
                {step.evidence.verdict}
              </span>{" "}
              <code>{step.evidence.commandLine}</code>
              {step.evidence.exitCode === null ? null : ` (exit ${step.evidence.exitCode})`}
            </dd>
          </>
        )
        : null}
    </dl>
    {step.changes ? <Changes changes={step.changes} /> : (
      <p class="muted small">
        {step.snapshotNotice ??
          (step.snapshot
            ? "The run starts here: nothing to compare the files with."
            : "No snapshot of the workspace was recorded for this step.")}
      </p>
    )}
  </section>
);

// `left` leaves room for the row names and maxima
const CHART = { bar: 18, gap: 6, height: 70, label: 14, left: 136 } as const;

/** One row of bars: each step's value scaled to the row's largest. */
function barRow(values: (number | null)[], top: number) {
  const max = Math.max(1, ...values.map((v) => v ?? 0));
  return values.map((v, i) => {
    const h = v === null ? 0 : Math.max(v > 0 ? 2 : 0, Math.round((v / max) * CHART.height));
    return { x: i * (CHART.bar + CHART.gap), y: top + CHART.height - h, h };
  });
}

/** A chart value as text: a duration, a line count or a token count, by row. */
function valueText(row: number, v: number): string {
  return row === 0 ? fmtDuration(v) : row === 1 ? `${v} lines` : `${fmtCount(v)} tokens`;
}

type ChartProps = { steps: StepFootprint[]; sessionId: string; runId: string };

/**
 * A branch's time, lines changed and tokens per step: three rows of bars, one column per step
 * (root excluded), each linking to its node.
 */
export const FootprintChart: FC<ChartProps> = (
  { steps, sessionId, runId }: ChartProps,
): Html => {
  const shown = steps.filter((s) => s.durationMs !== null);
  if (shown.length === 0) return null;
  const rows = [
    { name: "time", cls: "bar-time", values: shown.map((s) => s.durationMs) },
    {
      name: "lines changed",
      cls: "bar-lines",
      values: shown.map((s) => s.changes ? s.changes.linesAdded + s.changes.linesRemoved : null),
    },
    {
      name: "tokens",
      cls: "bar-tokens",
      values: shown.map((s) => s.tokens ? totalTokens(s.tokens) : null),
    },
  ];
  const rowHeight = CHART.height + CHART.label + 8;
  const width = Math.max(1, shown.length * (CHART.bar + CHART.gap));
  return (
    <section class="panel" id="footprint-chart" data-live="1">
      <h3>Time, change and tokens per step</h3>
      <svg
        class="footprint-chart"
        width={width + CHART.left}
        height={rows.length * rowHeight}
        viewBox={`0 0 ${width + CHART.left} ${rows.length * rowHeight}`}
        role="img"
        aria-label="Time, lines changed and tokens per step on this branch"
      >
        {rows.map((row, r) => {
          const top = r * rowHeight + CHART.label;
          return (
            <g>
              <text x="0" y={top - 3} class="chart-label">{row.name}</text>
              <text x="0" y={top + 12} class="chart-label">
                {`max ${valueText(r, Math.max(0, ...row.values.map((v) => v ?? 0)))}`}
              </text>
              {barRow(row.values, top).map((b, i) => {
                const s = shown[i]!;
                const v = row.values[i];
                const what = v === null ? "not recorded" : valueText(r, v);
                return (
                  <a href={`${paths.node(sessionId, runId, s.nodeId)}#node`} data-nav="1">
                    <rect
                      class={`${row.cls}${v === null ? " bar-none" : ""}`}
                      x={b.x + CHART.left}
                      y={v === null ? top + CHART.height - 1 : b.y}
                      width={CHART.bar}
                      height={v === null ? 1 : Math.max(b.h, 1)}
                      data-step={s.completedStepId ?? s.kind}
                      data-value={v === null ? "" : String(v)}
                    >
                      <title>{`${s.completedStepId ?? s.kind}: ${what}`}</title>
                    </rect>
                  </a>
                );
              })}
            </g>
          );
        })}
      </svg>
    </section>
  );
};
