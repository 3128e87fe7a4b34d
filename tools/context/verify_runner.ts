/**
 * The verification runner: runs an allowed command (the engine decided that) in the caller's
 * workspace, without a shell, in its own process group (a timeout kills everything it
 * started), with only the environment variables the user's policy lists, keeping the end of
 * its stdout and stderr within the cap. Before it runs, it records the workspace's git HEAD and
 * whether the work tree is dirty. The folder it runs in must resolve (symlinks followed) inside
 * the workspace. It never throws: a command that cannot start is an `error`.
 * @module
 */
import { spawn } from "node:child_process";
import { realpath } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { availableParallelism } from "node:os";
import process from "node:process";
import type { VerificationRunner } from "../../engine/model/ports.ts";
import type {
  VerificationPolicy,
  VerificationRequest,
  VerificationRun,
  VerificationWait,
} from "../../engine/verification/policy.ts";
import { gitState } from "./workspace.ts";

/** How long `git status` may take, and the most of its output read. */
const GIT_LIMITS = { timeoutMs: 10_000, outputBytes: 4096 } as const;

/** The last `cap` bytes of a stream, and how many it wrote in all. */
class Tail {
  #chunks: Uint8Array[] = [];
  #kept = 0;
  total = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    this.#chunks.push(chunk);
    this.#kept += chunk.length;
    while (this.#chunks.length > 1 && this.#kept - this.#chunks[0]!.length >= this.cap) {
      this.#kept -= this.#chunks.shift()!.length;
    }
  }

  text(): string {
    const all = new Uint8Array(this.#kept);
    let at = 0;
    for (const c of this.#chunks) {
      all.set(c, at);
      at += c.length;
    }
    const bytes = all.subarray(Math.max(0, all.length - this.cap));
    // a cut through a character leaves a replacement character at the start: drop it
    const text = new TextDecoder().decode(bytes);
    return bytes.length < all.length ? text.replace(/^\uFFFD+/, "") : text;
  }
}

interface Ran {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  error: string | null;
  stdout: Tail;
  stderr: Tail;
}

/** Ends a command's whole process group (on Windows, the command alone). */
function endGroup(child: ReturnType<typeof spawn>): void {
  try {
    if (process.platform === "win32") child.kill("SIGKILL");
    else process.kill(-child.pid!, "SIGKILL");
  } catch { /* already gone */ }
}

/**
 * Runs argv in `cwd` with `env` as the leader of a new process group, and ends that group when
 * the command exits (what it left running in the background) or after `timeoutMs`.
 */
function runProcess(
  argv: readonly string[],
  at: { cwd: string; env: Record<string, string>; timeoutMs: number; outputBytes: number },
): Promise<Ran> {
  const stdout = new Tail(at.outputBytes);
  const stderr = new Tail(at.outputBytes);
  return new Promise<Ran>((done) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(argv[0]!, argv.slice(1), {
        cwd: at.cwd,
        env: at.env,
        shell: false,
        detached: process.platform !== "win32",
        windowsHide: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      const message = (error as Error).message;
      done({ exitCode: null, signal: null, timedOut: false, error: message, stdout, stderr });
      return;
    }
    let finished = false;
    let timedOut = false;
    let grace: ReturnType<typeof setTimeout> | undefined;
    // a process that left the group (its own session) may hold the pipes open: stop waiting
    const stopWaiting = (ran: Omit<Ran, "stdout" | "stderr" | "timedOut">) => {
      grace ??= setTimeout(() => finish(ran), 2000);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      endGroup(child);
      stopWaiting({ exitCode: null, signal: "SIGKILL", error: null });
    }, at.timeoutMs);
    const finish = (ran: Omit<Ran, "stdout" | "stderr" | "timedOut">) => {
      if (finished) return;
      finished = true;
      // the pipes may close before the exit is told: what it left running ends before the answer
      endGroup(child);
      clearTimeout(timer);
      clearTimeout(grace);
      done({ ...ran, timedOut, stdout, stderr });
    };
    child.stdout!.on("data", (d: Uint8Array) => stdout.push(d));
    child.stderr!.on("data", (d: Uint8Array) => stderr.push(d));
    child.on("error", (error) => finish({ exitCode: null, signal: null, error: error.message }));
    child.on("exit", (code, signal) => {
      endGroup(child);
      stopWaiting({ exitCode: code, signal, error: null });
    });
    child.on("close", (code, signal) => finish({ exitCode: code, signal, error: null }));
  });
}

/**
 * HEAD (read from `.git` as every call's workspace observation is) and whether the work tree is
 * dirty (`git status`, which no file read can tell), or `null`s outside a git repository.
 */
async function gitSnapshot(
  cwd: string,
): Promise<{ gitHead: string | null; gitDirty: boolean | null }> {
  const status = await runProcess(["git", "status", "--porcelain"], {
    cwd,
    env: Object.fromEntries(
      Object.entries(process.env).filter(([k, v]) => v !== undefined && !k.startsWith("GIT_")),
    ) as Record<string, string>,
    ...GIT_LIMITS,
  });
  if (status.exitCode !== 0) return { gitHead: null, gitDirty: null };
  return { gitHead: (await gitState(cwd)).gitHeadSha, gitDirty: status.stdout.total > 0 };
}

/** The folder to run in, resolved with symlinks followed, or why it is not inside the workspace. */
async function runFolder(
  request: VerificationRequest,
): Promise<{ cwd: string } | { error: string }> {
  try {
    const root = await realpath(request.workspace);
    const cwd = await realpath(join(root, request.cwd ?? "."));
    const rel = relative(root, cwd);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      return { error: `the folder ${request.cwd} resolves outside the workspace (${cwd})` };
    }
    return { cwd };
  } catch (error) {
    return {
      error: `the folder ${request.cwd ?? request.workspace} cannot be used: ${
        (error as Error).message
      }`,
    };
  }
}

/** Runs one allowed command as the engine asked; never throws. */
export async function runVerification(request: VerificationRequest): Promise<VerificationRun> {
  const folder = await runFolder(request);
  const none = { stdoutTail: "", stderrTail: "", outputBytes: { stdout: 0, stderr: 0 } };
  if ("error" in folder) {
    return {
      exitCode: null,
      signal: null,
      timedOut: false,
      error: folder.error,
      durationMs: 0,
      ...none,
      gitHead: null,
      gitDirty: null,
    };
  }
  const git = await gitSnapshot(folder.cwd);
  const env: Record<string, string> = {};
  for (const name of request.env) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  const begin = performance.now();
  const ran = await runProcess(request.argv, {
    cwd: folder.cwd,
    env,
    timeoutMs: request.timeoutMs,
    outputBytes: request.outputBytes,
  });
  return {
    exitCode: ran.exitCode,
    signal: ran.signal,
    timedOut: ran.timedOut,
    error: ran.error,
    durationMs: performance.now() - begin,
    stdoutTail: ran.stdout.text(),
    stderrTail: ran.stderr.text(),
    outputBytes: { stdout: ran.stdout.total, stderr: ran.stderr.total },
    ...git,
  };
}

/** Turns to run commands: at most `limit` at once, the rest waiting in arrival order. */
class Turns {
  #running = 0;
  #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** Waits for a turn (telling `onWaiting` when it must); resolves to its release. */
  async take(onWaiting?: (wait: VerificationWait) => void): Promise<() => void> {
    if (this.#running < this.limit) this.#running++;
    else {
      onWaiting?.({ ahead: this.#waiting.length, limit: this.limit });
      // the turn is handed over by the release that wakes this one: the count stays
      await new Promise<void>((wake) => this.#waiting.push(wake));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    };
  }
}

/**
 * The runner of the user's policy: one per server, running at most `maxConcurrent` commands at
 * once (default: the machine's cores), the rest waiting their turn.
 */
export function commandVerifier(policy: VerificationPolicy): VerificationRunner {
  const turns = new Turns(policy.maxConcurrent ?? Math.max(1, availableParallelism()));
  return {
    policy,
    run: async (request, options) => {
      const release = await turns.take(options?.onWaiting);
      try {
        return await runVerification(request);
      } finally {
        release();
      }
    },
  };
}
