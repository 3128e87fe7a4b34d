/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The session page's "Steps on this branch": root to the selected node, each step's notes and
 * artifacts; all but the newest entries are folded away.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { type BranchView, paths } from "../model.ts";
import { fmtTime } from "./display_text.ts";
import { Artifacts, Markdown } from "./notes.tsx";
import type { Html } from "./shell.tsx";

/** Entries of "steps on this branch" shown open; older ones are folded away. */
const OPEN_BRANCH_STEPS = 25;

type Entry = BranchView["entries"][number];

const BranchEntryItem: FC<{ e: Entry; sessionId: string; runId: string; focus: string }> = (
  { e, sessionId, runId, focus },
) => (
  <li class={`kind-${e.kind}${e.nodeId === focus ? " focus" : ""}`}>
    <div class="sh">
      <a href={`${paths.node(sessionId, runId, e.nodeId)}#node`} data-nav="1">
        {e.label.title}
      </a>
      {e.label.stepId ? <code class="muted">{e.label.stepId}</code> : null}
      <span class="muted small">{fmtTime(e.createdAt)}</span>
    </div>
    {e.notesMarkdown ? <Markdown text={e.notesMarkdown} /> : null}
    {e.artifacts.length > 0
      ? (
        <details>
          <summary>
            {e.artifacts.length} artifact{e.artifacts.length === 1 ? "" : "s"}
          </summary>
          <Artifacts artifacts={e.artifacts} />
        </details>
      )
      : null}
  </li>
);

/** Props of {@linkcode BranchSteps}. */
export type BranchStepsProps = {
  branch: BranchView;
  sessionId: string;
  runId: string;
  /** The selected node, highlighted. */
  focus: string;
};

/** The branch panel. */
export const BranchSteps: FC<BranchStepsProps> = (
  { branch, sessionId, runId, focus }: BranchStepsProps,
): Html => {
  const split = Math.max(0, branch.entries.length - OPEN_BRANCH_STEPS);
  const older = branch.entries.slice(0, split);
  const recent = branch.entries.slice(split);
  const item = (e: Entry) => (
    <BranchEntryItem key={e.nodeId} e={e} sessionId={sessionId} runId={runId} focus={focus} />
  );
  return (
    <section class="panel" id="branch" data-live="1">
      <h2>
        Steps on this branch <span class="muted small">root → selected node</span>
      </h2>
      {branch.omitted > 0
        ? (
          <p class="muted small">
            {branch.omitted} earlier nodes are not listed; open one in the graph.
          </p>
        )
        : null}
      {older.length > 0
        ? (
          <details class="older">
            <summary>{older.length} earlier entries</summary>
            <ol class="steps">{older.map(item)}</ol>
          </details>
        )
        : null}
      <ol class="steps">{recent.map(item)}</ol>
    </section>
  );
};
