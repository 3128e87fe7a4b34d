/**
 * `waymark backup FILE` on a PostgreSQL store: a libSQL file holding the same rows, read from
 * one `REPEATABLE READ` snapshot while servers keep writing (no `pg_dump` needed on the
 * machine). The file is an ordinary waymark database: `--db file:FILE` opens it, `waymark
 * doctor FILE` checks it. Its full-text index is built there from the copied rows.
 * @module
 */
import { type Kysely, sql } from "npm:kysely@0.29.9";
import { openLibsqlStore } from "../libsql/mod.ts";
import type { FullTextSearch } from "../sql/dialect.ts";
import type { Executor } from "../sql/graph_sql.ts";
import { artifactsColumn, decodeJsonOr } from "../sql/rows.ts";
import type { Database } from "../sql/database.ts";
import { searchText } from "../sql/search.ts";
import { TABLE_ROLES } from "../sql/tables.ts";

/** Rows read per page. */
const PAGE = 500;
/** Rows written per statement (SQLite's limit on bound values stays far off). */
const CHUNK = 50;

/**
 * Copies one table a page at a time, in physical order (`ctid`, stable inside the snapshot),
 * leaving out the columns the database derives (`updated_minute`), which the copy derives too.
 */
async function copyTable(from: Executor, to: Executor, table: keyof Database): Promise<void> {
  let after = "(0,0)";
  for (;;) {
    const page = await sql<Record<string, unknown>>`
      SELECT CAST(ctid AS text) AS waymark_ctid, * FROM ${sql.table(table)}
      WHERE ctid > CAST(${after} AS tid) ORDER BY ctid LIMIT ${PAGE}`.execute(from);
    const rows = page.rows.map(({ waymark_ctid: _ctid, updated_minute: _minute, ...row }) => row);
    for (let i = 0; i < rows.length; i += CHUNK) {
      await to.insertInto(table).values(rows.slice(i, i + CHUNK) as never).execute();
    }
    if (page.rows.length < PAGE) return;
    after = String(page.rows[page.rows.length - 1]!.waymark_ctid);
  }
}

/** Indexes every run and output in `to` (outputs in log order, so each run's tip is its last). */
export async function reindex(to: Executor, search: FullTextSearch): Promise<void> {
  for (const { run_id } of await to.selectFrom("runs").select("run_id").execute()) {
    await search.indexRun(to, run_id);
  }
  let after = -1;
  for (;;) {
    const outputs = await to.selectFrom("outputs")
      .select(["run_id", "node_id", "notes_markdown", "artifacts", "created_seq"])
      .where("created_seq", ">", after).orderBy("created_seq").limit(PAGE).execute();
    for (const o of outputs) {
      const artifacts = decodeJsonOr(artifactsColumn, o.artifacts, []);
      const text = searchText(o.notes_markdown, artifacts);
      await search.indexOutput(to, { runId: o.run_id, nodeId: o.node_id, text });
    }
    if (outputs.length < PAGE) return;
    after = outputs[outputs.length - 1]!.created_seq;
  }
}

/** Writes a consistent copy of the database to `file`, a new libSQL database. */
export async function backupToLibsql(db: Kysely<Database>, file: string): Promise<void> {
  const target = await openLibsqlStore(`file:${file}`);
  try {
    await db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only")
      .execute(async (from) => {
        await target.db.transaction().execute(async (to) => {
          for (const [table, role] of Object.entries(TABLE_ROLES)) {
            if (role !== "search") await copyTable(from, to, table as keyof Database);
          }
          await reindex(to, target.dialect.search);
        });
      });
  } finally {
    await target.close();
  }
}
