/**
 * `waymark doctor [FILE] [--repair] [--json]`: the report as lines (a mark, the check, what was
 * found and the fix) or JSON; FILE checks another database file, such as a backup.
 * @module
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { databaseFile } from "../store/libsql/maintenance.ts";
import { redactDbUrl } from "../store/db_url.ts";
import { type DoctorReport, runDoctor } from "../store/maintenance/mod.ts";
import { type CliHost, type CliInput, writeJson } from "./host.ts";

function text(report: DoctorReport): string {
  const lines = report.findings.map((f) =>
    `${f.ok ? "ok     " : "PROBLEM"} ${f.check.padEnd(12)} ${f.message}${
      f.fix ? `\n        fix: ${f.fix}` : ""
    }`
  );
  for (const r of report.repaired) lines.push(`repaired: ${r}`);
  const verdict = {
    healthy: "healthy",
    unused: "a new home, not used yet: nothing is wrong",
    problems: "problems found",
    failed: "could not run every check",
  }[report.status];
  lines.push(`${verdict} (exit ${report.exitCode})`);
  return `${lines.join("\n")}\n`;
}

/** `waymark doctor`. */
export async function doctorCommand(host: CliHost, input: CliInput): Promise<number> {
  const [file] = input.args;
  const dbUrl = file ? `file:${resolve(file)}` : host.paths.dbUrl;
  const path = databaseFile(dbUrl);
  const report = await runDoctor({
    version: host.version,
    buildKind: host.buildKind,
    dbUrl: redactDbUrl(dbUrl),
    keysFile: host.paths.keysFile,
    home: host.paths.home,
    privateFiles: path ? [path, `${path}-wal`, `${path}-shm`] : [],
    workflows: host.workflows(),
    open: () => {
      // opening a missing file would create an empty database: report it instead; the home's
      // own database is missing only until its first use, a FILE named is missing by mistake
      if (path && !existsSync(path)) {
        if (file) throw new Error(`${path} does not exist`);
        return Promise.resolve(null);
      }
      return host.openDatabase(dbUrl);
    },
  }, { repair: input.flags.repair === true });
  if (input.flags.json) writeJson(host, report);
  else host.stdout(text(report));
  return report.exitCode;
}
