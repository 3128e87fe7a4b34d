/**
 * `waymark gc [--older-than 30d] [--dry-run] [--keep-running] [--vacuum] [--json]`: retention
 * from the flag or, with no flag, from `config.json`'s `retention.olderThan`; with neither it
 * removes nothing. `VACUUM` runs only when asked, with a progress line.
 * @module
 */
import { loadConfig } from "../config/config_file.ts";
import { gitSnapshots } from "../tools/snapshots/mod.ts";
import { collectGarbage, type GcSession } from "../store/maintenance/mod.ts";
import { type CliHost, type CliInput, formatBytes, withWaymark, writeJson } from "./host.ts";

function sessionLine(s: GcSession, dryRun: boolean): string {
  return `${dryRun ? "would remove" : "removed"} ${s.sessionId}  last active ${
    s.lastActivity.slice(0, 16).replace("T", " ")
  }  ~${formatBytes(s.bytes)}  ${s.title.replace(/\s+/g, " ").slice(0, 60)}`;
}

/** `waymark gc`. */
export async function gcCommand(host: CliHost, input: CliInput): Promise<number> {
  const { flags } = input;
  const retention = flags["older-than"] === undefined
    ? (await loadConfig(host.paths.home)).retention
    : null;
  const olderThanMs = flags["older-than"] ?? retention?.olderThanMs;
  if (olderThanMs === undefined) {
    host.stderr(
      `gc removes nothing without a limit: pass --older-than (e.g. 30d), or set {"retention": {"olderThan": "90d"}} in ${host.paths.home}/config.json\n`,
    );
    return 2;
  }
  const dryRun = flags["dry-run"] === true;
  return await withWaymark(host, async ({ store }) => {
    const report = await collectGarbage(store, {
      olderThanMs,
      now: host.now(),
      dryRun,
      keepRunning: flags["keep-running"] === true,
      onSession: (s) => flags.json || host.stdout(`${sessionLine(s, dryRun)}\n`),
    });
    const summary = `${
      dryRun ? "would remove" : "removed"
    } ${report.sessions.length} session(s), about ${
      formatBytes(report.bytes)
    } (idle since before ${report.cutoff}${retention ? `, retention ${retention.olderThan}` : ""})${
      report.kept > 0 ? `; ${report.kept} became active meanwhile and were kept` : ""
    }`;
    host.stderr(`${summary}\n`);
    if (!dryRun) {
      // the removed runs' snapshots go with them (docs/snapshots.md)
      const snapshots = gitSnapshots();
      let refs = 0;
      for (const s of report.snapshots) refs += await snapshots.forget(s.workspace, s.runIds);
      if (refs > 0) host.stderr(`removed ${refs} snapshot ref(s) under refs/waymark/\n`);
    }
    let vacuum: { before: number | null; after: number | null } | null = null;
    if (flags.vacuum && !dryRun) {
      const before = await store.maintenance.databaseBytes(store.db);
      host.stderr(`vacuuming ${host.paths.dbUrl} (${formatBytes(before ?? 0)}); writers wait…\n`);
      await store.maintenance.vacuum(store.db);
      const after = await store.maintenance.databaseBytes(store.db);
      host.stderr(`vacuumed: ${formatBytes(before ?? 0)} → ${formatBytes(after ?? 0)}\n`);
      vacuum = { before, after };
    }
    if (flags.json) writeJson(host, { ...report, vacuum });
    return 0;
  });
}
