/**
 * Evidence of a step's verification command: what the server ran (or why it did not), how it
 * ended, the tails of its output and the git state of the workspace at the time. Recorded as an
 * `evidence_recorded` event on the node an acknowledgement created, and returned in that
 * acknowledgement's response (so a replay returns the same verdict without running anything).
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { VERIFICATION_VERDICTS } from "../model/vocabulary.ts";

/** Evidence of one verification, as recorded and returned. */
export const evidenceSchema = z.object({
  verdict: z.enum(VERIFICATION_VERDICTS).describe(
    "passed, failed (non-zero exit), timed_out, error (could not start); not_allowed or unavailable when it did not run.",
  ),
  command: z.array(z.string()).describe("The command as argv (program first)."),
  commandLine: z.string().describe("The same, as one line."),
  cwd: z.string().nullable().describe("The folder, relative to the workspace (null: the root)."),
  reason: z.string().nullable().describe("Why it did not run, or could not start."),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable().describe("The signal that ended it, if one did."),
  timedOut: z.boolean(),
  timeoutSeconds: z.number().int().nullable().describe("The limit it ran under."),
  durationMs: z.number().int().nullable(),
  stdoutTail: z.string().describe("The end of its stdout, at most the configured bytes."),
  stderrTail: z.string().describe("The end of its stderr, at most the configured bytes."),
  outputBytes: z.object({ stdout: z.number().int(), stderr: z.number().int() }).describe(
    "How much it wrote in all.",
  ),
  truncated: z.boolean().describe("Whether the tails leave out the start of the output."),
  gitHead: z.string().nullable().describe("HEAD when it ran (null: not a git repository)."),
  gitDirty: z.boolean().nullable().describe("Whether the work tree had uncommitted changes."),
});

/** Evidence of one verification. */
export type Evidence = z.infer<typeof evidenceSchema>;
