/**
 * Claude Code's session transcript as a usage meter: the host sets `CLAUDE_CODE_SESSION_ID` in the
 * environment of the MCP servers it starts and appends each session's messages as JSON lines to
 * `<config>/projects/<project>/<session>.jsonl` (config: `CLAUDE_CONFIG_DIR`, else `~/.claude`),
 * its subagents' (the Task tool's) to `<session>/subagents/` beside it.
 * Only each assistant line's message id, timestamp and `usage` counts are kept; no text is read
 * into anything that outlives the line. The file is read incrementally (only bytes appended since
 * the last reading), so a reading costs what was added, not the session's length.
 * @module
 */
import { open, readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "npm:zod@4.6.7";
import type { UsageMeter, UsageReading } from "../../engine/cost/ports.ts";
import type { ModelCall } from "../../engine/cost/usage.ts";
import type { Warning } from "../../engine/workflow/catalog.ts";

/** Most bytes read per reading (a larger backlog is read over the following readings). */
const MAX_READ = 8 * 1024 * 1024;
/** How long a reading waits for the call behind a request to reach the transcript, by default. */
export const TRANSCRIPT_WAIT_MS = 1_500;
/** How often it looks meanwhile. */
const POLL_MS = 20;

const count = z.number().int().nonnegative().catch(0);

/** The fields of an assistant line that are kept: everything else is dropped unread. */
const assistantLine = z.object({
  type: z.literal("assistant"),
  timestamp: z.string(),
  requestId: z.string().optional(),
  message: z.object({
    id: z.string(),
    content: z.array(z.looseObject({ type: z.unknown(), id: z.unknown().optional() })).catch([]),
    usage: z.object({
      input_tokens: count.optional(),
      output_tokens: count.optional(),
      cache_creation_input_tokens: count.optional(),
      cache_read_input_tokens: count.optional(),
    }),
  }),
});

/** One transcript line's model call, `null` for a line that records none, `"bad"` if unreadable. */
export function parseTranscriptLine(line: string): ModelCall | null | "bad" {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "bad";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "bad";
  if ((value as { type?: unknown }).type !== "assistant") return null;
  const parsed = assistantLine.safeParse(value);
  if (!parsed.success) return null; // an assistant line without usage (a synthetic message)
  const { message, timestamp } = parsed.data;
  const u = message.usage;
  const toolUseIds = message.content.flatMap((b) =>
    b.type === "tool_use" && typeof b.id === "string" ? [b.id] : []
  );
  return {
    id: message.id,
    at: timestamp,
    ...(toolUseIds.length > 0 ? { toolUseIds } : {}),
    usage: {
      inputTokens: u.input_tokens ?? 0,
      outputTokens: u.output_tokens ?? 0,
      cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0,
      cacheReadInputTokens: u.cache_read_input_tokens ?? 0,
    },
  };
}

/** Where Claude Code keeps its configuration for this environment. */
export function claudeConfigDir(env: Record<string, string | undefined>): string | null {
  if (env.CLAUDE_CONFIG_DIR) return env.CLAUDE_CONFIG_DIR;
  return env.HOME ? join(env.HOME, ".claude") : null;
}

/** A session id that is safe as a file name (Claude Code's are UUIDs). */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The project folder name Claude Code derives from a working directory. */
function projectSlug(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

/** The transcript of a session: under the working directory's project, else any project's. */
async function findTranscript(
  config: string,
  where: { sessionId: string; cwd: string },
): Promise<string | null> {
  const name = `${where.sessionId}.jsonl`;
  const projects = join(config, "projects");
  const direct = join(projects, projectSlug(where.cwd), name);
  if (await isFile(direct)) return direct;
  let folders: string[];
  try {
    folders = await readdir(projects);
  } catch {
    return null;
  }
  for (const folder of folders) {
    const candidate = join(projects, folder, name);
    if (await isFile(candidate)) return candidate;
  }
  return null;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function notice(code: string, message: string): Warning {
  return { code, message };
}

/** How far one transcript file has been read. */
interface FileState {
  offset: number;
  partial: Uint8Array;
}

/** What the meter keeps between readings. */
interface Cursor {
  /** The session's main transcript, once found. */
  path: string | null;
  /** Each file read (the main one and its subagents'), by path. */
  files: Map<string, FileState>;
  /** The calls read so far, in order of time, with their times parsed (`ms`, alongside). */
  calls: ModelCall[];
  ms: number[];
  since: string | null;
  /** Tool call ids seen in the calls read so far. */
  toolUses: Set<string>;
}

/** Options of {@linkcode claudeCodeMeter}. */
export interface ClaudeMeterOptions {
  /** The environment the server was started with (`CLAUDE_CODE_SESSION_ID`, `CLAUDE_CONFIG_DIR`, `HOME`). */
  env: Record<string, string | undefined>;
  /** The server's working directory (Claude Code names the project folder after it). */
  cwd: string;
  /** How long a reading waits for the call behind a request (default {@linkcode TRANSCRIPT_WAIT_MS}). */
  waitMs?: number;
}

/**
 * A meter over the Claude Code session that started this server, or `null` when the environment
 * names none (another host, or Claude Code not the parent).
 */
export function claudeCodeMeter(options: ClaudeMeterOptions): UsageMeter | null {
  const sessionId = options.env.CLAUDE_CODE_SESSION_ID;
  const config = claudeConfigDir(options.env);
  if (!sessionId || !config) return null;
  if (!SESSION_ID.test(sessionId)) {
    const bad = notice(
      "USAGE_UNAVAILABLE",
      "CLAUDE_CODE_SESSION_ID is not a session id waymark can look up; no tokens are counted.",
    );
    return {
      source: "claude_code",
      read: () => Promise.resolve({ calls: [], notice: bad, since: null }),
      settle: () => {},
    };
  }
  const cursor: Cursor = {
    path: null,
    files: new Map(),
    calls: [],
    ms: [],
    since: null,
    toolUses: new Set(),
  };
  // one reading at a time: two at once would read the same bytes twice
  let last: Promise<unknown> = Promise.resolve();
  return {
    source: "claude_code",
    read: (wanted = {}) => {
      const where = {
        config,
        sessionId,
        cwd: options.cwd,
        waitMs: options.waitMs ?? TRANSCRIPT_WAIT_MS,
        through: wanted.through,
        after: wanted.after,
      };
      const next = last.then(() => readMore(cursor, where));
      last = next;
      return next;
    },
    settle: (to) => {
      if (cursor.since === null || Date.parse(to) > Date.parse(cursor.since)) cursor.since = to;
    },
  };
}

async function readMore(
  cursor: Cursor,
  where: {
    config: string;
    sessionId: string;
    cwd: string;
    waitMs: number;
    through?: string;
    after?: string;
  },
): Promise<UsageReading> {
  const calls = () => callsAfter(cursor, where.after);
  cursor.path ??= await findTranscript(where.config, where);
  if (!cursor.path) {
    return {
      calls: calls(),
      since: cursor.since,
      notice: notice(
        "USAGE_UNAVAILABLE",
        `Claude Code's transcript of session ${where.sessionId} is not under ${where.config}/projects; no tokens were counted for this step.`,
      ),
    };
  }
  try {
    let bad = await readSession(cursor, where.sessionId);
    const started = Date.now();
    const { through } = where;
    while (through !== undefined && !cursor.toolUses.has(through)) {
      if (Date.now() - started >= where.waitMs) {
        return {
          calls: calls(),
          since: cursor.since,
          notice: notice(
            "USAGE_PARTIAL",
            `Claude Code's transcript did not record the model call behind this request within ${where.waitMs} ms; this step's tokens may leave it out (a slow machine may allow more: \`cost.transcriptWaitMs\` in config.json).`,
          ),
        };
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      bad += await readSession(cursor, where.sessionId);
    }
    return {
      calls: calls(),
      since: cursor.since,
      notice: bad === 0 ? null : notice(
        "USAGE_PARTIAL",
        `${bad} line(s) of Claude Code's transcript could not be read and were skipped; the tokens are counted from the rest.`,
      ),
    };
  } catch (error) {
    return {
      calls: calls(),
      since: cursor.since,
      notice: notice(
        "USAGE_UNAVAILABLE",
        `Claude Code's transcript could not be read (${
          (error as { code?: string }).code ?? "error"
        }); no tokens were counted for this step.`,
      ),
    };
  }
}

/** Adds a call in order of time (nearly always at the end: the host appends as it goes). */
function keep(cursor: Cursor, call: ModelCall): void {
  const ms = Date.parse(call.at);
  if (Number.isNaN(ms)) return; // a time that does not parse counts nowhere
  let i = cursor.ms.length;
  while (i > 0 && cursor.ms[i - 1]! > ms) i--;
  cursor.ms.splice(i, 0, ms);
  cursor.calls.splice(i, 0, call);
}

/** The calls after a time (all without one), found by binary search: a reading costs the step's calls. */
function callsAfter(cursor: Cursor, after: string | undefined): readonly ModelCall[] {
  const from = after === undefined ? Number.NaN : Date.parse(after);
  if (Number.isNaN(from)) return cursor.calls;
  let lo = 0;
  let hi = cursor.ms.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cursor.ms[mid]! <= from) lo = mid + 1;
    else hi = mid;
  }
  return cursor.calls.slice(lo);
}

/**
 * The session's subagents' transcripts (Claude Code writes a subagent's calls, the Task tool's,
 * to `<session>/subagents/**\/agent-<id>.jsonl` beside the main file); none when there are none.
 */
async function subagentFiles(main: string, sessionId: string): Promise<string[]> {
  const dir = join(dirname(main), sessionId, "subagents");
  try {
    const names = await readdir(dir, { recursive: true });
    return names.filter((n) => /(^|\/)agent-[^/]*\.jsonl$/.test(n)).sort().map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** Reads what every transcript of the session gained; returns how many lines were unreadable. */
async function readSession(cursor: Cursor, sessionId: string): Promise<number> {
  let bad = await readNewLines(cursor, cursor.path!);
  for (const path of await subagentFiles(cursor.path!, sessionId)) {
    bad += await readNewLines(cursor, path);
  }
  return bad;
}

/** Reads the bytes appended to a file since the last reading; returns the lines unreadable. */
async function readNewLines(cursor: Cursor, path: string): Promise<number> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    let state = cursor.files.get(path);
    // new, or rewritten shorter: from its start (a call read twice still counts once, by its id)
    if (!state || size < state.offset) {
      state = { offset: 0, partial: new Uint8Array() };
      cursor.files.set(path, state);
    }
    const length = Math.min(size - state.offset, MAX_READ);
    if (length <= 0) return 0;
    const chunk = new Uint8Array(state.partial.length + length);
    chunk.set(state.partial);
    const { bytesRead } = await file.read(chunk, state.partial.length, length, state.offset);
    state.offset += bytesRead;
    const data = chunk.subarray(0, state.partial.length + bytesRead);
    const end = data.lastIndexOf(0x0a);
    state.partial = data.slice(end + 1); // a line still being written waits for its newline
    if (end < 0) return 0;
    let bad = 0;
    for (const line of new TextDecoder().decode(data.subarray(0, end)).split("\n")) {
      if (line.trim() === "") continue;
      const call = parseTranscriptLine(line);
      if (call === "bad") bad++;
      else if (call) {
        keep(cursor, call);
        for (const id of call.toolUseIds ?? []) cursor.toolUses.add(id);
      }
    }
    return bad;
  } finally {
    await file.close();
  }
}
