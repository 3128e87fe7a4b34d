/**
 * What an operator's tooling reads from `serve --http`: `GET /healthz` (the process answers),
 * `GET /readyz` (it can reach its database: 200, else 503 with `Retry-After`), both without
 * authentication and saying nothing but `ok` / `ready` / `not ready`; and `GET /metrics` in the
 * Prometheus text format (prom-client), behind the same authentication as everything else:
 * requests by route and status and their latency, tool calls by tool and error code and their
 * latency, requests in flight, the database pool's connections, and the open runs.
 * @module
 */
import type { Context, MiddlewareHandler } from "npm:hono@4.13.19";
import { Counter, Gauge, Histogram, Registry } from "npm:prom-client@15.1.3";
import { sql } from "npm:kysely@0.29.9";
import type { ViewerDb } from "./queries.ts";

/** What the probes and the gauges read from the service. */
export interface OpsProbe {
  /** Whether the database answers now (bounded in time by the caller of `ready`). */
  ready(): Promise<boolean>;
  /** Runs not yet complete. */
  openRuns(): Promise<number>;
  /** The connection pool's state, where the store has one (PostgreSQL). */
  pool?(): { total: number; idle: number; waiting: number; max: number };
}

/** The probes, the metrics and the hooks that feed them. */
export interface Ops {
  /** Answers `/healthz` and `/readyz` (place it before the Host check and authentication). */
  probes: MiddlewareHandler;
  /** Counts and times every request (place it first). */
  count: MiddlewareHandler;
  /** Answers `GET /metrics` (place it behind authentication). */
  metrics(c: Context): Promise<Response>;
  /** Tells the metrics one tool call: its tool, its error code (`null`: answered), its time. */
  toolCall(tool: string, code: string | null, ms: number): void;
}

/** How long a probe waits for the database. */
const PROBE_TIMEOUT_MS = 2_000;
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The routes requests are counted by (anything else is `other`: bounded label values). */
const ROUTES = new Set(["/mcp", "/healthz", "/readyz", "/metrics"]);

function within<T>(work: Promise<T>, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((resolve) =>
    timer = setTimeout(() => resolve(fallback), PROBE_TIMEOUT_MS)
  );
  return Promise.race([work.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}

/** The registry's metrics: the ones fed per request and call, and the gauges read per scrape. */
function metricsOf(registry: Registry, probe: OpsProbe) {
  const registers = [registry];
  const requests = new Counter({
    name: "waymark_http_requests_total",
    help: "HTTP requests answered, by route and status.",
    labelNames: ["route", "status"],
    registers,
  });
  const latency = new Histogram({
    name: "waymark_http_request_duration_seconds",
    help: "Time to answer an HTTP request (to its headers), by route.",
    labelNames: ["route"],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const inFlight = new Gauge({
    name: "waymark_http_requests_in_flight",
    help: "HTTP requests being answered.",
    registers,
  });
  const calls = new Counter({
    name: "waymark_tool_calls_total",
    help: "MCP tool calls, by tool and error code (`ok` when answered).",
    labelNames: ["tool", "code"],
    registers,
  });
  const callLatency = new Histogram({
    name: "waymark_tool_call_duration_seconds",
    help: "Time a tool call took, by tool.",
    labelNames: ["tool"],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  new Gauge({
    name: "waymark_db_pool_connections",
    help: "The database pool's connections, by state (total, idle, waiting requests, max).",
    labelNames: ["state"],
    registers,
    collect() {
      const pool = probe.pool?.();
      if (!pool) return;
      for (const [state, n] of Object.entries(pool)) this.set({ state }, n);
    },
  });
  new Gauge({
    name: "waymark_open_runs",
    help: "Runs not yet complete, in the database (-1 when it could not be read).",
    registers,
    async collect() {
      this.set(await within(probe.openRuns(), -1));
    },
  });
  return { requests, latency, inFlight, calls, callLatency };
}

/** The probes and metrics of one service. */
export function createOps(probe: OpsProbe): Ops {
  const registry = new Registry();
  const { requests, latency, inFlight, calls, callLatency } = metricsOf(registry, probe);
  const count: MiddlewareHandler = async (c, next) => {
    const route = ROUTES.has(c.req.path) ? c.req.path : "other";
    const t0 = performance.now();
    inFlight.inc();
    try {
      await next();
    } finally {
      inFlight.dec();
      requests.inc({ route, status: String(c.res.status) });
      latency.observe({ route }, (performance.now() - t0) / 1000);
    }
  };
  const probes: MiddlewareHandler = async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") return await next();
    if (c.req.path === "/healthz") return c.text("ok\n");
    if (c.req.path !== "/readyz") return await next();
    if (await within(probe.ready(), false)) return c.text("ready\n");
    return c.text("not ready\n", 503, { "retry-after": "1" });
  };
  return {
    probes,
    count,
    metrics: async (c) =>
      c.body(await registry.metrics(), 200, { "content-type": registry.contentType }),
    toolCall(tool, code, ms) {
      calls.inc({ tool, code: code ?? "ok" });
      callLatency.observe({ tool }, ms / 1000);
    },
  };
}

/** A `pg` pool's counters, as far as the probe reads them. */
interface PoolCounters {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max?: number };
}

/** The probe of a store: its database answers `SELECT 1`; its pool, when it has one. */
export function storeProbe(store: { db: ViewerDb; pool?: unknown }): OpsProbe {
  const pool = store.pool as PoolCounters | undefined;
  return {
    ready: async () => {
      await sql`SELECT 1`.execute(store.db);
      return true;
    },
    openRuns: async () => {
      const row = await store.db.selectFrom("runs").select((e) => e.fn.countAll<number>().as("n"))
        .where("status", "=", "running").executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    ...(pool
      ? {
        pool: () => ({
          total: pool.totalCount,
          idle: pool.idleCount,
          waiting: pool.waitingCount,
          max: pool.options.max ?? 0,
        }),
      }
      : {}),
  };
}
