/**
 * A step's verification command, as written and as compiled: our `verify` block (argv, no
 * shell) and WorkRail's `verification: {command, prompt?}` (a command line split into argv by
 * `command_line.ts`, refused when it needs a shell), both compiled into one
 * {@linkcode CompiledVerify}, and the prompt section that names the command. Whether the
 * command runs is the user's decision at acknowledgement time (`engine/verification/policy.ts`).
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { formatCommandLine, splitCommandLine } from "../verification/command_line.ts";

/** Most seconds a step may ask for (the user's config may allow less). */
export const MAX_VERIFY_SECONDS = 3600;

const relativeDir = z.string().min(1).max(512).refine(
  (p) => !/^([/\\]|[A-Za-z]:)/.test(p) && !p.split(/[/\\]/).includes(".."),
  { message: "`cwd` is a folder inside the workspace: relative, without `..`" },
);

/** Our `verify` block: the command as argv, run without a shell when the user allows it. */
export const verifyBlockSchema = z.strictObject({
  run: z.array(z.string().min(1).max(1024)).min(1).max(64).describe(
    "The command as argv (program first); no shell, nothing substituted.",
  ),
  cwd: relativeDir.optional().describe("The folder to run in, relative to the workspace."),
  timeoutSeconds: z.number().int().min(1).max(MAX_VERIFY_SECONDS).optional().describe(
    "Kill it after this long (the user's config caps it).",
  ),
  prompt: z.string().min(1).max(4096).optional().describe("What the agent should know about it."),
}).describe(
  "A command waymark runs in the workspace when the step is acknowledged, if the user's config allows it; a failure blocks the step.",
);

/** WorkRail's `verification` (its `verificationConfig`): one command line and a prompt. */
export const verificationConfigSchema = z.strictObject({
  command: z.string().min(1).max(1024).describe(
    "A command line, split into argv without a shell (pipes, `$vars`, globs are refused).",
  ),
  prompt: z.string().min(1).max(4096).optional(),
});

/** A step's verification command, compiled (one shape for both spellings). */
export interface CompiledVerify {
  /** The command (program first). */
  argv: string[];
  /** The folder, relative to the workspace (absent: the workspace itself). */
  cwd?: string;
  /** The step's timeout in seconds (absent: the user's). */
  timeoutSeconds?: number;
  /** The author's words about it. */
  prompt?: string;
}

/** A problem found compiling it (the shape of a workflow issue). */
interface VerifyIssue {
  /** Where, as a path into the file. */
  path: string;
  /** What is wrong. */
  message: string;
}

/** A step's verification as written: either spelling. */
export interface VerifyFields {
  /** Our block. */
  verify?: z.infer<typeof verifyBlockSchema>;
  /** WorkRail's. */
  verification?: z.infer<typeof verificationConfigSchema>;
}

/** Compiles a step's verification, with the issues that keep it from compiling. */
export function compileVerify(
  step: VerifyFields,
  path: string,
): { verify?: CompiledVerify; issues: VerifyIssue[] } {
  if (step.verify && step.verification) {
    return {
      issues: [{ path, message: "a step has one of `verify` and `verification`, not both" }],
    };
  }
  let out: CompiledVerify;
  if (step.verify) {
    const { run, cwd, timeoutSeconds, prompt } = step.verify;
    out = { argv: [...run] };
    if (cwd !== undefined && cwd !== ".") out.cwd = cwd.replaceAll("\\", "/");
    if (timeoutSeconds !== undefined) out.timeoutSeconds = timeoutSeconds;
    if (prompt !== undefined) out.prompt = prompt;
  } else if (step.verification) {
    const split = splitCommandLine(step.verification.command);
    if (!split.ok) {
      return { issues: [{ path: `${path}.verification.command`, message: split.message }] };
    }
    out = { argv: split.argv };
    if (step.verification.prompt !== undefined) out.prompt = step.verification.prompt;
  } else return { issues: [] };
  if (out.argv.some((a) => a.includes("{{"))) {
    return {
      issues: [{
        path: `${path}.${step.verify ? "verify.run" : "verification.command"}`,
        message:
          "a verification command takes no `{{placeholders}}`: context values never reach a command",
      }],
    };
  }
  return { verify: out, issues: [] };
}

/** The command as one line, with its folder: how prompts, messages and listings show it. */
export function describeCommand(verify: Pick<CompiledVerify, "argv" | "cwd">): string {
  return `\`${formatCommandLine(verify.argv)}\`${verify.cwd ? ` (in \`${verify.cwd}\`)` : ""}`;
}

/** The prompt section of a step with a verification command (part of the hash). */
export function verifySection(verify: CompiledVerify | undefined): string {
  if (!verify) return "";
  return `\n\n## Verification\n${describeCommand(verify)} must pass before this step is done.${
    verify.prompt ? ` ${verify.prompt}` : ""
  } Run it yourself and make it pass before acknowledging. When the user has allowed this command for the workspace, waymark runs it again as you acknowledge and records the result: a failure blocks the step. Otherwise the acknowledgement says so, and your notes must report the command's result.`;
}
