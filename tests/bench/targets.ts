/**
 * The bench's targets (the table in docs/performance.md), computed from a run's rows
 * (medians): per-step latency in ms and as a multiple of the floor's call, cold starts as a
 * multiple of the floor's cold start, the first tool call with a 100-file library,
 * `list_workflows` with the bundled library, resident memory after many advances, and what a
 * client pays: the v1 SDK client's cold start and advance over its own floor, and the bytes of
 * `tools/list` and of an advance's answer. A target whose scenario did not run is left out.
 * @module
 */
import { type Stats, stats } from "./common.ts";
import { type Floor, type Row, type Target, target } from "./report.ts";
import { DEPTH } from "./client_bench.ts";
import type { SessionResult } from "./long_run.ts";
import type { ModelBytes } from "./model_bench.ts";
import type { HttpResult } from "./http_bench.ts";

/** The machine a run measured. */
export function machine(): {
  deno: typeof Deno.version;
  os: string;
  arch: string;
  cpus: number;
  osRelease: string;
} {
  return {
    deno: Deno.version,
    os: Deno.build.os,
    arch: Deno.build.arch,
    cpus: navigator.hardwareConcurrency,
    osRelease: Deno.osRelease(),
  };
}

function p50(rows: readonly Row[], operation: string, prior?: number): number {
  const row = rows.find((r) =>
    r.operation === operation && (prior === undefined || r.prior === prior)
  );
  if (!row) throw new Missing(`no row ${operation}${prior === undefined ? "" : ` @${prior}`}`);
  return row.stats.p50;
}

/** A target whose scenario did not run (`--only`). */
class Missing extends Error {}

/** What a run measured, each part absent when its scenario did not run. */
export interface Measured {
  /** The floor (NaN parts where not measured). */
  floor: Floor;
  /** Every row. */
  rows: readonly Row[];
  /** The long session. */
  session?: SessionResult;
  /** The first calls. */
  first?: Record<string, Stats>;
  /** The client scenario: bytes a client reads. */
  bytes?: Readonly<Record<string, number>>;
  /** The model scenario: what a host's model reads. */
  model?: ModelBytes;
  /** The http scenario: the team service beside stdio. */
  http?: HttpResult;
}

function longTargets(r: Measured): (() => Target)[] {
  const { floor, rows } = r;
  const session = () => {
    if (!r.session) throw new Missing("no long session");
    return r.session;
  };
  const last = () => session().levels[session().levels.length - 1]!;
  const quick = () =>
    last().prior < 10_000 ? `(quick: @${last().prior.toLocaleString("en-US")})` : undefined;
  const worst = (op: "advance" | "rehydrate" | "replay") =>
    Math.max(...session().levels.map((l) => stats(l[op]).p50));
  return [
    () => target("advance p50, worst level", worst("advance"), { unit: "ms", target: 1.0 }),
    () =>
      target("advance p50, worst level, × floor call", worst("advance") / floor.call, {
        unit: "× floor",
        target: 2.5,
      }),
    () =>
      target(
        `advance p50 @${last().prior.toLocaleString("en-US")} / @${session().levels[0]!.prior}`,
        p50(rows, "advance", last().prior) / p50(rows, "advance", session().levels[0]!.prior),
        { unit: "ratio", target: 1.2, note: quick() },
      ),
    () => target("rehydrate p50, worst level", worst("rehydrate"), { unit: "ms", target: 1.0 }),
    () => target("replay p50, worst level", worst("replay"), { unit: "ms", target: 0.5 }),
    () =>
      target("replay p50, worst level, × floor call", worst("replay") / floor.call, {
        unit: "× floor",
        target: 1.3,
      }),
    () => target("start_workflow p50", p50(rows, "start_workflow"), { unit: "ms", target: 1.5 }),
    () => {
      const rss100 = session().rss["100"];
      const rssLast = session().rss[String(last().prior)];
      return target(
        `RSS after ${last().prior.toLocaleString("en-US")} advances / after 100`,
        rss100 && rssLast ? rssLast / rss100 : NaN,
        { unit: "ratio", target: 1.2, note: quick() ?? (rss100 ? undefined : "(no /proc here)") },
      );
    },
  ];
}

function startTargets(r: Measured): (() => Target)[] {
  const { floor, rows } = r;
  const firstCall = (name: string) => {
    if (!r.first?.[name]) throw new Missing("no first calls");
    return r.first[name]!.p50;
  };
  return [
    () =>
      target(
        "cold start to tools/list, deno task start",
        p50(rows, "cold start: deno task start") / floor.cold,
        {
          unit: "× floor",
          target: 1.5,
          note: `(main.ts serve: ${
            (p50(rows, "cold start: main.ts serve") / floor.cold).toFixed(2)
          }×)`,
        },
      ),
    () =>
      target(
        "cold start to tools/list, single-file build",
        p50(rows, "cold start: bundle") / floor.cold,
        { unit: "× floor", target: 1.3 },
      ),
    () =>
      target(
        "first call: start_workflow (bundled), 100-file library",
        firstCall("start_workflow (bundled)"),
        {
          unit: "ms",
          target: 15,
          note: `(library workflow: ${
            firstCall("start_workflow (library)").toFixed(1)
          } ms; list_workflows: ${
            firstCall("list_workflows").toFixed(1)
          } ms; right after tools/list: ${
            firstCall("start_workflow (bundled), at once").toFixed(1)
          } ms)`,
        },
      ),
  ];
}

function listTargets(rows: readonly Row[]): (() => Target)[] {
  return [
    () =>
      target("list_workflows p50, bundled library", p50(rows, "list_workflows (bundled library)"), {
        unit: "ms",
        target: 10,
        note: `(first call of a session: ${
          p50(rows, "first call: list_workflows (bundled library)").toFixed(1)
        } ms)`,
      }),
  ];
}

function clientTargets(r: Measured): (() => Target)[] {
  const { floor, rows } = r;
  const bytes = (what: string) => {
    const n = r.bytes?.[what];
    if (n === undefined) throw new Missing("no client scenario");
    return n;
  };
  const v1Advance = () => {
    const advances = rows.filter((row) => row.operation.startsWith("v1: advance @"));
    if (advances.length === 0) throw new Missing("no v1 advances");
    return Math.max(...advances.map((row) => row.stats.p50));
  };
  return [
    () =>
      target("tools/list bytes, default profile", bytes("tools/list"), {
        unit: "bytes",
        target: 15_000,
      }),
    () =>
      target(`bytes of one advance answer @${DEPTH}`, bytes("advance"), {
        unit: "bytes",
        target: 3_000,
      }),
    () =>
      target(
        "cold start to tools/list, v1 client, × its floor",
        p50(rows, "v1: cold start: main.ts serve") / floor.v1Cold,
        { unit: "× floor", target: 1.3 },
      ),
    () =>
      target("advance, v1 client, worst depth, × its floor call", v1Advance() / floor.v1Call, {
        unit: "× floor",
        target: 4,
      }),
  ];
}

/** What a host's model reads: tool definitions and an answer beyond its prompt, per host. */
function modelTargets(r: Measured): (() => Target)[] {
  const model = () => {
    if (!r.model) throw new Missing("no model scenario");
    return r.model;
  };
  const bytes = (measure: string, value: () => number, bound: number) => () =>
    target(measure, value(), { unit: "bytes", target: bound });
  return [
    bytes("tool definitions, Claude Code", () => model().claudeTools, 5_000),
    bytes("tool definitions, Gemini CLI", () => model().geminiTools, 5_000),
    bytes("answer beyond its prompt, JSON (Claude Code)", () => model().jsonOverhead, 400),
    bytes("answer beyond its prompt, text (Gemini CLI)", () => model().textOverhead, 400),
  ];
}

/**
 * The team service: HTTP at most 2× stdio; 600 advances/s of eight agents on one replica, and
 * the CPU an advance may cost for that on two cores.
 */
function httpTargets(r: Measured): (() => Target)[] {
  const http = () => {
    if (!r.http) throw new Missing("no http scenario");
    return r.http;
  };
  return [
    () =>
      target(
        "advance over HTTP (auth, --stateless) / over stdio, p50",
        http().http.p50 / http().stdio.p50,
        {
          unit: "ratio",
          target: 2,
        },
      ),
    () =>
      target(
        "8 agents on one replica: ms per advance (1000 / advances per s)",
        1000 / http().load.perSecond,
        {
          unit: "ms",
          target: 1000 / 600,
        },
      ),
    // the same target as CPU, which a shared machine's other jobs do not move as much: 600/s on
    // two cores of its own leaves 2000 / 600 ms for everything an advance runs
    () =>
      target(
        "8 agents: CPU ms per advance, replica + PostgreSQL + the agents",
        http().load.replicaCpuMs + (http().load.postgresCpuMs ?? 0) + http().load.clientCpuMs,
        {
          unit: "ms",
          target: 2000 / 600,
        },
      ),
  ];
}

/** Every target whose scenario ran, in the table's order. */
export function benchTargets(r: Measured): Target[] {
  const out: Target[] = [];
  const all = [
    ...longTargets(r),
    ...startTargets(r),
    ...listTargets(r.rows),
    ...clientTargets(r),
    ...modelTargets(r),
    ...httpTargets(r),
  ];
  for (const make of all) {
    try {
      out.push(make());
    } catch (error) {
      if (!(error instanceof Missing)) throw error;
    }
  }
  return out;
}
