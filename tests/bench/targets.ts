/**
 * The issue's targets, computed from a run's rows (medians): per-step latency in ms and as a
 * multiple of the floor's call, cold starts as a multiple of the floor's cold start, the first
 * tool call with a 100-file library, `list_workflows` with the bundled library, and resident
 * memory after many advances.
 * @module
 */
import { type Stats, stats } from "./common.ts";
import { type Floor, type Row, type Target, target } from "./report.ts";
import type { Config } from "./config.ts";
import type { SessionResult } from "./long_run.ts";

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
  if (!row) throw new Error(`no row ${operation}${prior === undefined ? "" : ` @${prior}`}`);
  return row.stats.p50;
}

/** Every target of the issue's table, in its order. */
export function benchTargets(r: {
  cfg: Config;
  floor: Floor;
  rows: readonly Row[];
  session: SessionResult;
  first: Record<string, Stats>;
}): Target[] {
  const { floor, rows, session } = r;
  const first = session.levels[0]!;
  const last = session.levels[session.levels.length - 1]!;
  const quick = last.prior < 10_000 ? `(quick: @${last.prior.toLocaleString("en-US")})` : undefined;
  const worstAdvance = Math.max(...session.levels.map((l) => stats(l.advance).p50));
  const worstOf = (op: "rehydrate" | "replay") =>
    Math.max(...session.levels.map((l) => stats(l[op]).p50));
  const rss100 = session.rss["100"];
  const rssLast = session.rss[String(last.prior)];
  const firstCall = (name: string) => r.first[name]!.p50;
  return [
    target("advance p50, worst level", worstAdvance, { unit: "ms", target: 1.0 }),
    target("advance p50, worst level, × floor call", worstAdvance / floor.call, {
      unit: "× floor",
      target: 4,
    }),
    target(
      `advance p50 @${last.prior.toLocaleString("en-US")} / @${first.prior}`,
      p50(rows, "advance", last.prior) / p50(rows, "advance", first.prior),
      { unit: "ratio", target: 1.2, note: quick },
    ),
    target("rehydrate p50, worst level", worstOf("rehydrate"), { unit: "ms", target: 1.0 }),
    target("replay p50, worst level", worstOf("replay"), { unit: "ms", target: 0.5 }),
    target("start_workflow p50", p50(rows, "start_workflow"), { unit: "ms", target: 1.5 }),
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
    target(
      "cold start to tools/list, single-file build",
      p50(rows, "cold start: bundle") / floor.cold,
      {
        unit: "× floor",
        target: 1.3,
      },
    ),
    target(
      "first call: start_workflow (bundled), 100-file library",
      firstCall("start_workflow (bundled)"),
      {
        unit: "ms",
        target: 20,
        note: `(library workflow: ${
          firstCall("start_workflow (library)").toFixed(1)
        } ms; list_workflows: ${
          firstCall("list_workflows").toFixed(1)
        } ms; right after tools/list: ${
          firstCall("start_workflow (bundled), at once").toFixed(1)
        } ms)`,
      },
    ),
    target("list_workflows p50, bundled library", p50(rows, "list_workflows (bundled library)"), {
      unit: "ms",
      target: 10,
      note: `(first call of a session: ${
        p50(rows, "first call: list_workflows (bundled library)").toFixed(1)
      } ms)`,
    }),
    target(
      `RSS after ${last.prior.toLocaleString("en-US")} advances / after 100`,
      rss100 && rssLast ? rssLast / rss100 : NaN,
      { unit: "ratio", target: 1.2, note: quick ?? (rss100 ? undefined : "(no /proc here)") },
    ),
  ];
}
