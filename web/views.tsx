/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The viewer's pages, server-rendered with hono/jsx. Every string an agent or a workflow wrote
 * goes through JSX text or attribute escaping, or through the sanitising Markdown renderer; the
 * only `raw()` calls below take that renderer's output. No inline style or script (the CSP
 * forbids both): layout comes from the stylesheet and SVG attributes.
 * @module
 */
import type { Child, FC } from "npm:hono@4.13.19/jsx";
import { raw } from "npm:hono@4.13.19/html";
import { renderMarkdownBounded } from "./markdown.ts";
import {
  type BranchView,
  type GraphNode,
  type NodeView,
  paths,
  type Pinned,
  type RunGraph,
  type SessionView,
  type TimelineView,
} from "./model.ts";
import {
  AGE_FILTERS,
  type RunSummary,
  type SessionFilters,
  type SessionNote,
  type SessionPage,
  STATUS_FILTERS,
} from "./queries.ts";

/** What a component renders. */
export type Html = ReturnType<FC>;

/** Rows of the graph, in px (the stylesheet's `--row`). */
const ROW = 26;
/** Lane width, in px. */
const LANE = 14;
/** Left and right padding of the lanes, in px. */
const PAD = 11;
/** Most workflow steps listed at once (a window around the pending one). */
const MAX_WORKFLOW_STEPS = 100;
/** Most characters of a JSON value printed inline. */
const MAX_JSON_CHARS = 20_000;

const AGE_LABELS: Record<string, string> = {
  "1d": "last 24 hours",
  "7d": "last 7 days",
  "30d": "last 30 days",
  "older30d": "older than 30 days",
};

/** `2025-01-02 03:04:05Z` from an ISO time. */
export function fmtTime(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function fmtClock(iso: string): string {
  const m = /T(\d\d:\d\d:\d\d)/.exec(iso);
  return m ? m[1]! : iso;
}

/** "3 min ago" style age. */
export function fmtAge(iso: string, now: Date): string {
  const ms = now.getTime() - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.round(h / 24)} days ago`;
}

function shortHash(hash: string): string {
  return hash.replace(/^sha256:/, "").slice(0, 12);
}

function json(value: unknown): string {
  const text = JSON.stringify(value, null, 2) ?? "null";
  return text.length > MAX_JSON_CHARS
    ? `${text.slice(0, MAX_JSON_CHARS)}\n… (${text.length - MAX_JSON_CHARS} more characters)`
    : text;
}

function firstLine(text: string | null, max = 120): string {
  if (!text) return "";
  const line = text.split("\n").map((l) => l.replace(/^[#>*\-\s]+/, "").trim()).find((l) => l) ??
    "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Color class of a branch or run index. */
function colorClass(index: number): string {
  return `c${index === 0 ? 0 : 1 + (index - 1) % 7}`;
}

const Markdown: FC<{ text: string }> = ({ text }) => (
  <div class="md">{raw(renderMarkdownBounded(text))}</div>
);

const Logo: FC = () => (
  <svg viewBox="0 0 20 20" aria-hidden="true">
    <path d="M4 3v14" class="edge c0" />
    <path d="M4 7c0 3 8 2 8 6v4" class="edge c1" />
    <circle cx="4" cy="4" r="2.6" class="dot c0" />
    <circle cx="4" cy="16" r="2.6" class="dot c0" />
    <circle cx="12" cy="16" r="2.6" class="hollow c1" />
  </svg>
);

/** Props of {@linkcode Layout}. */
export type LayoutProps = {
  title: string;
  crumbs?: Child;
  events?: string;
  version?: string;
  children?: Child;
};

/** The page frame. */
export const Layout: FC<LayoutProps> = (
  { title, crumbs, events, version, children }: LayoutProps,
): Html => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="color-scheme" content="light dark" />
      <meta name="referrer" content="no-referrer" />
      <title>{title}</title>
      <link rel="icon" href="/assets/icon.svg" type="image/svg+xml" />
      <link rel="stylesheet" href="/assets/style.css" />
      <script src="/assets/app.js" defer></script>
    </head>
    <body data-events={events} data-version={version}>
      <header class="top">
        <a class="brand" href="/">
          <Logo />waymark
        </a>
        <nav class="crumbs" aria-label="Breadcrumbs">{crumbs}</nav>
        <span class="spacer"></span>
        {events ? <span id="live" class="live">connecting…</span> : null}
      </header>
      <main>{children}</main>
      <footer>waymark viewer · read-only · bound to this machine</footer>
    </body>
  </html>
);

// ---------------------------------------------------------------------------------------------
// sessions list

function listHref(filters: SessionFilters, page: number): string {
  const params = new URLSearchParams();
  if (filters.q) params.set("q", filters.q);
  if (filters.workflow) params.set("workflow", filters.workflow);
  if (filters.workspace) params.set("workspace", filters.workspace);
  if (filters.status) params.set("status", filters.status);
  if (filters.age) params.set("age", filters.age);
  if (page > 1) params.set("page", String(page));
  const text = params.toString();
  return text ? `/?${text}` : "/";
}

/** Props of {@linkcode SessionsPage}. */
export type SessionsPageProps = {
  page: SessionPage;
  filters: SessionFilters;
  workflows: string[];
  workspaces: string[];
  now: Date;
  version: string;
};

/** The sessions list. */
export const SessionsPage: FC<SessionsPageProps> = (
  { page, filters, workflows, workspaces, now, version }: SessionsPageProps,
): Html => {
  const pageNo = Math.floor(page.offset / page.limit) + 1;
  const filtered = Boolean(
    filters.q || filters.workflow || filters.workspace || filters.status || filters.age,
  );
  return (
    <Layout title="Sessions · waymark" events="/api/events" version={version}>
      <section class="panel">
        <h1>Sessions</h1>
        <form class="filters" method="get" action="/" role="search">
          <label class="grow">
            Search
            <input
              type="search"
              name="q"
              value={filters.q ?? ""}
              placeholder="title, workflow id, goal or ses_…"
              aria-label="Search sessions"
            />
          </label>
          <label>
            Workflow
            <select name="workflow">
              <option value="">any</option>
              {workflows.map((w) => (
                <option key={w} value={w} selected={filters.workflow === w}>{w}</option>
              ))}
            </select>
          </label>
          {workspaces.length > 0 || filters.workspace
            ? (
              <label>
                Workspace
                <select name="workspace">
                  <option value="">any</option>
                  {[...new Set([...(filters.workspace ? [filters.workspace] : []), ...workspaces])]
                    .map((w) => (
                      <option key={w} value={w} selected={filters.workspace === w}>{w}</option>
                    ))}
                </select>
              </label>
            )
            : null}
          <label>
            Status
            <select name="status">
              <option value="">any</option>
              {STATUS_FILTERS.map((s) => (
                <option value={s} selected={filters.status === s}>{s}</option>
              ))}
            </select>
          </label>
          <label>
            Last active
            <select name="age">
              <option value="">any time</option>
              {AGE_FILTERS.map((a) => (
                <option value={a} selected={filters.age === a}>{AGE_LABELS[a]}</option>
              ))}
            </select>
          </label>
          <button type="submit">Filter</button>
          {filtered ? <a class="reset" href="/">Clear</a> : null}
        </form>
        <div id="sessions" data-live="1">
          {page.sessions.length === 0
            ? (
              <p class="empty">
                {filtered
                  ? "No session matches these filters."
                  : "No sessions yet. Start a workflow from your agent and it shows up here."}
              </p>
            )
            : (
              <ul class="sessions">
                {page.sessions.map((s) => (
                  <li>
                    <a class="card" href={paths.session(s.sessionId)}>
                      <span class="title">{s.title}</span>
                      <span class="right nowrap">
                        <span class={`badge ${s.status}`}>{s.status}</span>
                      </span>
                      <span class="meta">
                        <span class="mono">ses_{s.sessionId}</span>
                        <span>{s.workflows.join(", ") || "no runs"}</span>
                        <span>
                          {s.runCount} run{s.runCount === 1 ? "" : "s"} · {s.eventCount} events
                        </span>
                      </span>
                      <span class="right">
                        <time datetime={s.updatedAt} title={fmtTime(s.updatedAt)}>
                          {fmtAge(s.updatedAt, now)}
                        </time>
                      </span>
                    </a>
                  </li>
                ))}
              </ul>
            )}
          <nav class="pager" aria-label="Pages">
            <span>
              {pageNo > 1 ? <a href={listHref(filters, pageNo - 1)}>← Newer</a> : null}
            </span>
            <span class="muted small">page {pageNo}</span>
            <span>{page.hasMore ? <a href={listHref(filters, pageNo + 1)}>Older →</a> : null}</span>
          </nav>
        </div>
      </section>
    </Layout>
  );
};

// ---------------------------------------------------------------------------------------------
// session page

const RunsSidebar: FC<{ view: SessionView }> = ({ view }) => {
  const { session, runs } = view.detail;
  const current = view.graph?.run.runId;
  return (
    <aside class="panel" id="sidebar" data-live="1">
      <h1>{session.title}</h1>
      <span class={`badge ${session.status}`}>{session.status}</span>
      <dl class="facts">
        <dt>session</dt>
        <dd class="mono">ses_{session.sessionId}</dd>
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
          <li>
            <a
              href={paths.run(session.sessionId, r.runId)}
              class={colorClass(i)}
              aria-current={r.runId === current ? "true" : undefined}
            >
              <span class="rt">{r.title}</span>
              <span class="rm">
                <span class="mono">{r.workflowId}</span>
                <span class={`badge ${r.status}`}>{r.status}</span>
              </span>
              <span class="rm">
                <span>{r.nodeCount} nodes</span>
                <span>
                  {r.branchCount} branch{r.branchCount === 1 ? "" : "es"}
                </span>
              </span>
            </a>
          </li>
        ))}
      </ul>
      <div class="actions">
        <a href={paths.exportMd(session.sessionId)}>Export as Markdown</a>
        <a href="#timeline">Timeline</a>
        <a href="#session-notes">Session notes</a>
        <a href={`/api/sessions/ses_${session.sessionId}`}>JSON</a>
      </div>
    </aside>
  );
};

/** Escapes text for HTML and attribute values (for the SVG built as a string below). */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

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

/** The branch graph of one run: SVG lanes beside a list of rows. */
const Graph: FC<{ graph: RunGraph; sessionId: string; selected: string | null }> = (
  { graph, sessionId, selected },
) => {
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
            {n.notesPreview ? <span class="note">{firstLine(n.notesPreview)}</span> : null}
            <span class="t">{fmtClock(n.createdAt)}</span>
          </li>
        ))}
      </ol>
    </div>
  );
};

const Legend: FC = () => (
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

function blockerText(b: unknown): string {
  if (b && typeof b === "object") {
    const o = b as Record<string, unknown>;
    const parts = [o.code, o.pointer && JSON.stringify(o.pointer), o.message].filter(Boolean);
    return parts.map(String).join(" · ");
  }
  return String(b);
}

const Artifacts: FC<{ artifacts: unknown[] }> = ({ artifacts }) => (
  <ul class="artifacts">
    {artifacts.map((a) => {
      const kind = a && typeof a === "object" && "kind" in a
        ? String((a as { kind: unknown }).kind)
        : "artifact";
      return (
        <li>
          <div class="kind">{kind}</div>
          <pre class="json">{json(a)}</pre>
        </li>
      );
    })}
  </ul>
);

/** The focused node: notes, artifacts, the pending step's prompt, attempts, branches. */
const NodeDetail: FC<{ node: NodeView; sessionId: string }> = ({ node, sessionId }) => {
  const link = (id: string) => `${paths.node(sessionId, node.runId, id)}#node`;
  const blockers = node.attempts.flatMap((a) => a.blockers);
  const gaps = node.attempts.flatMap((a) => a.gaps);
  return (
    <div>
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

      <details class="section">
        <summary>Context, preferences and state</summary>
        <pre class="json">{json({ context: node.context, preferences: node.preferences, state: node.state })}</pre>
      </details>
    </div>
  );
};

/** Entries of "steps on this branch" shown open; older ones are folded away. */
const OPEN_BRANCH_STEPS = 25;

const BranchEntryItem: FC<{
  e: BranchView["entries"][number];
  sessionId: string;
  runId: string;
  focus: string;
}> = ({ e, sessionId, runId, focus }) => (
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

const BranchSteps: FC<{ branch: BranchView; sessionId: string; runId: string; focus: string }> = (
  { branch, sessionId, runId, focus },
) => {
  const split = Math.max(0, branch.entries.length - OPEN_BRANCH_STEPS);
  const older = branch.entries.slice(0, split);
  const recent = branch.entries.slice(split);
  const item = (e: BranchView["entries"][number]) => (
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

const WorkflowSteps: FC<{ pinned: Pinned; run: RunSummary; pendingStepId: string | null }> = (
  { pinned, run, pendingStepId },
) => {
  const steps = pinned.list;
  const at = pendingStepId === null ? -1 : steps.findIndex((s) => s.id === pendingStepId);
  const start = Math.max(
    0,
    Math.min(at - MAX_WORKFLOW_STEPS / 2, steps.length - MAX_WORKFLOW_STEPS),
  );
  const shown = steps.slice(start, start + MAX_WORKFLOW_STEPS);
  return (
    <section class="panel" id="workflow">
      <h2>
        Workflow <span class="mono small">{pinned.compiled.id}</span>
        <span class="muted small">
          v{pinned.compiled.version} · pinned {shortHash(run.workflowHash)}
        </span>
      </h2>
      <p class="muted small">{pinned.compiled.description}</p>
      {start > 0 ? <p class="muted small">{start} earlier steps not listed.</p> : null}
      <ol class="wf-steps" start={start + 1}>
        {shown.map((s) => (
          <li class={s.id === pendingStepId ? "current" : ""}>
            <details open={s.id === pendingStepId}>
              <summary>
                {s.title} <code>{s.id}</code>
                {s.runCondition ? <span class="badge">conditional</span> : null}
                {s.loopId ? <span class="badge">in loop {s.loopId}</span> : null}
              </summary>
              <Markdown text={s.promptTemplate} />
            </details>
          </li>
        ))}
      </ol>
      {start + shown.length < steps.length
        ? <p class="muted small">{steps.length - start - shown.length} more steps not listed.</p>
        : null}
    </section>
  );
};

const Timeline: FC<{ timeline: TimelineView; sessionId: string }> = ({ timeline, sessionId }) => {
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

const SessionNotes: FC<{ notes: SessionNote[]; sessionId: string }> = ({ notes, sessionId }) => (
  <section class="panel" id="session-notes" data-live="1">
    <h2>
      Session notes <span class="muted small">checkpoint notes, newest first</span>
    </h2>
    {notes.length === 0
      ? <p class="muted small">No checkpoint notes in this session yet.</p>
      : (
        <ul class="note-list">
          {notes.map((n) => (
            <li>
              <div class="small">
                <a href={`${paths.node(sessionId, n.runId, n.nodeId)}#node`} data-nav="1">
                  {fmtTime(n.createdAt)}
                </a>
              </div>
              <Markdown text={n.notesMarkdown} />
            </li>
          ))}
        </ul>
      )}
  </section>
);

/** A session: runs sidebar, one run's graph and the focused node, branch, workflow, timeline. */
export const SessionPageView: FC<{ view: SessionView }> = (
  { view }: { view: SessionView },
): Html => {
  const { session } = view.detail;
  const graph = view.graph;
  const node = view.node;
  const sid = session.sessionId;
  return (
    <Layout
      title={`${session.title} · waymark`}
      events={paths.sessionEvents(sid)}
      version={view.version}
      crumbs={
        <>
          <a href="/">Sessions</a>
          <span>/</span>
          <span>{session.title}</span>
        </>
      }
    >
      <div class="session-grid">
        <RunsSidebar view={view} />
        <div>
          {graph
            ? (
              <section class="panel" id="run">
                <div id="run-head" data-live="1">
                  <h2>
                    {graph.run.title}
                    <span class={`badge ${graph.run.status}`}>{graph.run.status}</span>
                  </h2>
                  <div class="muted small">
                    <span class="mono">{graph.run.workflowId}</span> ·{" "}
                    <span class="mono">run_{graph.run.runId}</span>
                    {" · "}
                    {graph.run.nodeCount} nodes · {graph.run.branchCount}{" "}
                    branch{graph.run.branchCount === 1 ? "" : "es"}
                    {" · started "}
                    {fmtTime(graph.run.createdAt)}
                  </div>
                </div>
                <div class="run-body">
                  <div>
                    <Legend />
                    <div class="graph-scroll" id="graph-scroll" data-keep-scroll="1">
                      <div id="graph" data-live="1">
                        {graph.truncated
                          ? (
                            <p class="trunc">
                              Only the newest {graph.nodes.length} nodes are drawn.
                            </p>
                          )
                          : null}
                        <Graph graph={graph} sessionId={sid} selected={node?.nodeId ?? null} />
                      </div>
                    </div>
                  </div>
                  <div class="panel" id="node" data-live="1">
                    {node
                      ? <NodeDetail node={node} sessionId={sid} />
                      : <p class="muted">This run has no nodes yet.</p>}
                  </div>
                </div>
              </section>
            )
            : (
              <section class="panel">
                <p class="muted">This session has no runs yet.</p>
              </section>
            )}
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

/** A plain error page. */
export const ErrorPage: FC<{ status: number; message: string }> = (
  { status, message }: { status: number; message: string },
): Html => (
  <Layout title={`${status} · waymark`}>
    <section class="panel">
      <h1>{status === 404 ? "Not found" : "Something went wrong"}</h1>
      <p>{message}</p>
      <p>
        <a href="/">All sessions</a>
      </p>
    </section>
  </Layout>
);
