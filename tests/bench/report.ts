/**
 * The bench's report: every row in milliseconds and as a multiple of the floor measured in the
 * same run (cold starts against the SDK echo server's cold start, calls against its call), and
 * the targets (docs/performance.md), each with its value and whether it is met. Medians throughout.
 * @module
 */
import { r3, type Stats } from "./common.ts";

/**
 * What a row is compared with: the floor's cold start or its call, as the raw client measures
 * them, or as the v1 SDK client does (`v1Cold`, `v1Call`).
 */
export type FloorKind = "cold" | "call" | "v1Cold" | "v1Call";

/** One row of the table. */
export interface Row {
  /** What was measured. */
  operation: string;
  /** Prior advances on the measured run, where that matters. */
  prior: number | null;
  /** Latency statistics (ms). */
  stats: Stats;
  /** Which floor the row is divided by (none for in-process rows). */
  floor: FloorKind | null;
}

/** The floor: the SDK echo server's median cold start and call (NaN where not measured). */
export interface Floor {
  /** Cold start to `tools/list` (ms, median). */
  cold: number;
  /** `echo` call (ms, median). */
  call: number;
  /** Cold start to `tools/list` through the v1 SDK client. */
  v1Cold: number;
  /** `echo` call through the v1 SDK client. */
  v1Call: number;
}

/** A target and how the run did against it. */
export interface Target {
  /** The measure, as docs/performance.md names it. */
  measure: string;
  /** The measured value. */
  value: number;
  /** Its unit. */
  unit: "ms" | "× floor" | "ratio" | "bytes";
  /** The bound (value ≤ target meets it). */
  target: number;
  /** Whether it is met. */
  met: boolean;
  /** A remark (quick mode, other scenarios). */
  note?: string;
}

/** A target check. */
export function target(
  measure: string,
  value: number,
  bound: { unit: Target["unit"]; target: number; note?: string },
): Target {
  return { measure, value, ...bound, met: value <= bound.target };
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** The ratio of a row's median to its floor, or null. */
export function ratio(row: Row, floor: Floor): number | null {
  const x = row.floor ? row.stats.p50 / floor[row.floor] : NaN;
  return Number.isFinite(x) ? x : null;
}

/** The rows as a table. */
export function table(rows: readonly Row[], floor: Floor): string {
  const widths = [38, 10, 5, 9, 9, 9, 9, 8];
  const header = [
    "operation",
    "prior adv.",
    "n",
    "p50 ms",
    "p99 ms",
    "mean ms",
    "max ms",
    "× floor",
  ]
    .map((h, i) => pad(h, widths[i]!, i > 0));
  const lines = [header.join("  "), "-".repeat(header.join("  ").length)];
  for (const row of rows) {
    const x = ratio(row, floor);
    lines.push([
      pad(row.operation, widths[0]!),
      pad(row.prior === null ? "-" : row.prior.toLocaleString("en-US"), widths[1]!, true),
      pad(String(row.stats.n), widths[2]!, true),
      ...[row.stats.p50, row.stats.p99, row.stats.mean, row.stats.max].map((v, i) =>
        pad(v.toFixed(3), widths[3 + i]!, true)
      ),
      pad(x === null ? "-" : x.toFixed(2), widths[7]!, true),
    ].join("  "));
  }
  return lines.join("\n");
}

/** The targets as lines. */
export function targetLines(targets: readonly Target[]): string {
  return targets.map((t) => {
    const value = t.unit === "ms"
      ? `${t.value.toFixed(3)} ms`
      : t.unit === "bytes"
      ? `${t.value.toLocaleString("en-US")} B`
      : `${t.value.toFixed(2)}${t.unit === "× floor" ? "× floor" : ""}`;
    const bound = t.unit === "ms"
      ? `${t.target} ms`
      : t.unit === "bytes"
      ? `${t.target.toLocaleString("en-US")} B`
      : `${t.target}${t.unit === "× floor" ? "×" : ""}`;
    return `  ${pad(t.measure, 56)} ${pad(value, 14, true)}  (≤ ${bound})  ${
      t.met ? "MET" : "NOT MET"
    }${t.note ? `  ${t.note}` : ""}`;
  }).join("\n");
}

/** Statistics as JSON (µs precision). */
export function statsJson(s: Stats): Record<string, number> {
  return {
    n: s.n,
    p50: r3(s.p50),
    p99: r3(s.p99),
    mean: r3(s.mean),
    min: r3(s.min),
    max: r3(s.max),
  };
}

/** A row as JSON, with its ratio to the floor. */
export function rowJson(row: Row, floor: Floor): Record<string, unknown> {
  const x = ratio(row, floor);
  return {
    operation: row.operation,
    prior: row.prior,
    ...statsJson(row.stats),
    floor: row.floor,
    ratioToFloor: x === null ? null : r3(x),
  };
}

/** The bytes a client reads, one line per answer. */
export function bytesTable(bytes: Readonly<Record<string, number>>): string {
  return Object.entries(bytes).map(([what, n]) =>
    `  ${pad(what, 40)} ${pad(n.toLocaleString("en-US"), 10, true)} B`
  ).join("\n");
}
