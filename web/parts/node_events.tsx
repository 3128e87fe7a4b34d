/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * What was recorded at a node besides its notes: quality reviews (self, external, json_schema)
 * with their verdicts and criteria, gaps (a skipped quality review's override reason among
 * them), an abort with its explanation, the evidence of a verification command the server
 * ran (or why it did not), and delegation: which child run settled a parallel step, and the
 * children's results a synthesis step was handed. Agent, reviewer and command output is
 * escaped by JSX.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { runLabel } from "../../engine/model/ids.ts";
import type { Html } from "./shell.tsx";

type Event = Record<string, unknown>;

const text = (v: unknown) => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v));

const Review: FC<{ e: Event }> = ({ e }) => {
  const criteria = Array.isArray(e.criteria) ? (e.criteria as Event[]) : [];
  const verdict = text(e.verdict);
  return (
    <li class="review">
      <span
        class={`badge ${
          verdict === "passed" ? "complete" : verdict === "requested" ? "checkpoint" : "blocked"
        }`}
      >
        {verdict}
      </span>{" "}
      <strong>{text(e.reviewer)} review</strong>
      <span class="muted">{` attempt ${text(e.attempt)}`}</span>
      <p class="feedback">{text(e.feedback)}</p>
      {criteria.length > 0
        ? (
          <ul class="criteria">
            {criteria.map((c) => (
              <li>
                {c.passed ? "✓" : "✗"} {text(c.criterion)}
                {c.feedback ? <span class="muted">{` — ${text(c.feedback)}`}</span> : null}
              </li>
            ))}
          </ul>
        )
        : null}
      {e.file ? <p class="muted small mono">{text(e.file)}</p> : null}
    </li>
  );
};

const Gap: FC<{ e: Event }> = ({ e }) => (
  <li class="gap">
    {e.code === "QUALITY_REVIEW_OVERRIDDEN"
      ? <strong>Quality review overridden:</strong>
      : <strong>{`Gap (${text(e.severity)}, ${text(e.code)}):`}</strong>} {text(e.message)}
  </li>
);

const Abort: FC<{ e: Event }> = ({ e }) => (
  <li class="abort">
    <span class="badge aborted">aborted</span>{" "}
    {e.stepId ? <span>{`at step ${text(e.stepId)}: `}</span> : null}
    {text(e.explanation)}
  </li>
);

/** Links a run of the session. */
type RunHref = (runId: string) => string;

const Settled: FC<{ e: Event; runHref: RunHref }> = ({ e, runHref }) => (
  <li class="settled">
    <span class="badge complete">settled</span>{" "}
    {`Every child run of step ${text(e.stepId)} has ended: settled by `}
    <a class="mono" href={runHref(text(e.by))}>{runLabel(text(e.by))}</a>
  </li>
);

const Collected: FC<{ e: Event; runHref: RunHref }> = ({ e, runHref }) => {
  const children = Array.isArray(e.children) ? (e.children as Event[]) : [];
  return (
    <li class="collected">
      <strong>{`Results handed to the synthesis step (${children.length})`}</strong>
      <ul class="kids">
        {children.map((c) => (
          <li data-run={runLabel(text(c.runId))}>
            <span class={`badge ${text(c.status)}`}>{text(c.status)}</span>{" "}
            <a href={runHref(text(c.runId))}>{c.goal ? text(c.goal) : text(c.workflowId)}</a>
            <span class="muted small">{` ${text(c.workflowId)}`}</span>
            {c.truncated ? <span class="muted small">(cut to its budget)</span> : null}
          </li>
        ))}
      </ul>
    </li>
  );
};

const VERDICT_BADGES: Record<string, string> = {
  passed: "complete",
  not_allowed: "checkpoint",
  unavailable: "checkpoint",
};

const seconds = (ms: unknown) => typeof ms === "number" ? `${(ms / 1000).toFixed(1)} s` : "";

/** A verification command's evidence: verdict, command, exit, git state, output tails. */
const Evidence: FC<{ e: Event }> = ({ e }) => {
  const verdict = text(e.verdict);
  const ran = e.durationMs !== null && e.durationMs !== undefined;
  const head = typeof e.gitHead === "string" ? e.gitHead.slice(0, 12) : null;
  const facts = [
    e.exitCode !== null && e.exitCode !== undefined ? `exit ${text(e.exitCode)}` : "",
    e.timedOut ? `killed after ${text(e.timeoutSeconds)} s` : "",
    ran ? seconds(e.durationMs) : "",
    head ? `HEAD ${head}${e.gitDirty ? " (dirty)" : ""}` : ran ? "not a git repository" : "",
  ].filter(Boolean).join(" · ");
  return (
    <li class="evidence" data-verdict={verdict}>
      <span class={`badge ${VERDICT_BADGES[verdict] ?? "blocked"}`}>{verdict}</span>{" "}
      <strong>Verification</strong> <code class="mono">{text(e.commandLine)}</code>
      {e.cwd ? <span class="muted">{` in ${text(e.cwd)}`}</span> : null}
      {facts ? <p class="muted small">{facts}</p> : null}
      {e.reason ? <p class="feedback">{text(e.reason)}</p> : null}
      {[["stdout", e.stdoutTail], ["stderr", e.stderrTail]].map(([name, tail]) =>
        tail
          ? (
            <details open={verdict !== "passed"}>
              <summary>
                {`${name}${e.truncated ? " (end only: the start was cut)" : ""}`}
              </summary>
              <pre class="json">{text(tail)}</pre>
            </details>
          )
          : null
      )}
    </li>
  );
};

/** How each kind of node event is shown (a gap, the kind every other event is, by default). */
const ROWS: Record<string, FC<{ e: Event; runHref: RunHref }>> = {
  review_recorded: Review,
  run_aborted: Abort,
  delegations_settled: Settled,
  delegations_collected: Collected,
  evidence_recorded: Evidence,
};

/** Props of {@linkcode NodeEvents}: the events, and how to link a run they name. */
export type NodeEventsProps = { events: Event[]; runHref: RunHref };

/** What was recorded at a node besides its notes, oldest first (shown when there is some). */
export const NodeEvents: FC<NodeEventsProps> = ({ events, runHref }: NodeEventsProps): Html => {
  return (
    <section class="section" id="reviews">
      <h3>Evidence, reviews, overrides, aborts and delegation ({events.length})</h3>
      <ul class="events">
        {events.map((e, i) => {
          const Row = ROWS[String(e.kind)] ?? Gap;
          return <Row key={i} e={e} runHref={runHref} />;
        })}
      </ul>
    </section>
  );
};
