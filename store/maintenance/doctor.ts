/**
 * `waymark doctor`: checks and reports, each problem with its fix, and exits 0 when healthy (or
 * the home is not used yet), 1 when it found problems, 2 when it could not run (a database it
 * cannot open, or one from a newer waymark).
 * With `repair` it first fixes what the log can fix (migrations, snapshots, projections and
 * full-text rows, the WAL), then checks again and reports what is left. The database is opened
 * without migrating, so a check never changes the schema.
 * @module
 */
import { existsSync } from "node:fs";
import type { WorkflowSource } from "../../engine/model/ports.ts";
import { DOCTOR_CHECKS } from "../../engine/model/vocabulary.ts";
import { formatLoadError } from "../../engine/workflow/parse.ts";
import { inspectKeyring, type KeyringProblem } from "../keyring.ts";
import { looseModes } from "../private_files.ts";
import { damagedFileRemedy, storageError } from "../storage_errors.ts";
import { databaseFile } from "../libsql/maintenance.ts";
import { StorageCorruptionError } from "../../engine/model/result.ts";
import {
  type DoctorFinding,
  eventLog,
  finding,
  integrity,
  type MaintainedStore,
  projections,
  searchTables,
  sessionIds,
  snapshots,
  type StoreCheckOptions,
  textEncoding,
  wal,
} from "./doctor_checks.ts";
import { sessionRules } from "./session_rules.ts";
import { systemClock } from "../system.ts";

export type { DoctorFinding, MaintainedStore } from "./doctor_checks.ts";

/** What doctor looks at. */
export interface DoctorTarget {
  /** waymark's version, reported first. */
  version: string;
  /** How this waymark was built (`source`, ...). */
  buildKind: string;
  /** The database, for messages. */
  dbUrl: string;
  /**
   * Opens the database without migrating it (throws when it cannot be opened); `null` when the
   * home's database is not created yet, a new home's normal state.
   */
  open(): Promise<(MaintainedStore & { close(): Promise<void> }) | null>;
  /** The keyring file. */
  keysFile: string;
  /** waymark's home, whose mode and files' modes are checked (none: not checked). */
  home?: string;
  /** waymark's files whose modes are checked (the database file and those beside it). */
  privateFiles?: string[];
  /** The workflow sources, whose load errors are reported. */
  workflows: WorkflowSource;
}

/** Doctor's options. */
export interface DoctorOptions {
  /** Fix what can be fixed, then check again. */
  repair?: boolean;
  /** A WAL larger than this is a finding (default 256 MiB). */
  walLimitBytes?: number;
}

/** Doctor's report. */
export interface DoctorReport {
  /** `healthy`, `unused` (a new home: nothing stored yet), `problems`, or `failed` (it could not run). */
  status: "healthy" | "unused" | "problems" | "failed";
  /** The exit code: 0 healthy or unused, 1 problems, 2 failed. */
  exitCode: 0 | 1 | 2;
  /** waymark's version and build kind. */
  version: string;
  /** How this waymark was built. */
  buildKind: string;
  /** The database checked. */
  database: string;
  /** Every finding, in check order. */
  findings: DoctorFinding[];
  /** What `--repair` did, in words. */
  repaired: string[];
}

const DEFAULT_WAL_LIMIT = 256 * 1_048_576;

const KEYRING_FIXES: Record<KeyringProblem["kind"], string> = {
  missing:
    "waymark creates a new keyring the next time it opens this home; tokens the lost one signed stop working (`resume_session` mints new ones). To keep them, restore the file from a backup first.",
  unreadable:
    "Restore the file from a backup, or move it aside so that waymark creates a new one (tokens it signed stop working; `resume_session` mints new ones).",
  mode: "Make it private to its owner: `chmod 600` on the file.",
};

async function keyring(keysFile: string, unused: boolean): Promise<DoctorFinding> {
  const problems = await inspectKeyring(keysFile);
  if (unused && problems.length === 1 && problems[0]!.kind === "missing") {
    return {
      check: "keyring",
      ok: true,
      message: `${keysFile} not created yet (waymark creates it, mode 0600, on first use)`,
    };
  }
  const kinds = [...new Set(problems.map((p) => p.kind))];
  return finding(
    "keyring",
    problems.length === 0 ? null : {
      message: problems.map((p) => p.message).join("; "),
      fix: kinds.map((kind) => KEYRING_FIXES[kind]).join(" "),
    },
    `${keysFile} holds a current key, mode 0600`,
  );
}

async function permissions(
  target: DoctorTarget,
  options: StoreCheckOptions,
): Promise<DoctorFinding> {
  if (!target.home) return { check: "permissions", ok: true, message: "no home to check" };
  if (!existsSync(target.home)) {
    return { check: "permissions", ok: true, message: `${target.home} not created yet` };
  }
  const loose = await looseModes(target.home, {
    files: target.privateFiles ?? [],
    repair: options.repair,
  });
  if (options.repair && loose.length > 0) {
    options.repaired(
      `made ${loose.length} file(s) private (${loose.map((l) => l.path).join(", ")})`,
    );
  }
  return finding(
    "permissions",
    loose.length === 0 ? null : {
      message: `${loose.length} path(s) can be read by other users: ${
        loose.slice(0, 5).map((l) => `${l.path} (mode ${l.mode}, should be ${l.expected})`)
          .join(", ")
      }`,
      fix:
        "Notes and context can hold secrets: run `waymark doctor --repair` to set the home to 0700 and its files to 0600 (or chmod them yourself).",
      details: { paths: loose },
    },
    `${target.home} and its files are private to their owner`,
  );
}

async function workflows(source: WorkflowSource): Promise<DoctorFinding> {
  const loaded = await source.load();
  return finding(
    "workflows",
    loaded.errors.length === 0 ? null : {
      message: `${loaded.errors.length} workflow file(s) fail to load: ${
        loaded.errors.slice(0, 3).map(formatLoadError).join("; ")
      }`,
      fix: "Check each with `waymark workflows validate FILE` and fix or remove it.",
      details: { files: loaded.errors.map((e) => e.file) },
    },
    `${loaded.workflows.length} workflows load`,
  );
}

/** The checks of files in waymark's home rather than of the database. */
const HOME_CHECKS: readonly DoctorFinding["check"][] = ["keyring", "permissions", "workflows"];

/** Runs a check; one that throws becomes a problem finding instead of stopping the others. */
async function attempt(
  check: DoctorFinding["check"],
  run: () => Promise<DoctorFinding | DoctorFinding[]>,
): Promise<DoctorFinding[]> {
  try {
    return [await run()].flat();
  } catch (error) {
    return [{
      check,
      ok: false,
      message: `could not check: ${error instanceof Error ? error.message : String(error)}`,
      fix: HOME_CHECKS.includes(check)
        ? "Check that this user can read waymark's home and the file the message names."
        : "See the integrity finding; restore from a backup if the file is damaged.",
    }];
  }
}

const notChecked: DoctorFinding = {
  check: "projections",
  ok: false,
  message: "not checked: the search index's tables must be rebuilt first",
  fix: "Run `waymark doctor --repair`: it rebuilds the index, then checks and repairs the rows.",
};

/** The checks of an open database whose schema is current. */
async function storeChecks(
  store: MaintainedStore,
  options: StoreCheckOptions,
): Promise<DoctorFinding[]> {
  const out = await attempt("integrity", () => integrity(store));
  out.push(...await attempt("text_encoding", () => textEncoding(store, options)));
  let corrupt: string[] = [];
  out.push(
    ...await attempt("event_log", async () => {
      const [found, bad] = await eventLog(store, await sessionIds(store));
      corrupt = bad;
      return found;
    }),
  );
  out.push(...await attempt("snapshots", () => snapshots(store, options)));
  const index = await attempt("search_index", () => searchTables(store, options));
  out.push(...index);
  out.push(
    ...await attempt("projections", async () => {
      // rows are compared with index rows too: not before the index's tables are sound
      if (index.length > 0) return notChecked;
      const sessions = (await sessionIds(store)).filter((id) => !corrupt.includes(id));
      return await projections(store, { ...options, sessions });
    }),
  );
  out.push(...await attempt("wal", () => wal(store, options)));
  out.push(
    ...await attempt("session_rules", async () => {
      const sessions = (await sessionIds(store)).filter((id) => !corrupt.includes(id));
      return await sessionRules(store.db, { sessions, now: systemClock.now() });
    }),
  );
  return out;
}

/** What one pass of checks found; `failed`: it could not run, `unused`: no database yet. */
interface Checked {
  findings: DoctorFinding[];
  failed: boolean;
  unused: boolean;
}

/** Opens the database, checks its schema, then runs the store checks. */
async function databaseChecks(
  target: DoctorTarget,
  options: StoreCheckOptions,
): Promise<Checked> {
  let store;
  try {
    store = await target.open();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const file = databaseFile(target.dbUrl) ?? target.dbUrl;
    const damaged = storageError(error, { location: file }) instanceof StorageCorruptionError;
    return {
      failed: true,
      unused: false,
      findings: [{
        check: "database",
        ok: false,
        message: `cannot open ${target.dbUrl}: ${message}`,
        fix: /newer waymark/.test(message)
          ? "Use the waymark that wrote it, or a newer one."
          : damaged
          ? `The file is damaged: ${damagedFileRemedy(file)}.`
          : "Check the path (--db, --home); restore the latest backup if the file is damaged.",
      }],
    };
  }
  if (!store) {
    return {
      failed: false,
      unused: true,
      findings: [{
        check: "database",
        ok: true,
        message:
          `${target.dbUrl} not created yet: this home is not used yet (the first command that opens it creates the database)`,
      }],
    };
  }
  try {
    // a server says what it is, how far away, and how its connections stand
    const server = await store.maintenance.serverInfo(store.db);
    const findings: DoctorFinding[] = [{
      check: "database",
      ok: true,
      message: `opened ${target.dbUrl}${server ? `: ${server.message}` : ""}`,
      ...(server ? { details: server.details } : {}),
    }];
    const schema = await store.maintenance.schemaStatus();
    if (schema.pending.length > 0 && options.repair) {
      await store.maintenance.migrate();
      options.repaired(`migrated the schema (${schema.pending.join(", ")})`);
    } else if (schema.pending.length > 0) {
      findings.push({
        check: "schema",
        ok: false,
        message: `the schema is older than this waymark: ${schema.pending.join(", ")} pending`,
        fix:
          "Run `waymark doctor --repair` (or any waymark command that opens it) to migrate it forward in one transaction; the other checks need the current schema.",
      });
      return { findings, failed: false, unused: false };
    }
    findings.push({
      check: "schema",
      ok: true,
      message: `schema current (${schema.applied.at(-1)})`,
    });
    findings.push(...await storeChecks(store, options));
    return { findings, failed: false, unused: false };
  } finally {
    await store.close();
  }
}

async function checkOnce(target: DoctorTarget, options: StoreCheckOptions): Promise<Checked> {
  const found = await databaseChecks(target, options);
  found.findings.unshift({
    check: "version",
    ok: true,
    message: `waymark ${target.version} (${target.buildKind} build)`,
  });
  found.findings.push(
    ...await attempt("keyring", () => keyring(target.keysFile, found.unused)),
    ...await attempt("permissions", () => permissions(target, options)),
    ...await attempt("workflows", () => workflows(target.workflows)),
  );
  found.findings.sort((a, b) => DOCTOR_CHECKS.indexOf(a.check) - DOCTOR_CHECKS.indexOf(b.check));
  return found;
}

/** Checks (and with `repair`, first repairs) waymark's database, keyring and workflow files. */
export async function runDoctor(
  target: DoctorTarget,
  options: DoctorOptions = {},
): Promise<DoctorReport> {
  const repaired: string[] = [];
  const base = {
    walLimitBytes: options.walLimitBytes ?? DEFAULT_WAL_LIMIT,
    repaired: (what: string) => void repaired.push(what),
  };
  if (options.repair) await checkOnce(target, { ...base, repair: true });
  const { findings, failed, unused } = await checkOnce(target, { ...base, repair: false });
  const problems = findings.some((f) => !f.ok);
  const status = failed ? "failed" : problems ? "problems" : unused ? "unused" : "healthy";
  return {
    status,
    exitCode: failed ? 2 : problems ? 1 : 0,
    version: target.version,
    buildKind: target.buildKind,
    database: target.dbUrl,
    findings,
    repaired,
  };
}
