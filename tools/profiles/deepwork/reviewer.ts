/**
 * The external quality reviewer: a shell command run once per review with the review prompt on
 * its stdin, its stdout read as the verdict. It runs in its own process group so a timeout
 * kills everything it started; it never throws. `--external-runner claude` is such a command:
 * the Claude Code CLI in print mode answering in JSON, whose answer is unwrapped to the verdict.
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import type { ReviewRun, ReviewRunner } from "../../../engine/deepwork/ports.ts";

/** Most bytes of stdout or stderr kept. */
const OUTPUT_LIMIT = 1024 * 1024;

/** A reviewer that runs `command` through the shell, in `cwd`. */
export function commandReviewer(command: string, options: { cwd?: string } = {}): ReviewRunner {
  return {
    command,
    run(prompt, { timeoutMs }) {
      return new Promise<ReviewRun>((done) => {
        let child;
        try {
          child = spawn(command, {
            shell: true,
            cwd: options.cwd,
            detached: true,
            stdio: ["pipe", "pipe", "pipe"],
          });
        } catch (error) {
          done({ kind: "failed_to_start", message: String(error) });
          return;
        }
        let stdout = "";
        let stderr = "";
        let finished = false;
        const finish = (result: ReviewRun) => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          done(result);
        };
        const timer = setTimeout(() => {
          try {
            process.kill(-child.pid!, "SIGKILL");
          } catch { /* already gone */ }
          finish({ kind: "timeout", afterMs: timeoutMs });
        }, timeoutMs);
        child.stdout.on("data", (d) => stdout.length < OUTPUT_LIMIT && (stdout += d));
        child.stderr.on("data", (d) => stderr.length < OUTPUT_LIMIT && (stderr += d));
        child.on("error", (error) => finish({ kind: "failed_to_start", message: error.message }));
        child.on(
          "close",
          (code, signal) =>
            finish({ kind: "exited", code: code ?? (signal ? 128 : 1), stdout, stderr }),
        );
        child.stdin.on("error", () => {/* the command may not read its stdin */});
        child.stdin.end(prompt);
      });
    },
  };
}

/** What `--external-runner claude` runs: Claude Code in print mode, answering in JSON. */
export const CLAUDE_COMMAND = "claude -p --output-format json";

/** The answer text of Claude Code's JSON output (one result object, or a list ending in one). */
function claudeAnswer(stdout: string): { text: string } | { error: string } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout.trim());
  } catch {
    return null;
  }
  const result = (Array.isArray(parsed) ? parsed.at(-1) : parsed) as
    | { is_error?: unknown; result?: unknown; subtype?: unknown }
    | undefined;
  if (result?.is_error === true || typeof result?.result !== "string") {
    return { error: String(result?.result ?? result?.subtype ?? "no result").slice(0, 500) };
  }
  return { text: result.result };
}

/** The reviewer of `--external-runner claude`: {@linkcode CLAUDE_COMMAND}, its answer unwrapped. */
export function claudeReviewer(options: { cwd?: string } = {}): ReviewRunner {
  const inner = commandReviewer(CLAUDE_COMMAND, options);
  return {
    command: CLAUDE_COMMAND,
    async run(prompt, run) {
      const ran = await inner.run(prompt, run);
      if (ran.kind !== "exited" || ran.code !== 0) return ran;
      const answer = claudeAnswer(ran.stdout);
      if (answer === null) return ran;
      if ("error" in answer) {
        return { ...ran, code: 1, stderr: `claude answered with an error: ${answer.error}` };
      }
      return { ...ran, stdout: answer.text };
    },
  };
}
