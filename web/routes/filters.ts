/**
 * The sessions list's query string (`q`, `workflow`, `workspace`, `status`, `age`, `page`),
 * read leniently: unknown values are dropped, lengths and the page number are bounded.
 * @module
 */
import type { Context } from "npm:hono@4.13.19";
import { AGE_FILTERS, type AgeFilter, type SessionFilters, STATUS_FILTERS } from "../queries.ts";

/** The filters and the 1-based page a list request asks for. */
export function filtersFrom(c: Context): { filters: SessionFilters; page: number } {
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
