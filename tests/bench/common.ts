/**
 * Shared by the benchmark scripts: the generated long workflow and latency statistics.
 * @module
 */

import { plainWorkflow } from "../helpers/workflows.ts";
/** The id of the generated long workflow. */
export const LONG_ID = "project.bench_long";

/** The generated long workflow's text. */
export function longWorkflow(steps: number): string {
  return plainWorkflow(LONG_ID, steps);
}

/** Summary statistics of a latency sample, in ms. */
export interface Stats {
  /** Sample size. */
  n: number;
  /** Median. */
  p50: number;
  /** 99th percentile. */
  p99: number;
  /** Mean. */
  mean: number;
  /** Minimum. */
  min: number;
  /** Maximum. */
  max: number;
}

/** Percentile by linear interpolation between closest ranks (numpy's default). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = (sorted.length - 1) * p;
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/** Statistics of a sample. */
export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
  };
}

/** Rounds to microseconds (3 decimals of ms). */
export function r3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
