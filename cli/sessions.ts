/**
 * `waymark sessions list|show`, for people who live in a terminal: the viewer's read model (the
 * same queries the sessions page and session page run), as lines or JSON. `sessions export` is
 * with the bundles (`bundles.ts`).
 * @module
 */
import { resolve } from "node:path";
import {
  parseRunLabel,
  parseSessionLabel,
  RUN_PREFIX,
  runLabel,
  sessionLabel,
} from "../engine/model/ids.ts";
import type { Principal } from "../engine/access/principal.ts";
import { principalLabel } from "../engine/access/team_policy.ts";
import { totalTokens } from "../engine/cost/usage.ts";
import {
  getSession,
  getSessionActors,
  getSessionNotes,
  getStepFootprints,
  listSessions,
  type SessionSummary,
  sumRunTokens,
} from "../store/maintenance/mod.ts";
import { type CliHost, type CliInput, type OpenedWaymark, withWaymark, writeJson } from "./host.ts";

/** Sessions read per page while listing. */
const PAGE = 200;

/**
 * Every session `--workspace` and `--status` select, newest first, read a page at a time;
 * `onPage` sees each page as it is read.
 */
export async function selectedSessions(
  db: OpenedWaymark["store"]["db"],
  flags: CliInput["flags"],
  options: { now: Date; onPage?(sessions: SessionSummary[]): void },
): Promise<SessionSummary[]> {
  const filters = {
    workspace: flags.workspace ? resolve(flags.workspace) : undefined,
    status: flags.status,
  };
  const all: SessionSummary[] = [];
  for (let offset = 0;; offset += PAGE) {
    const page = await listSessions(db, filters, { offset, limit: PAGE }, options.now);
    options.onPage?.(page.sessions);
    all.push(...page.sessions);
    if (!page.hasMore) return all;
  }
}

function line(s: SessionSummary): string {
  const runs = `${s.runCount} run${s.runCount === 1 ? "" : "s"}`;
  return [
    sessionLabel(s.sessionId),
    s.status.padEnd(8),
    runs.padEnd(7),
    s.updatedAt.slice(0, 16).replace("T", " "),
    s.title.replace(/\s+/g, " ").slice(0, 80),
  ].join("  ");
}

/** `waymark sessions list`. */
export async function listCommand(host: CliHost, input: CliInput): Promise<number> {
  return await withWaymark(host, async ({ store }) => {
    const all = await selectedSessions(store.db, input.flags, {
      now: host.now(),
      onPage: (page) => input.flags.json || page.forEach((s) => host.stdout(`${line(s)}\n`)),
    });
    if (input.flags.json) {
      writeJson(host, {
        sessions: all.map((s) => ({ ...s, sessionId: sessionLabel(s.sessionId) })),
      });
    } else if (all.length === 0) host.stderr("no sessions\n");
    return 0;
  });
}

/**
 * The stored id of the session `id` names: a session (`ses_…`, or its hex), or a run (`run_…`,
 * the id the DeepWork profile hands agents as `session_id`), whose session it is; `null` when it
 * names neither.
 */
export async function sessionOfId(
  store: Pick<OpenedWaymark["store"], "getRun">,
  id: string,
): Promise<string | null> {
  if (!id.startsWith(RUN_PREFIX)) return parseSessionLabel(id);
  const runId = parseRunLabel(id);
  return runId ? (await store.getRun(runId))?.sessionId ?? null : null;
}

/** `waymark sessions show ID` (a session's id, or one of its runs'). */
export async function showCommand(host: CliHost, input: CliInput): Promise<number> {
  const [id] = input.args;
  if (!id) return input.usage();
  return await withWaymark(host, async ({ store }) => {
    const sessionId = await sessionOfId(store, id);
    const detail = sessionId ? await getSession(store.db, sessionId) : null;
    const port = sessionId ? await store.getSession(sessionId) : null;
    if (!detail || !port || !sessionId) {
      host.stderr(`no session ${id} here; \`waymark sessions list\` shows them\n`);
      return 1;
    }
    const actors = await getSessionActors(store.db, sessionId);
    const runs = await Promise.all(detail.runs.map(async (run) => {
      const more = port.runs.find((r) => r.runId === run.runId);
      return {
        ...run,
        runId: runLabel(run.runId),
        acknowledgedBy: actors.filter((a) => a.runId === run.runId)
          .map(({ principal, nodes }) => ({ ...principal, nodes })),
        tipPendingStepId: more?.tipPendingStepId ?? null,
        latestNotes: more?.latestNotes ?? null,
        workspace: more?.workspace ?? null,
        gitBranch: more?.gitBranch ?? null,
        ...await footprintOf(store.db, run),
      };
    }));
    const notes = await getSessionNotes(store.db, sessionId);
    const shown = {
      session: { ...detail.session, sessionId: sessionLabel(sessionId), kind: port.sessionKind },
      runs,
      runsTruncated: detail.runsTruncated,
      checkpointNotes: notes.map((n) => ({ ...n, runId: runLabel(n.runId) })),
    };
    if (input.flags.json) writeJson(host, shown);
    else host.stdout(showText(shown));
    return 0;
  });
}

/**
 * A run's tokens over every branch, and each step's footprint along its preferred branch (time,
 * changed files with their diff, evidence, tokens).
 */
async function footprintOf(
  db: OpenedWaymark["store"]["db"],
  run: { runId: string; lastNodeId: string | null },
) {
  const [tokens, steps] = await Promise.all([
    sumRunTokens(db, run.runId),
    run.lastNodeId ? getStepFootprints(db, { runId: run.runId, nodeId: run.lastNodeId }) : [],
  ]);
  return { tokens, steps: steps.filter((s) => s.durationMs !== null) };
}

/** One step's footprint as a line of `sessions show`. */
function stepLine(s: Shown["runs"][number]["steps"][number]): string {
  const parts = [`${(s.durationMs! / 1000).toFixed(1)} s`];
  if (s.changes) {
    parts.push(
      `${s.changes.files.length} file(s) +${s.changes.linesAdded} -${s.changes.linesRemoved}`,
    );
  }
  if (s.tokens) parts.push(`${totalTokens(s.tokens)} tokens`);
  if (s.evidence) parts.push(`verification ${s.evidence.verdict}`);
  return `    ${s.completedStepId ?? s.kind}: ${parts.join(", ")}`;
}

type Shown = {
  session: SessionSummary & { kind: string };
  runs: ({
    runId: string;
    workflowId: string;
    title: string;
    status: string;
    nodeCount: number;
    branchCount: number;
    tipPendingStepId: string | null;
    latestNotes: string | null;
    workspace: string | null;
    gitBranch: string | null;
    startedBy: Principal | null;
    access: string | null;
    acknowledgedBy: (Principal & { nodes: number })[];
  } & Awaited<ReturnType<typeof footprintOf>>)[];
  checkpointNotes: { notesMarkdown: string }[];
};

function showText({ session: s, runs, checkpointNotes }: Shown): string {
  const out = [
    `${s.sessionId}  ${s.title}`,
    `  ${s.status} · ${s.kind} session · ${s.eventCount} events · created ${s.createdAt} · updated ${s.updatedAt}`,
  ];
  for (const r of runs) {
    out.push(
      `${r.runId}  ${r.workflowId}  ${r.status}  ${r.nodeCount} nodes, ${r.branchCount} branch tip(s)`,
      `  ${r.title}`,
    );
    if (r.startedBy) {
      out.push(`  started by: ${principalLabel(r.startedBy)} (${r.access} may continue)`);
    }
    if (r.acknowledgedBy.length > 0) {
      const who = r.acknowledgedBy.map((a) => `${principalLabel(a)} (${a.nodes})`);
      out.push(`  acknowledged by: ${who.join(", ")}`);
    }
    if (r.tipPendingStepId) out.push(`  pending step: ${r.tipPendingStepId}`);
    if (r.workspace) {
      out.push(`  workspace: ${r.workspace}${r.gitBranch ? ` (${r.gitBranch})` : ""}`);
    }
    if (r.latestNotes) out.push(`  latest notes: ${r.latestNotes}`);
    if (r.tokens) {
      out.push(`  tokens: ${totalTokens(r.tokens.total)} over ${r.tokens.steps} step(s)`);
    }
    if (r.steps.length > 0) out.push("  steps:", ...r.steps.map(stepLine));
  }
  for (const n of checkpointNotes.slice(0, 3)) {
    out.push(`note: ${n.notesMarkdown.replace(/\s+/g, " ").slice(0, 160)}`);
  }
  out.push(`Resume it in a chat: resume_session {query: "${s.sessionId}"}`);
  return `${out.join("\n")}\n`;
}
