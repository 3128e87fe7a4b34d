/**
 * `waymark hook EVENT`: what a host's hook runs (the Claude Code plugin's `SessionStart`, or any
 * host that can run a command when a session starts). It reads the hook's JSON from stdin
 * (`cwd`, `source`, `session_id`, ...), prints what the model should be told, and never breaks
 * its host: on any error it prints nothing on stdout, one line on stderr, and exits 0. It only
 * reads the store (a fresh `stateToken` is minted, not stored: tokens are self-contained).
 * Loaded on its own (`../../lazy.ts`), without the commands, the engine or the store.
 * @module
 */
import { resolve } from "node:path";
import process from "node:process";
import { z } from "npm:zod@4.6.7";
import { localFilePath, redactDbUrl } from "../../store/db_url.ts";
import { homePaths } from "../../store/home_paths.ts";
import { readKeyring } from "../../store/keyring.ts";
import type { CommandInput } from "../host.ts";
import { printErr, printOut } from "../terminal.ts";
import { readOpenRuns, workspaceFolders } from "./open_runs.ts";
import { sessionStartText, SHOWN_RUNS } from "./session_start.ts";

/**
 * The part of a hook's JSON input waymark reads: the session's folder. The rest (`source`,
 * `session_id`, ...) is ignored: every source gets the same answer.
 */
const hookInputSchema = z.object({ cwd: z.string().min(1).optional() }).loose();

/** A hook's input. */
type HookInput = z.infer<typeof hookInputSchema>;

/** The largest hook input read from stdin. */
const MAX_INPUT_BYTES = 1024 * 1024;
/** How long stdin may stay open without ending before the hook goes on without it. */
const STDIN_WAIT_MS = 1000;

/** One event's handler: the text for the model (`""` for none). */
type HookEvent = (input: HookInput, command: CommandInput) => Promise<string> | string;

/** The events, by the name `waymark hook` takes. */
const HOOK_EVENTS: Readonly<Record<string, HookEvent>> = {
  "session-start": sessionStart,
};

/** The hook's JSON from stdin: `{}` from a terminal, nothing, or a stdin left open. */
async function readInput(): Promise<HookInput> {
  if (Deno.stdin.isTerminal()) return {};
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  const read = (async () => {
    for await (const chunk of Deno.stdin.readable) {
      size += chunk.length;
      if (size > MAX_INPUT_BYTES) {
        throw new Error(`the hook input is over ${MAX_INPUT_BYTES} bytes`);
      }
      chunks.push(new Uint8Array(chunk));
    }
    return true;
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((done) => {
    timer = setTimeout(() => done(false), STDIN_WAIT_MS);
  });
  const ended = await Promise.race([read, late]).finally(() => clearTimeout(timer));
  if (!ended) return {};
  const text = new TextDecoder().decode(await new Blob(chunks).bytes()).trim();
  if (text === "") return {};
  const parsed = hookInputSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error("the hook input is not a JSON object with a string cwd");
  return parsed.data;
}

/** `session-start`: the workspace's open runs, or nothing. */
function sessionStart(input: HookInput, command: CommandInput): string {
  const { flags } = command;
  const paths = homePaths({ home: flags.home, dbUrl: flags.db });
  const file = localFilePath(paths.dbUrl);
  if (file === undefined) {
    if (paths.dbUrl === ":memory:") return "";
    throw new Error(
      `reads only a database file, not ${
        redactDbUrl(paths.dbUrl)
      }; resume_session finds runs there`,
    );
  }
  const cwd = resolve(flags.workspace ?? input.cwd ?? process.cwd());
  const found = readOpenRuns(file, { folders: workspaceFolders(cwd), limit: SHOWN_RUNS });
  if (!found) return "";
  return sessionStartText(found, found.runs.length > 0 ? readKeyring(paths.keysFile) : null);
}

/** Runs `waymark hook EVENT`; always exits 0. */
export async function hook(command: CommandInput): Promise<number> {
  const [event, ...extra] = command.args;
  const handler = event !== undefined && Object.hasOwn(HOOK_EVENTS, event)
    ? HOOK_EVENTS[event]
    : undefined;
  if (!handler || extra.length > 0) {
    const known = Object.keys(HOOK_EVENTS).join(", ");
    printErr(`waymark hook: expected one event (${known}), got ${JSON.stringify(command.args)}\n`);
    return 0;
  }
  try {
    const text = await handler(await readInput(), command);
    if (text) printOut(text);
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    printErr(`waymark hook ${event}: ${message} (nothing printed)\n`);
  }
  return 0;
}
