/**
 * The external quality reviewer: a shell command run once per review with the review prompt on
 * its stdin, its stdout read as the verdict. It runs in its own process group so a timeout
 * kills everything it started; it never throws.
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import type { ReviewRun, ReviewRunner } from "../../../engine/mod.ts";

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
