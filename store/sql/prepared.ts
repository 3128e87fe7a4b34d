/**
 * Queries built and compiled once, run many times with new parameters. Kysely builds and
 * compiles a query on every call (as much CPU as a hot statement takes to run); a hot query
 * here is built once per dialect with named slots for its parameters, compiled, and run as the
 * compiled SQL with each slot's value put in at its position (`?` or `$n`, whichever the
 * dialect numbers). The query is still written with the typed builder, so a wrong column or
 * type fails to compile as before.
 *
 * The builder must treat its parameters as opaque values: bind them (`where`, `values`, `set`,
 * `${…}` in `sql`), never branch on them, format them into text or pass lists; a slot used any
 * other way is refused when the query is first compiled (or throws when read as a primitive).
 *
 * Queries are made at module scope, once each: every one made is kept, so that
 * {@linkcode compileEvery} can compile them all ahead of their first run (the start-up
 * rehearsal, `tools/server/rehearsal.ts`).
 * @module
 */
import type { CompiledQuery, DialectAdapter, Kysely, QueryResult } from "npm:kysely@0.29.9";
import type { Database } from "./database.ts";

/** A connection or a transaction (as `graph_sql.ts` names it; not imported, which would cycle). */
type Executor = Kysely<Database>;

/** A builder's result: a query builder, or `sql` text (which compiles against an executor). */
type Buildable<R> = { compile(): CompiledQuery<R> } | {
  compile(executor: Executor): CompiledQuery<R>;
};

/** Where a parameter comes from: a named field of the values (of row `row`, for row batches). */
class Slot {
  constructor(readonly name: string, readonly row: number | null = null) {}
  [Symbol.toPrimitive](): never {
    throw new Error(`a precompiled query read its parameter ${this.name} while being built`);
  }
}

/** A compiled query whose parameters at `slots` (where not `null`) are filled in per run. */
interface Template<R> {
  query: CompiledQuery<R>;
  slots: (Slot | null)[];
}

/** Values by slot name; a missing (`undefined`) value binds as `NULL`. */
type Values = Record<string, unknown>;

function compileTemplate<R>(
  ex: Executor,
  built: Buildable<R>,
  named: readonly Slot[],
): Template<R> {
  const query = (built as { compile(executor: Executor): CompiledQuery<R> }).compile(ex);
  const slots = query.parameters.map((p) => (p instanceof Slot ? p : null));
  for (const slot of named) {
    if (!slots.includes(slot)) {
      throw new Error(
        `precompiled parameter ${slot.name} is not bound as a value in: ${query.sql}`,
      );
    }
  }
  return { query, slots };
}

function bind<R>(template: Template<R>, values: Values | readonly Values[]): CompiledQuery<R> {
  const { query, slots } = template;
  const parameters = slots.map((slot, i) => {
    if (slot === null) return query.parameters[i];
    const source = slot.row === null ? values as Values : (values as readonly Values[])[slot.row]!;
    return source[slot.name] ?? null;
  });
  return { query: query.query, queryId: query.queryId, sql: query.sql, parameters };
}

/** The adapter a connection or transaction compiles for (transactions share their database's). */
function adapterOf(ex: Executor): DialectAdapter {
  return ex.getExecutor().adapter;
}

/** A precompiled query with named parameters `P`. */
export interface Prepared<P, R> {
  /** Runs the query with `params` on `ex` (a connection or a transaction). */
  execute(ex: Executor, params: P): Promise<QueryResult<R>>;
  /** Its rows. */
  all(ex: Executor, params: P): Promise<R[]>;
  /** Its first row, or `undefined`. */
  first(ex: Executor, params: P): Promise<R | undefined>;
  /** The query compiled for `ex` with `params`, to run elsewhere (as a query of its own). */
  compile(ex: Executor, params: P): CompiledQuery<R>;
}

/** Compiles a query made here for an executor's dialect (if not yet), answering its SQL texts. */
type Compile = (ex: Executor) => string[];

/** Every query made in this process, as what compiles it. */
const MADE: Compile[] = [];

/**
 * Row counts a batch query is compiled for ahead of its first run, one to this: a start and an
 * advance append four events, other calls fewer.
 */
const AHEAD_ROW_COUNTS = 4;

/**
 * Compiles every query made so far for `ex`'s dialect, as their first runs would, and runs
 * none: their SQL texts, and the first failure when some did not compile (the others still
 * did).
 */
export function compileEvery(ex: Executor): { sqls: string[]; failure?: Error } {
  const sqls: string[] = [];
  const failures: unknown[] = [];
  for (const compile of MADE) {
    try {
      sqls.push(...compile(ex));
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length === 0) return { sqls };
  const first = failures[0] instanceof Error ? failures[0].message : String(failures[0]);
  return {
    sqls,
    failure: new Error(`${failures.length} prepared queries did not compile; the first: ${first}`),
  };
}

/**
 * Runs a compiled query as its own execution: with a query id of its own, which the plugins of
 * `ex` see as they would a query built there. A template is compiled once, on whichever
 * executor ran it first (the start-up rehearsal's plain connection, say), so a plugin that marks
 * queries by id at compile time (the PostgreSQL driver's `sendAhead`) would otherwise see each
 * template once, on the wrong executor, and its writes waited for their answers one by one.
 */
function executeOn<R>(ex: Executor, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  const queryId = { queryId: query.queryId.queryId };
  ex.getExecutor().transformQuery(query.query, queryId);
  return ex.executeQuery({ ...query, queryId });
}

function runner<P, R>(compiled: (ex: Executor, params: P) => CompiledQuery<R>): Prepared<P, R> {
  const execute = (ex: Executor, params: P) => executeOn(ex, compiled(ex, params));
  return {
    execute,
    all: async (ex, params) => (await execute(ex, params)).rows,
    first: async (ex, params) => (await execute(ex, params)).rows[0],
    compile: (ex, params) => {
      const query = compiled(ex, params);
      return { ...query, queryId: { queryId: query.queryId.queryId } };
    },
  };
}

/** How a query is prepared. */
export interface PrepareOptions {
  /**
   * Only one dialect runs it (its text is that dialect's SQL): compiled at its first run, never
   * by {@linkcode compileEvery}, whose texts every dialect prepares.
   */
  oneDialect?: boolean;
}

/**
 * A query built by `build` once per dialect, its parameters named by the fields of `P` read
 * off `params` (declare `P` on the `params` argument: `(db, p: { runId: string }) => …`).
 * `params` is a stand-in whose fields are slots: read them one by one (`values(params)` would
 * find no fields).
 */
export function prepare<P extends object, R>(
  build: (db: Executor, params: P) => Buildable<R>,
  options: PrepareOptions = {},
): Prepared<P, R> {
  const templates = new WeakMap<DialectAdapter, Template<R>>();
  const templateFor = (ex: Executor): Template<R> => {
    const adapter = adapterOf(ex);
    let template = templates.get(adapter);
    if (!template) {
      const named = new Map<string, Slot>();
      const slots = new Proxy({}, {
        get: (_, key) => {
          const name = String(key);
          if (!named.has(name)) named.set(name, new Slot(name));
          return named.get(name);
        },
      }) as P;
      template = compileTemplate(ex, build(ex, slots), [...named.values()]);
      templates.set(adapter, template);
    }
    return template;
  };
  if (!options.oneDialect) MADE.push((ex) => [templateFor(ex).query.sql]);
  return runner((ex, params) => bind(templateFor(ex), params as Values));
}

/** Row counts compiled at most, per dialect; larger batches are built afresh each time. */
const MAX_ROW_VARIANTS = 16;

/**
 * A query over a batch of rows (a multi-row insert), compiled once per dialect and row count:
 * `build` gets one row object per row, each with a slot for every name in `columns`.
 */
export function prepareRows<Row extends object, R>(
  columns: readonly (keyof Row & string)[],
  build: (db: Executor, rows: Row[]) => Buildable<R>,
): Prepared<readonly Row[], R> {
  const templates = new WeakMap<DialectAdapter, Map<number, Template<R>>>();
  const templateFor = (ex: Executor, count: number): Template<R> => {
    const adapter = adapterOf(ex);
    let byCount = templates.get(adapter);
    if (!byCount) templates.set(adapter, byCount = new Map());
    let template = byCount.get(count);
    if (!template) {
      const named: Slot[] = [];
      const slotted = Array.from(
        { length: count },
        (_, i) =>
          Object.fromEntries(columns.map((c) => {
            const slot = new Slot(c, i);
            named.push(slot);
            return [c, slot];
          })) as Row,
      );
      template = compileTemplate(ex, build(ex, slotted), named);
      byCount.set(count, template);
    }
    return template;
  };
  MADE.push((ex) =>
    Array.from({ length: AHEAD_ROW_COUNTS }, (_, i) => templateFor(ex, i + 1).query.sql)
  );
  return runner((ex, rows) => {
    if (rows.length > MAX_ROW_VARIANTS) {
      return (build(ex, [...rows]) as { compile(executor: Executor): CompiledQuery<R> }).compile(
        ex,
      );
    }
    return bind(templateFor(ex, rows.length), rows as readonly Values[]);
  });
}
