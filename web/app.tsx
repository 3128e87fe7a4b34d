/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The viewer as a Hono app: read-only pages, a JSON API under `/api/`, server-sent events for
 * live updates, and a Markdown export. Guards, in order: a `Host` allowlist and an `Origin`
 * allowlist (403; this defeats DNS rebinding and cross-site reads), then GET/HEAD only (405),
 * then a strict CSP and friends on every response. Runtime-neutral: `serve.ts` listens.
 * @module
 */
import { type Context, Hono } from "npm:hono@4.13.19";
import { secureHeaders } from "npm:hono@4.13.19/secure-headers";
import { streamSSE } from "npm:hono@4.13.19/streaming";
import css from "./assets/style.css" with { type: "text" };
import script from "./assets/app.js" with { type: "text" };
import { exportSessionMarkdown } from "./export_md.ts";
import {
  loadNode,
  loadRunGraph,
  loadSessionView,
  loadTimeline,
  parseNodeId,
  parseRunId,
  parseSessionId,
  type SessionViewMiss,
} from "./model.ts";
import {
  AGE_FILTERS,
  type AgeFilter,
  getSession,
  globalVersion,
  listSessions,
  type SessionFilters,
  SESSIONS_PAGE_SIZE,
  sessionVersion,
  STATUS_FILTERS,
  type ViewerDb,
  workflowIdsWithRuns,
  workspacesWithRuns,
} from "./queries.ts";
import { ErrorPage } from "./pages/error.tsx";
import { SessionPageView } from "./pages/session.tsx";
import { SessionsPage } from "./pages/sessions.tsx";

const ICON =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 20"><path d="M4 3v14M4 7c0 3 8 2 8 6v4" fill="none" stroke="#2458d6" stroke-width="2"/><circle cx="4" cy="4" r="2.6" fill="#2458d6"/><circle cx="4" cy="16" r="2.6" fill="#2458d6"/><circle cx="12" cy="16" r="2.6" fill="#fff" stroke="#c2410c" stroke-width="2"/></svg>`;

/** The Content-Security-Policy every response carries. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The `Host` values a viewer on `port` answers to. */
export function allowedHostsFor(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

/** Options of {@linkcode createViewerApp}. */
export interface ViewerOptions {
  /** The database, read only. */
  db: ViewerDb;
  /** The `Host` values to answer (read per request, so the port can be learnt after listening). */
  allowedHosts: () => readonly string[];
  /** How often live-update streams poll the database, in ms (default 500). */
  pollMs?: number;
  /** Where unexpected errors are logged (default: nowhere). */
  log?: (line: string) => void;
}

/** The app and a way to end its open event streams. */
export interface Viewer {
  /** The Hono app (`app.fetch` serves it; `app.request` calls it in-process). */
  app: Hono;
  /** Ends every open event stream (call before shutting the listener down). */
  close(): void;
}

function notFound(c: Context, message: string): Response | Promise<Response> {
  if (c.req.path.startsWith("/api/")) {
    return c.json({ error: { code: "NOT_FOUND", message } }, 404);
  }
  c.status(404);
  return c.html(`<!doctype html>${<ErrorPage status={404} message={message} />}`);
}

const MISSES: Record<SessionViewMiss, string> = {
  session: "There is no session with that id in this database.",
  run: "This session has no run with that id.",
  node: "This run has no node with that id.",
};

function filtersFrom(c: Context): { filters: SessionFilters; page: number } {
  const q = c.req.query("q")?.slice(0, 200).trim();
  const workflow = c.req.query("workflow")?.slice(0, 200).trim();
  const workspace = c.req.query("workspace")?.slice(0, 1000).trim();
  const status = c.req.query("status");
  const age = c.req.query("age");
  const page = Number.parseInt(c.req.query("page") ?? "1", 10);
  return {
    filters: {
      q: q || undefined,
      workflow: workflow || undefined,
      workspace: workspace || undefined,
      status: STATUS_FILTERS.find((s) => s === status),
      age: AGE_FILTERS.find((a): a is AgeFilter => a === age),
    },
    page: Number.isFinite(page) ? Math.min(Math.max(page, 1), 100_000) : 1,
  };
}

/** Builds the viewer. */
export function createViewerApp(options: ViewerOptions): Viewer {
  const { db } = options;
  const pollMs = options.pollMs ?? 500;
  let closing = false;
  const app = new Hono();

  // 1. only this machine's names: a foreign Host (DNS rebinding) or Origin gets 403
  app.use("*", async (c, next) => {
    const allowed = options.allowedHosts().map((h) => h.toLowerCase());
    const host = (c.req.header("host") ?? new URL(c.req.url).host).toLowerCase();
    if (!allowed.includes(host)) {
      return c.text(
        "403 Forbidden: this viewer answers to 127.0.0.1, localhost and [::1] only.\n",
        403,
      );
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && !allowed.some((h) => origin.toLowerCase() === `http://${h}`)) {
      return c.text("403 Forbidden: cross-origin requests are refused.\n", 403);
    }
    await next();
  });
  // 2. nothing writes: any method but GET and HEAD is refused
  app.use("*", async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      return c.text("405 Method Not Allowed: the viewer is read-only.\n", 405, {
        allow: "GET, HEAD",
      });
    }
    await next();
  });
  // 3. a strict CSP and the usual hardening headers on every response
  app.use(
    "*",
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        connectSrc: ["'self'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
      referrerPolicy: "no-referrer",
      xContentTypeOptions: "nosniff",
      xFrameOptions: "DENY",
      crossOriginResourcePolicy: "same-origin",
      crossOriginOpenerPolicy: "same-origin",
      strictTransportSecurity: false,
    }),
  );
  app.use("*", async (c, next) => {
    await next();
    if (!c.res.headers.has("cache-control")) c.res.headers.set("cache-control", "no-store");
  });

  app.onError((error, c) => {
    options.log?.(
      `viewer error on ${c.req.path}: ${error instanceof Error ? error.message : String(error)}`,
    );
    if (c.req.path.startsWith("/api/")) {
      return c.json({
        error: { code: "INTERNAL_ERROR", message: "The viewer failed to read this." },
      }, 500);
    }
    c.status(500);
    return c.html(
      `<!doctype html>${(
        <ErrorPage
          status={500}
          message="The viewer failed to read this page; see the server's log."
        />
      )}`,
    );
  });
  app.notFound((c) => notFound(c, "No such page."));

  // ---- assets (embedded at build time: nothing is read from disk) ------------------------------
  const asset = (body: string, type: string) => (c: Context) =>
    c.body(body, 200, { "content-type": type, "cache-control": "no-cache" });
  app.get("/assets/style.css", asset(css, "text/css; charset=utf-8"));
  app.get("/assets/app.js", asset(script, "text/javascript; charset=utf-8"));
  app.get("/assets/icon.svg", asset(ICON, "image/svg+xml"));
  app.get("/favicon.ico", asset(ICON, "image/svg+xml"));

  // ---- pages --------------------------------------------------------------------------------
  const listPage = async (c: Context) => {
    const { filters, page } = filtersFrom(c);
    const now = new Date();
    const [result, workflows, workspaces, version] = await Promise.all([
      listSessions(db, filters, { offset: (page - 1) * SESSIONS_PAGE_SIZE }, now),
      workflowIdsWithRuns(db),
      workspacesWithRuns(db),
      globalVersion(db),
    ]);
    return c.html(
      `<!doctype html>${(
        <SessionsPage
          page={result}
          filters={filters}
          workflows={workflows}
          workspaces={workspaces}
          now={now}
          version={version}
        />
      )}`,
    );
  };
  app.get("/", listPage);
  app.get("/sessions", listPage);

  const sessionPage = async (c: Context) => {
    const sessionId = parseSessionId(c.req.param("sid") ?? "");
    const runParam = c.req.param("rid");
    const nodeParam = c.req.param("nid");
    const runId = runParam === undefined ? null : parseRunId(runParam);
    const nodeId = nodeParam === undefined ? null : parseNodeId(nodeParam);
    if (!sessionId) return notFound(c, MISSES.session);
    if (runParam !== undefined && !runId) return notFound(c, MISSES.run);
    if (nodeParam !== undefined && !nodeId) return notFound(c, MISSES.node);
    const view = await loadSessionView(db, sessionId, runId, nodeId);
    if (typeof view === "string") return notFound(c, MISSES[view]);
    return c.html(`<!doctype html>${<SessionPageView view={view} />}`);
  };
  app.get("/sessions/:sid", sessionPage);
  app.get("/sessions/:sid/runs/:rid", sessionPage);
  app.get("/sessions/:sid/runs/:rid/nodes/:nid", sessionPage);

  app.get("/sessions/:sid/export.md", async (c) => {
    const sessionId = parseSessionId(c.req.param("sid"));
    const text = sessionId ? await exportSessionMarkdown(db, sessionId) : null;
    if (text === null) return notFound(c, MISSES.session);
    return c.body(text, 200, {
      "content-type": "text/markdown; charset=utf-8",
      "content-disposition": `attachment; filename="waymark-ses_${sessionId}.md"`,
    });
  });

  // ---- JSON API -------------------------------------------------------------------------------
  app.get("/api/sessions", async (c) => {
    const { filters, page } = filtersFrom(c);
    const result = await listSessions(db, filters, { offset: (page - 1) * SESSIONS_PAGE_SIZE });
    return c.json({ filters, page, ...result });
  });

  app.get("/api/sessions/:sid", async (c) => {
    const sessionId = parseSessionId(c.req.param("sid"));
    const detail = sessionId ? await getSession(db, sessionId) : null;
    if (!detail) return notFound(c, MISSES.session);
    return c.json(detail);
  });

  app.get("/api/sessions/:sid/timeline", async (c) => {
    const sessionId = parseSessionId(c.req.param("sid"));
    const detail = sessionId ? await getSession(db, sessionId) : null;
    if (!detail) return notFound(c, MISSES.session);
    return c.json(await loadTimeline(db, detail));
  });

  const findRun = async (c: Context) => {
    const sessionId = parseSessionId(c.req.param("sid") ?? "");
    const runId = parseRunId(c.req.param("rid") ?? "");
    const detail = sessionId ? await getSession(db, sessionId) : null;
    return detail?.runs.find((r) => r.runId === runId) ?? null;
  };

  app.get("/api/sessions/:sid/runs/:rid/graph", async (c) => {
    const run = await findRun(c);
    if (!run) return notFound(c, MISSES.run);
    return c.json(await loadRunGraph(db, run));
  });

  app.get("/api/sessions/:sid/runs/:rid/nodes/:nid", async (c) => {
    const run = await findRun(c);
    if (!run) return notFound(c, MISSES.run);
    const nodeId = parseNodeId(c.req.param("nid"));
    const node = nodeId ? await loadNode(db, run, nodeId) : null;
    if (!node) return notFound(c, MISSES.node);
    return c.json(node);
  });

  // ---- live updates: server-sent events, polling the database (writers are other processes)
  const watch = (c: Context, read: () => Promise<string | null>) => {
    if (c.req.method === "HEAD") {
      return c.body(null, 200, { "content-type": "text/event-stream" });
    }
    return streamSSE(c, async (stream) => {
      let last = await read();
      await stream.writeSSE({ event: "version", data: last ?? "gone", retry: 1000 });
      let quiet = 0;
      while (!stream.aborted && !stream.closed && !closing) {
        await stream.sleep(pollMs);
        if (stream.aborted || closing) break;
        const now = await read().catch(() => last);
        if (now !== last) {
          last = now;
          quiet = 0;
          await stream.writeSSE({ event: "changed", data: now ?? "gone" });
        } else if ((quiet += pollMs) >= 15_000) {
          quiet = 0;
          await stream.write(": keep-alive\n\n");
        }
      }
    }, async () => {});
  };
  app.get("/api/events", (c) => watch(c, () => globalVersion(db)));
  app.get("/api/sessions/:sid/events", (c) => {
    const sessionId = parseSessionId(c.req.param("sid"));
    if (!sessionId) return notFound(c, MISSES.session);
    return watch(c, () => sessionVersion(db, sessionId));
  });

  return {
    app,
    close() {
      closing = true;
    },
  };
}
