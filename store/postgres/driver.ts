/**
 * The connection to a PostgreSQL server: a small `pg` pool whose integers come back as
 * numbers, behind Kysely's Postgres dialect with every transaction `SERIALIZABLE` unless it
 * asks for another level (so concurrent writers behave as SQLite's single writer does: one of
 * two conflicting transactions is refused and tried again).
 * @module
 */
// @ts-types="npm:@types/pg@8.23.1"
import pg from "npm:pg@8.23.1";
import {
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type PostgresDialectConfig,
  PostgresDriver,
  type TransactionSettings,
} from "npm:kysely@0.29.9";

/** Connections per process: a server answers one call at a time per chat, plus the viewer. */
export const POOL_SIZE = 4;

/** OIDs of `int8` and `numeric`, which `pg` returns as strings to keep precision. */
const INT8 = 20;
const NUMERIC = 1700;

/** `pg`'s type parsers, with `count(*)`, `sum()` and `bigint` columns read as numbers. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8 || oid === NUMERIC) return (text: string) => Number(text);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/** Most distinct statements prepared by name (beyond it, statements are parsed each time). */
const MAX_PREPARED = 400;
const prepared = new Map<string, string>();

/**
 * The name a statement is prepared under on every connection: a call's statements repeat, so
 * the server parses and plans each once per connection instead of once per call. Statements
 * that select `*` stay unnamed (their result type would change with the schema).
 */
function preparedName(text: string): string | undefined {
  let name = prepared.get(text);
  if (name === undefined && prepared.size < MAX_PREPARED && !/select \*|\.\*/i.test(text)) {
    name = `waymark_${prepared.size}`;
    prepared.set(text, name);
  }
  return name;
}

/** `client.query(text, values)` as Kysely calls it, with the statement prepared by name. */
function prepareStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client);
  client.query =
    ((text: unknown, values?: unknown) =>
      typeof text === "string" && Array.isArray(values)
        ? query({ name: preparedName(text), text, values })
        : query(text as never, values as never)) as typeof client.query;
}

/** A `pg` pool for `url` (any `postgres://` URL `pg` reads, e.g. `?host=/socket/dir`). */
export function createPool(
  url: string,
  options: { connectTimeoutMs: number; durability?: "normal" | "full" },
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    // `full` asks for synchronous commits whatever the server's default; otherwise its own
    ...(options.durability === "full" ? { options: "-c synchronous_commit=on" } : {}),
    max: POOL_SIZE,
    types,
    application_name: "waymark",
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
  });
  // A connection the server dropped reports it twice: as the failure of the query in flight
  // (handled where it was made) and as an `error` event, which would end the process if no one
  // listened. The pool removes an idle one; one in use is dropped when it is given back.
  pool.on("error", () => {});
  pool.on("connect", (client: pg.PoolClient) => {
    client.on("error", () => {});
    prepareStatements(client);
  });
  return pool;
}

class SerializableDriver extends PostgresDriver {
  override beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    return super.beginTransaction(connection, {
      ...settings,
      isolationLevel: settings.isolationLevel ?? "serializable",
    });
  }
}

/** Kysely's Postgres dialect whose transactions default to `SERIALIZABLE`. */
export class SerializablePostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig;

  /** The dialect over `config.pool`. */
  constructor(config: PostgresDialectConfig) {
    super(config);
    this.#config = config;
  }

  /** The driver, `SERIALIZABLE` by default. */
  override createDriver(): Driver {
    return new SerializableDriver(this.#config);
  }
}
