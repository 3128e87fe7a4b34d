/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The sessions list (`/`): a filter form, one card per session, newest activity first, and a
 * pager. Updates live from `/api/events`.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { SESSION_PREFIX, sessionLabel } from "../../engine/model/ids.ts";
import { paths } from "../model.ts";
import {
  AGE_FILTERS,
  type SessionFilters,
  type SessionPage,
  type SessionSummary,
  STATUS_FILTERS,
} from "../queries.ts";
import { fmtAge, fmtTime, plural } from "../parts/display_text.ts";
import { type Html, Layout } from "../parts/shell.tsx";

const AGE_LABELS: Record<string, string> = {
  "1d": "last 24 hours",
  "7d": "last 7 days",
  "30d": "last 30 days",
  "older30d": "older than 30 days",
};

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

const WorkspaceSelect: FC<{ filters: SessionFilters; workspaces: string[] }> = (
  { filters, workspaces },
) =>
  workspaces.length > 0 || filters.workspace
    ? (
      <label>
        Workspace
        <select name="workspace">
          <option value="">any</option>
          {[...new Set([...(filters.workspace ? [filters.workspace] : []), ...workspaces])]
            .map((w) => <option key={w} value={w} selected={filters.workspace === w}>{w}</option>)}
        </select>
      </label>
    )
    : null;

type FilterFormProps = {
  filters: SessionFilters;
  filtered: boolean;
  workflows: string[];
  workspaces: string[];
};

const FilterForm: FC<FilterFormProps> = ({ filters, filtered, workflows, workspaces }) => (
  <form class="filters" method="get" action="/" role="search">
    <label class="grow">
      Search
      <input
        type="search"
        name="q"
        value={filters.q ?? ""}
        placeholder={`title, workflow id, goal or ${SESSION_PREFIX}…`}
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
    <WorkspaceSelect filters={filters} workspaces={workspaces} />
    <label>
      Status
      <select name="status">
        <option value="">any</option>
        {STATUS_FILTERS.map((s) => (
          <option key={s} value={s} selected={filters.status === s}>{s}</option>
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
);

const SessionCard: FC<{ s: SessionSummary; now: Date }> = ({ s, now }) => (
  <li>
    <a class="card" href={paths.session(s.sessionId)}>
      <span class="title">{s.title}</span>
      <span class="right nowrap">
        <span class={`badge ${s.status}`}>{s.status}</span>
      </span>
      <span class="meta">
        <span class="mono">{sessionLabel(s.sessionId)}</span>
        <span>{s.workflows.join(", ") || "no runs"}</span>
        <span>
          {s.runCount} run{plural(s.runCount)} · {s.eventCount} events
        </span>
      </span>
      <span class="right">
        <time datetime={s.updatedAt} title={fmtTime(s.updatedAt)}>
          {fmtAge(s.updatedAt, now)}
        </time>
      </span>
    </a>
  </li>
);

const Pager: FC<{ filters: SessionFilters; pageNo: number; hasMore: boolean }> = (
  { filters, pageNo, hasMore },
) => (
  <nav class="pager" aria-label="Pages">
    <span>
      {pageNo > 1 ? <a href={listHref(filters, pageNo - 1)}>← Newer</a> : null}
    </span>
    <span class="muted small">page {pageNo}</span>
    <span>{hasMore ? <a href={listHref(filters, pageNo + 1)}>Older →</a> : null}</span>
  </nav>
);

/** Props of {@linkcode SessionsPage}. */
export type SessionsPageProps = {
  page: SessionPage;
  filters: SessionFilters;
  /** Workflow ids to offer in the filter. */
  workflows: string[];
  /** Workspaces to offer in the filter (the filter is hidden when there are none). */
  workspaces: string[];
  /** The time ages are counted from. */
  now: Date;
  /** The data version the page was rendered at. */
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
        <FilterForm
          filters={filters}
          filtered={filtered}
          workflows={workflows}
          workspaces={workspaces}
        />
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
                {page.sessions.map((s) => <SessionCard key={s.sessionId} s={s} now={now} />)}
              </ul>
            )}
          <Pager filters={filters} pageNo={pageNo} hasMore={page.hasMore} />
        </div>
      </section>
    </Layout>
  );
};
