/**
 * The viewer's sessions list: filters, one page of sessions, and the values the filter form
 * offers. Every list is bounded.
 * @module
 */
import {
  type Expression,
  type ExpressionBuilder,
  expressionBuilder,
  type Kysely,
  sql,
  type SqlBool,
} from "npm:kysely@0.29.9";
import { SESSION_PREFIX, stripLabel } from "../../../engine/model/ids.ts";
import { SESSION_STATUS_FILTERS } from "../../../engine/model/vocabulary.ts";
import type { Database, SessionsTable } from "../database.ts";
import { minuteOf } from "../activity_minutes.ts";

/** The typed database the viewer reads. */
export type ViewerDb = Kysely<Database>;

/** Sessions per page in the list. */
export const SESSIONS_PAGE_SIZE = 50;

/** Every status filter value: a run status, or a corrupt session whatever its runs. */
export const STATUS_FILTERS = SESSION_STATUS_FILTERS;
/** Session status as the list shows it: a status filter value, or `empty` (no runs yet). */
export type SessionStatus = typeof STATUS_FILTERS[number] | "empty";

/** Filters of the sessions list. Every field is optional; each adds one `WHERE` clause. */
export interface SessionFilters {
  /** Free text over the title, the session id, workflow ids and goals. */
  q?: string;
  /** Only sessions with a run of this workflow. */
  workflow?: string;
  /** Only sessions with a run in this workspace (the folder recorded from MCP roots). */
  workspace?: string;
  /** Only sessions in this status. */
  status?: Exclude<SessionStatus, "empty">;
  /** Last activity: within a day, a week, a month, or older than a month. */
  age?: AgeFilter;
}

/** Every age filter value, in the order the form offers them. */
export const AGE_FILTERS = ["1d", "7d", "30d", "older30d"] as const;
/** The age filter's values. */
export type AgeFilter = typeof AGE_FILTERS[number];

/** One row of the sessions list. */
export interface SessionSummary {
  /** Session id (hex). */
  sessionId: string;
  /** Title (the goal of its first run, or the workflow's name). */
  title: string;
  /** ISO time. */
  createdAt: string;
  /** ISO time of the last event. */
  updatedAt: string;
  /** `healthy` or `corrupt`. */
  health: string;
  /** Events in the log. */
  eventCount: number;
  /** Derived status. */
  status: SessionStatus;
  /** Runs in the session. */
  runCount: number;
  /** Distinct workflow ids of its runs. */
  workflows: string[];
}

/** A page of sessions. */
export interface SessionPage {
  /** The rows. */
  sessions: SessionSummary[];
  /** Offset of the first row. */
  offset: number;
  /** Page size. */
  limit: number;
  /** Whether another page follows. */
  hasMore: boolean;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function ageCutoff(age: AgeFilter, now: Date): string {
  const days = age === "1d" ? 1 : age === "7d" ? 7 : 30;
  return new Date(now.getTime() - days * 86_400_000).toISOString();
}

/** A session's status from its health and its runs' statuses. */
export function deriveStatus(health: string, statuses: string[]): SessionStatus {
  if (health === "corrupt") return "corrupt";
  if (statuses.length === 0) return "empty";
  if (statuses.includes("running")) return "running";
  return statuses.every((s) => s === "aborted") ? "aborted" : "complete";
}

type SessionsEb = ExpressionBuilder<Database & { s: SessionsTable }, "s">;

/** `EXISTS` a run of the session, narrowed by `where`. */
function hasRun(
  eb: SessionsEb,
  where: (run: ReturnType<typeof runsOf>) => ReturnType<typeof runsOf> = (run) => run,
): Expression<SqlBool> {
  return eb.exists(where(runsOf(eb)));
}

function runsOf(eb: SessionsEb) {
  return eb.selectFrom("runs as r").select(sql`1`.as("one"))
    .whereRef("r.session_id", "=", "s.session_id");
}

function textMatch(eb: SessionsEb, q: string): Expression<SqlBool> {
  // lower() on both sides: SQLite's LIKE folds ASCII case, PostgreSQL's folds none
  const like = `%${escapeLike(q.toLowerCase())}%`;
  const idPrefix = `${escapeLike(stripLabel(q, SESSION_PREFIX).toLowerCase())}%`;
  return eb.or([
    sql<boolean>`lower(s.title) LIKE ${like} ESCAPE '\\'`,
    sql<boolean>`s.session_id LIKE ${idPrefix} ESCAPE '\\'`,
    hasRun(eb, (run) =>
      run.where((rb) =>
        rb.or([
          sql<boolean>`lower(r.workflow_id) LIKE ${like} ESCAPE '\\'`,
          sql<boolean>`lower(r.goal) LIKE ${like} ESCAPE '\\'`,
        ])
      )),
  ]);
}

/** One condition per filter given. */
function filterConditions(
  eb: SessionsEb,
  filters: SessionFilters,
  now: Date,
): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  const q = filters.q?.trim();
  if (q) out.push(textMatch(eb, q));
  const { workflow, workspace, status, age } = filters;
  if (workflow) out.push(hasRun(eb, (run) => run.where("r.workflow_id", "=", workflow)));
  if (workspace) out.push(hasRun(eb, (run) => run.where("r.workspace", "=", workspace)));
  if (status === "corrupt") out.push(eb("s.health", "=", "corrupt"));
  if (status === "running" || status === "complete") {
    const running = hasRun(eb, (run) => run.where("r.status", "=", "running"));
    out.push(eb("s.health", "!=", "corrupt"));
    out.push(status === "running" ? running : eb.and([eb.not(running), hasRun(eb)]));
  }
  if (status === "aborted") {
    out.push(eb("s.health", "!=", "corrupt"));
    out.push(eb.not(hasRun(eb, (run) => run.where("r.status", "!=", "aborted"))));
    out.push(hasRun(eb));
  }
  if (age) {
    const cutoff = ageCutoff(age, now);
    const older = age === "older30d";
    out.push(eb("s.updated_at", older ? "<" : ">=", cutoff));
    // implied by the line above; lets the minute's index bound the scan
    out.push(eb("s.updated_minute", older ? "<=" : ">=", minuteOf(cutoff)));
  }
  return out;
}

/** Each session's runs' workflow ids and statuses, oldest run first. */
async function runsBySession(
  db: ViewerDb,
  ids: string[],
): Promise<Map<string, { workflow_id: string; status: string }[]>> {
  const runs = ids.length === 0 ? [] : await db.selectFrom("runs")
    .select(["session_id", "workflow_id", "status"])
    .where("session_id", "in", ids).orderBy("created_at").execute();
  const bySession = new Map<string, { workflow_id: string; status: string }[]>();
  for (const run of runs) {
    const list = bySession.get(run.session_id) ?? [];
    list.push(run);
    bySession.set(run.session_id, list);
  }
  return bySession;
}

/** A page of sessions, most recently active first. */
export async function listSessions(
  db: ViewerDb,
  filters: SessionFilters,
  page: { offset: number; limit?: number },
  now: Date = new Date(),
): Promise<SessionPage> {
  const limit = Math.min(Math.max(page.limit ?? SESSIONS_PAGE_SIZE, 1), 200);
  const offset = Math.max(0, Math.floor(page.offset));
  let query = db.selectFrom("sessions as s").select([
    "s.session_id",
    "s.title",
    "s.created_at",
    "s.updated_at",
    "s.health",
    "s.event_count",
  ]);
  for (
    const condition of filterConditions(
      expressionBuilder<Database & { s: SessionsTable }, "s">(),
      filters,
      now,
    )
  ) {
    query = query.where(condition);
  }
  // the minute first, for its index (`activity_minutes.ts`); the same order as `updated_at`'s
  const rows = await query.orderBy("s.updated_minute", "desc").orderBy("s.updated_at", "desc")
    .orderBy("s.session_id")
    .limit(limit + 1).offset(offset).execute();
  const pageRows = rows.slice(0, limit);
  const bySession = await runsBySession(db, pageRows.map((r) => r.session_id));
  return {
    sessions: pageRows.map((r) => {
      const own = bySession.get(r.session_id) ?? [];
      return {
        sessionId: r.session_id,
        title: r.title,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        health: r.health,
        eventCount: Number(r.event_count),
        status: deriveStatus(r.health, own.map((x) => x.status)),
        runCount: own.length,
        workflows: [...new Set(own.map((x) => x.workflow_id))],
      };
    }),
    offset,
    limit,
    hasMore: rows.length > limit,
  };
}

/** Workflow ids that have runs, for the list's filter (at most 200). */
export async function workflowIdsWithRuns(db: ViewerDb): Promise<string[]> {
  const rows = await db.selectFrom("runs").select("workflow_id").distinct()
    .orderBy("workflow_id").limit(200).execute();
  return rows.map((r) => r.workflow_id);
}

/** Workspaces that have runs, for the list's filter (at most 200). */
export async function workspacesWithRuns(db: ViewerDb): Promise<string[]> {
  const rows = await db.selectFrom("runs").select("workspace").distinct()
    .where("workspace", "is not", null).orderBy("workspace").limit(200).execute();
  return rows.map((r) => r.workspace as string);
}
