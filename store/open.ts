/**
 * Opening a store by its URL: the one place that picks the dialect. `postgres://` and
 * `postgresql://` open the PostgreSQL store (loaded on demand, so the embedded default starts
 * without the `pg` driver); anything else (`file:`, `:memory:`, `libsql://`, `http(s)://`)
 * opens the libSQL store.
 * @module
 */
import { openLibsqlStore } from "./libsql/mod.ts";
import { load } from "../lazy.ts";
import type { OpenedSqlStore, OpenStoreOptions } from "./sql/store.ts";

/** A dialect's opener. */
type Opener = (url: string, options: OpenStoreOptions) => Promise<OpenedSqlStore>;

const OPENERS: { scheme: RegExp; open: Opener }[] = [
  {
    scheme: /^postgres(ql)?:\/\//i,
    open: async (url, options) =>
      (await load<typeof import("./postgres/mod.ts")>("postgres")).openPostgresStore(url, options),
  },
  { scheme: /^/, open: openLibsqlStore },
];

/** Opens (creating and migrating if needed) the database at `url` as a waymark store. */
export function openStore(url: string, options: OpenStoreOptions = {}): Promise<OpenedSqlStore> {
  return OPENERS.find((o) => o.scheme.test(url))!.open(url, options);
}
