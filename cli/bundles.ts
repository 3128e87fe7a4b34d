/**
 * `waymark sessions export` and `waymark import`: bundles to and from files (or stdout and
 * stdin as `-`), one line per session said on stderr so stdout can carry the bundle.
 * @module
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import process from "node:process";
import { sessionLabel } from "../engine/model/ids.ts";
import { writePrivateFile } from "../store/private_files.ts";
import {
  type Bundle,
  bundleDigestLabel,
  type BundleResult,
  exportSession,
  type ImportedSession,
  refuse,
  type SessionSummary,
  verifyBundle,
  writeBundle,
} from "../store/maintenance/mod.ts";
import { selectedSessions, sessionOfId } from "./sessions.ts";
import { type CliHost, type CliInput, type OpenedWaymark, withWaymark, writeJson } from "./host.ts";

async function exportOne(host: CliHost, id: string, output: string | undefined): Promise<number> {
  return await withWaymark(host, async (waymark) => {
    const sessionId = await sessionOfId(waymark.store, id);
    const exported = await exportSession(waymark, sessionId ? sessionLabel(sessionId) : id);
    if (!exported.ok) {
      host.stderr(`${exported.error.message}\n`);
      return 1;
    }
    const { value } = exported;
    if (output === undefined || output === "-") host.stdout(value.text);
    else await writePrivateFile(output, value.text);
    host.stderr(
      `exported ${value.sessionId} to ${
        output && output !== "-" ? output : "stdout"
      }: ${value.eventCount} events, ${value.snapshotCount} snapshot(s), ${
        bundleDigestLabel(value.digest)
      }\n`,
    );
    return 0;
  });
}

/** The sessions `--all` exports: the list filters, and idle longer than `--older-than`. */
async function selected(
  db: OpenedWaymark["store"]["db"],
  input: CliInput,
  now: Date,
): Promise<SessionSummary[]> {
  const olderThan = input.flags["older-than"];
  const cutoff = olderThan === undefined ? null : new Date(now.getTime() - olderThan).toISOString();
  const sessions = await selectedSessions(db, input.flags, { now });
  return sessions.filter((s) => cutoff === null || s.updatedAt < cutoff);
}

async function exportAll(host: CliHost, input: CliInput): Promise<number> {
  const dir = input.flags.output;
  if (!dir || dir === "-") return input.usage();
  await mkdir(dir, { recursive: true });
  return await withWaymark(host, async (waymark) => {
    let failed = 0;
    const sessions = await selected(waymark.store.db, input, host.now());
    for (const s of sessions) {
      const exported = await exportSession(waymark, s.sessionId);
      if (!exported.ok) {
        failed += 1;
        host.stderr(`skipped ${sessionLabel(s.sessionId)}: ${exported.error.message}\n`);
        continue;
      }
      const file = join(dir, `${exported.value.sessionId}.json`);
      await writePrivateFile(file, exported.value.text);
      host.stdout(`${file}\n`);
    }
    host.stderr(`exported ${sessions.length - failed} session(s) to ${dir}\n`);
    return failed > 0 ? 1 : 0;
  });
}

/** `waymark sessions export`. */
export function exportCommand(host: CliHost, input: CliInput): Promise<number> {
  if (input.flags.all) return exportAll(host, input);
  const [id] = input.args;
  if (!id) return Promise.resolve(input.usage());
  return exportOne(host, id, input.flags.output);
}

function importLine(file: string, s: ImportedSession): string {
  if (s.status === "already_imported") {
    return `${file}: already imported as ${s.sessionId} (${s.bundleDigest}); nothing written`;
  }
  const as = s.rekeyed
    ? `${s.sessionId} (${s.sourceSessionId} already exists here, so it got a new id)`
    : s.sessionId;
  return `${file}: imported ${as}: ${s.eventCount} events, ${s.snapshotCount} snapshot(s)`;
}

async function readBundle(file: string): Promise<string> {
  if (file !== "-") return await readFile(file, "utf8");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/** One file's bundle verified, or its refusal. */
async function verifyFile(file: string, now: string): Promise<BundleResult<Bundle>> {
  let text: string;
  try {
    text = await readBundle(file);
  } catch (error) {
    return refuse("BUNDLE_INVALID", `cannot read it: ${(error as Error).message}`);
  }
  return await verifyBundle(text, { now });
}

/**
 * `waymark import FILE…`: every file verified first, each with its own verdict; the store is
 * opened (and created) only when at least one bundle passed, and each is then written on its
 * own, a failure of one never stopping the next.
 */
export async function importCommand(host: CliHost, input: CliInput): Promise<number> {
  if (input.args.length === 0) return input.usage();
  const now = host.now().toISOString();
  const verdicts: { file: string; result: BundleResult<Bundle | ImportedSession> }[] = [];
  for (const file of input.args) {
    verdicts.push({ file, result: await verifyFile(file, now) });
  }
  if (verdicts.some((v) => v.result.ok)) {
    await withWaymark(host, async (waymark) => {
      for (const v of verdicts) {
        if (v.result.ok) v.result = await writeBundle(waymark, v.result.value as Bundle);
      }
    });
  }
  let refused = 0;
  for (const { file, result } of verdicts) {
    if (result.ok) {
      if (!input.flags.json) host.stdout(`${importLine(file, result.value as ImportedSession)}\n`);
      continue;
    }
    refused += 1;
    host.stderr(`${file}: refused: ${result.error.message}\n`);
  }
  if (input.flags.json) {
    writeJson(host, { imports: verdicts.map((v) => ({ file: v.file, ...v.result })) });
  }
  return refused > 0 ? 1 : 0;
}
