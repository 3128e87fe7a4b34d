/**
 * Helpers for the bundle, gc, doctor and backup tests: the `waymark` command as a process,
 * waymark opened in-process at a chosen clock (so sessions can really be old), and raw reads
 * of a database file.
 * @module
 */
import type { EngineDeps } from "../../engine/model/ports.ts";
import { applyPreferences, DEFAULT_PREFERENCES } from "../../engine/model/preferences.ts";
import { tokenPattern } from "../../engine/access/tokens.ts";
import {
  createWorkflowSource,
  cryptoRandom,
  loadOrCreateKeyring,
  type OpenedSqlStore,
  openStore,
} from "../../store/mod.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { withTestDb } from "./db.ts";
import { dbArgs, dbUrlOf, MAIN, ROOT } from "./server.ts";

/** What a `waymark` process printed, and its exit code. */
export interface Ran {
  code: number;
  out: string;
  err: string;
}

/** Runs `waymark ARGS` (with `--home` when given) to completion. */
export async function runCli(
  args: string[],
  options: { home?: string; stdin?: string; cwd?: string } = {},
): Promise<Ran> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      MAIN,
      ...args,
      ...(options.home ? ["--home", options.home, ...dbArgs(options.home)] : []),
    ],
    cwd: options.cwd ?? ROOT,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", WAYMARK_HOME: "", WAYMARK_DB_URL: "" },
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const done = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: done.code, out: text(done.stdout), err: text(done.stderr) };
}

/** An in-process waymark whose clock the test sets. */
export interface ClockedWaymark {
  store: OpenedSqlStore;
  deps: EngineDeps;
  /** Sets the time later appends are stamped with. */
  setNow(iso: string): void;
  close(): Promise<void>;
}

/** Opens waymark on `home` with a settable clock (the engine's and the store's). */
export async function openAt(home: string, nowIso: string): Promise<ClockedWaymark> {
  let now = nowIso;
  const clock = { now: () => now };
  const store = await openStore(dbUrlOf(home), { now: clock.now });
  const deps: EngineDeps = {
    store,
    workflows: createWorkflowSource(BUNDLED_WORKFLOWS, [
      { source: "user", dir: `${home}/workflows` },
    ]),
    keyring: await loadOrCreateKeyring(`${home}/keys.json`),
    clock,
    random: cryptoRandom,
    defaultPreferences: applyPreferences(DEFAULT_PREFERENCES, {}),
  };
  return {
    store,
    deps,
    setNow: (iso) => void (now = iso),
    close: () => store.close(),
  };
}

/** An ISO time `days` days before now. */
export function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString();
}

/** A database URL from a URL, or from the path of a libSQL file. */
const urlOf = (db: string) => /^(file:|postgres(ql)?:)/.test(db) ? db : `file:${db}`;

/**
 * Runs statements (`?` placeholders) on a database (a URL, or a libSQL file's path) with a
 * fresh connection; returns the last one's rows.
 */
export function sqlOn(
  db: string,
  ...statements: (string | { sql: string; args: (string | number)[] })[]
): Promise<Record<string, unknown>[]> {
  return withTestDb(urlOf(db), async (conn) => {
    let rows: Record<string, unknown>[] = [];
    for (const statement of statements) {
      const { sql, args } = typeof statement === "string"
        ? { sql: statement, args: [] }
        : statement;
      rows = await conn.rows(sql, args);
    }
    return rows;
  });
}

/** Every row of every table (full-text tables included), sorted: equal dumps mean nothing was written. */
export function dumpAll(db: string): Promise<Record<string, string[]>> {
  return withTestDb(urlOf(db), async (conn) => {
    const out: Record<string, string[]> = {};
    for (const name of (await conn.tables()).filter((t) => !t.startsWith("sqlite_"))) {
      // the row's place in storage too, where the table has one: a rewritten row moves
      const rows = await conn.rows(`SELECT ${conn.rowKey} AS _rowid, * FROM "${name}"`)
        .catch(() => conn.rows(`SELECT * FROM "${name}"`));
      out[name] = rows.map((r) => JSON.stringify(r)).sort();
    }
    return out;
  });
}

/** Rows of `table` that belong to a session (hex id), through its runs where needed. */
export async function sessionRows(db: string, sessionId: string): Promise<number> {
  const runs = `(SELECT run_id FROM runs WHERE session_id = '${sessionId}')`;
  const rows = await sqlOn(
    db,
    `SELECT
      (SELECT count(*) FROM events WHERE session_id = '${sessionId}')
      + (SELECT count(*) FROM sessions WHERE session_id = '${sessionId}')
      + (SELECT count(*) FROM runs WHERE session_id = '${sessionId}')
      + (SELECT count(*) FROM nodes WHERE session_id = '${sessionId}')
      + (SELECT count(*) FROM observations WHERE session_id = '${sessionId}')
      + (SELECT count(*) FROM edges WHERE run_id IN ${runs})
      + (SELECT count(*) FROM attempts WHERE run_id IN ${runs})
      + (SELECT count(*) FROM outputs WHERE run_id IN ${runs})
      + (SELECT count(*) FROM bundle_imports WHERE session_id = '${sessionId}') AS n`,
  );
  return Number(rows[0]?.n ?? 0);
}

/** Whether a text holds a waymark token. */
export function holdsToken(text: string): boolean {
  return tokenPattern().test(text);
}

/** A value with every `…Token` field removed (fresh tokens differ on every call). */
export function withoutTokens(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v) => (/Token$/.test(key) ? undefined : v)),
  );
}

/** A one-step workflow (so a run completes after one acknowledgement), written to `dir`. */
export async function writeTinyWorkflow(dir: string, id = "user.tiny"): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/${id}.json`,
    JSON.stringify({
      id,
      name: "Tiny",
      description: "One step.",
      version: "1.0.0",
      steps: [{ id: "only", title: "Only", prompt: "Do the one thing." }],
    }),
  );
}
