/**
 * `git` as a process for snapshots: found on PATH, run without a shell, with optional locks off
 * (so not even a stat refresh of the user's index happens) and no inherited repository
 * variables, ended at a deadline, its output capped.
 * @module
 */
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import process from "node:process";

/** What one git run came to. */
export interface GitRun {
  /** Exit code (`null`: it did not exit on its own: killed, or never started). */
  code: number | null;
  /** Stdout, up to the cap. */
  out: string;
  /** Stderr, up to 64 KiB. */
  err: string;
  /** Killed at the deadline. */
  timedOut: boolean;
  /** Stdout went past the cap (the process was ended there). */
  cut: boolean;
  /** Git could not be started (not on PATH). */
  missing: boolean;
}

/** How to run one git command. */
export interface GitOptions {
  /** Absolute time (ms since the epoch) by which it must end. */
  deadline: number;
  /** Extra environment (`GIT_INDEX_FILE`). */
  env?: Record<string, string>;
  /** Written to its stdin. */
  input?: string;
  /** Most bytes of stdout kept. */
  maxOut?: number;
}

/** Variables a parent git (a hook that started the server) may have set; never inherited. */
const INHERITED = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR"];

function environment(extra: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !INHERITED.includes(k)) env[k] = v;
  }
  return {
    ...env,
    GIT_OPTIONAL_LOCKS: "0",
    GIT_TERMINAL_PROMPT: "0",
    LC_ALL: "C",
    ...extra,
  };
}

/** Runs `git args` in `cwd`; never throws. */
export function runGit(cwd: string, args: readonly string[], options: GitOptions): Promise<GitRun> {
  const maxOut = options.maxOut ?? 64 * 1024 * 1024;
  if (Date.now() >= options.deadline) {
    // past the budget already: nothing is started
    const none = { code: null, out: "", err: "", timedOut: true, cut: false, missing: false };
    return Promise.resolve(none);
  }
  return new Promise((done) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let cut = false;
    let timedOut = false;
    const child = spawn("git", args, {
      cwd,
      env: environment(options.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, Math.max(0, options.deadline - Date.now()));
    child.stdout.on("data", (chunk: Buffer) => {
      if (cut) return;
      if (outBytes + chunk.length > maxOut) {
        out.push(chunk.subarray(0, maxOut - outBytes));
        outBytes = maxOut;
        cut = true;
        child.kill("SIGKILL");
        return;
      }
      out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (errBytes < 65536) err.push(chunk);
      errBytes += chunk.length;
    });
    child.stdin.on("error", () => {}); // a git that exits before reading all of it
    child.stdin.end(options.input ?? "");
    const finish = (code: number | null, missing: boolean) => {
      clearTimeout(timer);
      done({
        code,
        out: Buffer.concat(out).toString("utf8"),
        err: Buffer.concat(err).toString("utf8"),
        timedOut,
        cut,
        missing,
      });
    };
    child.on("error", (e: NodeJS.ErrnoException) => finish(null, e.code === "ENOENT"));
    child.on("close", (code) => finish(timedOut || cut ? null : code, false));
  });
}

/** The first line of a failed run's stderr, for a notice. */
export function gitWhy(run: GitRun): string {
  if (run.missing) return "git is not on PATH";
  if (run.timedOut) return "git took longer than the time budget";
  return run.err.trim().split("\n")[0] || `git exited with ${run.code}`;
}
