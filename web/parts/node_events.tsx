/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * What was recorded at a node besides its notes: quality reviews (self, external, json_schema)
 * with their verdicts and criteria, gaps (a skipped quality review's override reason among
 * them), and an abort with its explanation. Agent and reviewer text is escaped by JSX.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
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

/** The reviews, gaps and abort recorded at a node, oldest first (shown when there are some). */
export const NodeEvents: FC<{ events: Event[] }> = ({ events }: { events: Event[] }): Html => {
  return (
    <section class="section" id="reviews">
      <h3>Reviews, overrides and aborts ({events.length})</h3>
      <ul class="events">
        {events.map((e, i) =>
          e.kind === "review_recorded"
            ? <Review key={i} e={e} />
            : e.kind === "run_aborted"
            ? <Abort key={i} e={e} />
            : <Gap key={i} e={e} />
        )}
      </ul>
    </section>
  );
};
