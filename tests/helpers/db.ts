/**
 * A test's own connection to the database a server under test writes, whichever dialect it is
 * (a libSQL file, or a PostgreSQL database): SQL with `?` placeholders, rows as plain objects
 * with integers as numbers, and a dump of every table to prove a call wrote nothing.
 * @module
 */
import { createClient } from "@libsql/client";
import pg from "pg";

// deno-lint-ignore no-explicit-any
type Row = Record<string, any>;

/** A connection to a test's database. */
export interface TestDb {
  /** The rows a query returns. */
  rows(sql: string, args?: unknown[]): Promise<Row[]>;
  /** The first column of the first row, as a number (a count). */
  number(sql: string, args?: unknown[]): Promise<number>;
  /** Runs a statement; how many rows it changed. */
  run(sql: string, args?: unknown[]): Promise<number>;
  /** The column that gives a row's place in storage (`rowid`, `ctid`). */
  readonly rowKey: string;
  /** The database engine's own consistency check: problems, none when sound. */
  integrity(): Promise<string[]>;
  /** The names of waymark's tables (the dialect's internal ones left out), sorted. */
  tables(): Promise<string[]>;
  /** Every table's row count and its rows in storage order, to prove a call wrote nothing. */
  snapshot(): Promise<{ counts: Record<string, number>; dump: string }>;
  /** Closes the connection. */
  close(): Promise<void>;
}

/** `?` placeholders (outside quotes) as PostgreSQL's `$1, $2, …`. */
function numbered(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = "";
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    out += ch === "?" && !quoted ? `$${++n}` : ch;
  }
  return out;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function snapshotOf(
  db: Pick<TestDb, "rows" | "number" | "tables">,
  orderBy: (table: string) => string,
): Promise<{ counts: Record<string, number>; dump: string }> {
  const tables = await db.tables();
  if (!tables.includes("events") || !tables.includes("nodes")) {
    throw new Error(`unexpected tables: ${tables}`);
  }
  const counts: Record<string, number> = {};
  const dump: Record<string, unknown[]> = {};
  for (const table of tables) {
    counts[table] = await db.number(`SELECT count(*) AS n FROM ${quote(table)}`);
    dump[table] = await db.rows(`SELECT * FROM ${quote(table)} ORDER BY ${orderBy(table)}`);
  }
  return { counts, dump: JSON.stringify(dump) };
}

function libsqlDb(url: string): TestDb {
  const client = createClient({ url });
  const db: TestDb = {
    rowKey: "rowid",
    rows: async (sql, args = []) =>
      (await client.execute({ sql, args: args as never })).rows.map((r) => ({ ...r })),
    number: async (sql, args = []) =>
      Number((await client.execute({ sql, args: args as never })).rows[0]?.[0]),
    run: async (sql, args = []) =>
      (await client.execute({ sql, args: args as never })).rowsAffected,
    integrity: async () =>
      (await client.execute("PRAGMA integrity_check")).rows.map((r) => String(r[0]))
        .filter((line) => line !== "ok"),
    tables: async () =>
      (await client.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"))
        .rows.map((r) => String(r.name)),
    // FTS5 keeps some shadow tables WITHOUT ROWID; order those by their key
    snapshot: () => snapshotOf(db, (t) => /^search_\w+_(idx|config)$/.test(t) ? "1" : "rowid"),
    close: () => Promise.resolve(client.close()),
  };
  return db;
}

const INT8 = 20;
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    return oid === INT8 ? Number : pg.types.getTypeParser(oid, format as "text");
  },
};

async function postgresDb(url: string): Promise<TestDb> {
  const client = new pg.Client({ connectionString: url, types });
  await client.connect();
  const query = (sql: string, args: unknown[] = []) => client.query(numbered(sql), args);
  const db: TestDb = {
    rowKey: "ctid",
    rows: async (sql, args) => (await query(sql, args)).rows,
    number: async (sql, args) => {
      const result = await query(sql, args);
      return Number(Object.values(result.rows[0] ?? {})[0]);
    },
    run: async (sql, args) => (await query(sql, args)).rowCount ?? 0,
    // the server keeps its own pages consistent; an index left invalid is what it can report
    integrity: async () =>
      (await query(
        "SELECT CAST(indexrelid AS regclass)::text AS name FROM pg_index WHERE NOT indisvalid",
      ))
        .rows.map((r: Row) => `invalid index ${r.name}`),
    tables: async () =>
      (await query(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
      )).rows.map((r: Row) => String(r.name)),
    // storage order: a row rewritten by an UPDATE (even to the same values) moves
    snapshot: () => snapshotOf(db, () => "ctid"),
    close: () => client.end(),
  };
  return db;
}

/** Opens a connection to the database at `url` (`file:…` or `postgres://…`). */
export function openTestDb(url: string): Promise<TestDb> {
  return /^postgres(ql)?:/.test(url) ? postgresDb(url) : Promise.resolve(libsqlDb(url));
}

/** Runs `fn` on a short-lived connection to the database at `url`. */
export async function withTestDb<T>(url: string, fn: (db: TestDb) => Promise<T>): Promise<T> {
  const db = await openTestDb(url);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}
