/**
 * Whether a step's verification command runs, decided purely from the user's policy: running
 * commands is the user's privilege, never a workflow's. Off by default; enabled per workspace
 * folder in `$WAYMARK_HOME/config.json` with an allowlist of command patterns
 * (`command_line.ts` says how they match), a timeout, an output cap and the environment
 * variables passed. The engine asks the {@linkcode VerificationRunner} port to run what is
 * allowed and turns what came back into evidence, a blocker or a warning; it runs nothing.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import {
  type CommandPattern,
  formatCommandLine,
  matchesPattern,
  parseCommandPattern,
} from "./command_line.ts";
import type { Evidence } from "./evidence.ts";
import type { Blocker } from "../answers/responses.ts";
import type { Warning } from "../workflow/catalog.ts";
import { type CompiledVerify, describeCommand } from "../workflow/verify_block.ts";
import type { VerificationNotice } from "../model/vocabulary.ts";

/** Defaults of a workspace's policy. */
export const VERIFICATION_DEFAULTS = {
  timeoutSeconds: 300,
  outputBytes: 16384,
  env: ["PATH", "HOME"],
} as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One workspace's policy as written in the config file. */
export const workspacePolicySchema = z.strictObject({
  allow: z.array(z.string().min(1).max(1024)).max(200).describe(
    "Command patterns: words matched one by one; a last word `*` allows any further words.",
  ),
  timeoutSeconds: z.number().int().min(1).max(3600).optional().describe(
    `The longest a command may run (default ${VERIFICATION_DEFAULTS.timeoutSeconds}); a step may ask for less.`,
  ),
  outputBytes: z.number().int().min(256).max(1048576).optional().describe(
    `Bytes kept of the end of each of stdout and stderr (default ${VERIFICATION_DEFAULTS.outputBytes}).`,
  ),
  env: z.array(z.string().regex(ENV_NAME, "is not an environment variable name")).max(100)
    .optional().describe(
      `The environment variables passed, from waymark's own (default ${
        VERIFICATION_DEFAULTS.env.join(", ")
      }); nothing else is.`,
    ),
});

/** The `verification` section of the config file. */
export const verificationSettingsSchema = z.strictObject({
  workspaces: z.record(z.string().min(1), workspacePolicySchema).describe(
    "Absolute workspace folders (a folder's subfolders included) and what may run there.",
  ),
  maxConcurrent: z.int().min(1).max(256).optional().describe(
    "Commands one server runs at once (default: the machine's cores); the rest wait their turn.",
  ),
});

/** One workspace's policy, parsed. */
export interface WorkspacePolicy {
  /** The folder (absolute, normalised by the config reader). */
  folder: string;
  /** The patterns, parsed. */
  allow: CommandPattern[];
  /** Seconds. */
  timeoutSeconds: number;
  /** Bytes kept of each stream's end. */
  outputBytes: number;
  /** Variable names passed. */
  env: string[];
}

/** The user's verification policy: the workspaces where commands may run. */
export interface VerificationPolicy {
  /** Workspaces, each with its allowlist. */
  workspaces: WorkspacePolicy[];
  /** Commands one server runs at once; absent, the runner's default (the machine's cores). */
  maxConcurrent?: number;
}

/** A command waiting for its turn: how many are ahead of it, and how many run at once. */
export interface VerificationWait {
  /** Commands waiting before this one (0: it runs next). */
  ahead: number;
  /** Commands running at once, at most. */
  limit: number;
}

/** The policy of a parsed config section, or what is wrong with a pattern. */
export function parsePolicy(
  section: z.infer<typeof verificationSettingsSchema>,
  folderOf: (key: string) => string,
): { ok: true; policy: VerificationPolicy } | { ok: false; message: string } {
  const workspaces: WorkspacePolicy[] = [];
  for (const [key, w] of Object.entries(section.workspaces)) {
    const allow: CommandPattern[] = [];
    for (const [i, source] of w.allow.entries()) {
      const parsed = parseCommandPattern(source);
      if (!parsed.ok) {
        return {
          ok: false,
          message: `verification.workspaces[${JSON.stringify(key)}].allow[${i}] (${
            JSON.stringify(source)
          }): ${parsed.message}`,
        };
      }
      allow.push(parsed.pattern);
    }
    workspaces.push({
      folder: folderOf(key),
      allow,
      timeoutSeconds: w.timeoutSeconds ?? VERIFICATION_DEFAULTS.timeoutSeconds,
      outputBytes: w.outputBytes ?? VERIFICATION_DEFAULTS.outputBytes,
      env: [...(w.env ?? VERIFICATION_DEFAULTS.env)],
    });
  }
  const max = section.maxConcurrent;
  return {
    ok: true,
    policy: max === undefined ? { workspaces } : { workspaces, maxConcurrent: max },
  };
}

/** Whether `path` is `folder` or inside it (both absolute and normalised; `/` or `\`). */
function inside(path: string, folder: string): boolean {
  const trim = (p: string) => p.length > 1 ? p.replace(/[/\\]+$/, "") : p;
  const [p, f] = [trim(path), trim(folder)];
  return p === f || (p.startsWith(f) && /[/\\]/.test(p[f.length] ?? "")) ||
    (/[/\\]$/.test(f) && p.startsWith(f));
}

/** The policy of the configured folder nearest around `workspace`, or `null`. */
export function workspacePolicy(
  policy: VerificationPolicy,
  workspace: string,
): WorkspacePolicy | null {
  const around = policy.workspaces.filter((w) => inside(workspace, w.folder));
  return around.sort((a, b) => b.folder.length - a.folder.length)[0] ?? null;
}

/** What the server is asked to run. */
export interface VerificationRequest {
  /** The caller's workspace folder (absolute). */
  workspace: string;
  /** The folder to run in, relative to the workspace (`null`: the workspace). */
  cwd: string | null;
  /** The command. */
  argv: string[];
  /** Kill it (and its process group) after this long. */
  timeoutMs: number;
  /** Bytes kept of the end of each of stdout and stderr. */
  outputBytes: number;
  /** The environment variables passed (their values from the server's environment). */
  env: string[];
}

/** How a run went, as the runner observed it; it never throws. */
export interface VerificationRun {
  /** Exit code, or `null` when it did not exit by itself (killed, or never started). */
  exitCode: number | null;
  /** The signal that ended it, or `null`. */
  signal: string | null;
  /** Whether the runner killed it at the timeout. */
  timedOut: boolean;
  /** Why it could not start (a missing program, a folder outside the workspace), or `null`. */
  error: string | null;
  /** Milliseconds from start to end, measured by the runner. */
  durationMs: number;
  /** The end of stdout and stderr, each at most the requested bytes. */
  stdoutTail: string;
  /** See `stdoutTail`. */
  stderrTail: string;
  /** How many bytes each stream wrote in all. */
  outputBytes: { stdout: number; stderr: number };
  /** `git rev-parse HEAD` in the workspace, or `null` (not a git repository). */
  gitHead: string | null;
  /** Whether `git status --porcelain` listed anything, or `null`. */
  gitDirty: boolean | null;
}

/** What the engine decided for a step's command. */
export type VerificationPlan =
  | { kind: "run"; request: VerificationRequest }
  | { kind: "skip"; evidence: Evidence; warning: Warning & { code: VerificationNotice } };

function skipped(
  verify: CompiledVerify,
  at: { verdict: "not_allowed" | "unavailable"; reason: string },
): Evidence {
  return {
    verdict: at.verdict,
    command: verify.argv,
    commandLine: formatCommandLine(verify.argv),
    cwd: verify.cwd ?? null,
    reason: at.reason,
    exitCode: null,
    signal: null,
    timedOut: false,
    timeoutSeconds: null,
    durationMs: null,
    stdoutTail: "",
    stderrTail: "",
    outputBytes: { stdout: 0, stderr: 0 },
    truncated: false,
    gitHead: null,
    gitDirty: null,
  };
}

function skip(
  verify: CompiledVerify,
  notice: VerificationNotice,
  reason: string,
): VerificationPlan {
  const verdict = notice === "VERIFICATION_NOT_ALLOWED" ? "not_allowed" : "unavailable";
  return {
    kind: "skip",
    evidence: skipped(verify, { verdict, reason }),
    warning: {
      code: notice,
      message: `${describeCommand(verify)} was not run by waymark: ${reason}`,
    },
  };
}

/**
 * Whether and how a step's command runs for a caller in `workspace` (`null`: no folder known),
 * under `policy` (`null`: this host has no runner).
 */
export function planVerification(
  verify: CompiledVerify,
  at: { policy: VerificationPolicy | null; workspace: string | null },
): VerificationPlan {
  const prose = "run it yourself and report its result in your notes.";
  if (at.policy === null) {
    return skip(verify, "VERIFICATION_UNAVAILABLE", `this host cannot run commands; ${prose}`);
  }
  if (at.workspace === null) {
    return skip(
      verify,
      "VERIFICATION_UNAVAILABLE",
      `no workspace folder is known for this connection (the client's roots are not local folders); ${prose}`,
    );
  }
  const policy = workspacePolicy(at.policy, at.workspace);
  const snippet = JSON.stringify({
    verification: {
      workspaces: { [policy?.folder ?? at.workspace]: { allow: [formatCommandLine(verify.argv)] } },
    },
  });
  if (!policy || !policy.allow.some((p) => matchesPattern(p, verify.argv))) {
    const why = policy
      ? `no command pattern the user allowed for ${policy.folder} matches it`
      : `the user has not enabled verification for ${at.workspace}`;
    return skip(
      verify,
      "VERIFICATION_NOT_ALLOWED",
      `${why}; ${prose} To let waymark run it, the user adds it to $WAYMARK_HOME/config.json, e.g. ${snippet}, and restarts waymark.`,
    );
  }
  const seconds = Math.min(verify.timeoutSeconds ?? policy.timeoutSeconds, policy.timeoutSeconds);
  return {
    kind: "run",
    request: {
      workspace: at.workspace,
      cwd: verify.cwd ?? null,
      argv: verify.argv,
      timeoutMs: seconds * 1000,
      outputBytes: policy.outputBytes,
      env: policy.env,
    },
  };
}

/** The evidence of a run: the request and what the runner saw, with the verdict. */
export function evidenceOf(request: VerificationRequest, run: VerificationRun): Evidence {
  const verdict = run.error !== null
    ? "error"
    : run.timedOut
    ? "timed_out"
    : run.exitCode === 0
    ? "passed"
    : "failed";
  const bytes = new TextEncoder();
  return {
    verdict,
    command: request.argv,
    commandLine: formatCommandLine(request.argv),
    cwd: request.cwd,
    reason: run.error,
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    timeoutSeconds: Math.round(request.timeoutMs / 1000),
    durationMs: Math.round(run.durationMs),
    stdoutTail: run.stdoutTail,
    stderrTail: run.stderrTail,
    outputBytes: run.outputBytes,
    truncated: bytes.encode(run.stdoutTail).length < run.outputBytes.stdout ||
      bytes.encode(run.stderrTail).length < run.outputBytes.stderr,
    gitHead: run.gitHead,
    gitDirty: run.gitDirty,
  };
}

/** The end of `text` in at most `bytes` UTF-8 bytes, on a character boundary, marking the cut. */
export function tailBytes(text: string, bytes: number): string {
  const encoder = new TextEncoder();
  if (encoder.encode(text).length <= bytes) return text;
  const chars = [...text];
  let used = 3; // "…"
  let start = chars.length;
  while (start > 0) {
    const size = encoder.encode(chars[start - 1]!).length;
    if (used + size > bytes) break;
    used += size;
    start--;
  }
  return `…${chars.slice(start).join("")}`;
}

/** Bytes of output a blocker's message carries (its message holds at most 512). */
const MESSAGE_TAIL_BYTES = 320;

/** A command line cut to its first 120 characters, so a long one leaves room for the output. */
function shortLine(line: string): string {
  const chars = [...line];
  return chars.length <= 120 ? line : `${chars.slice(0, 119).join("")}…`;
}

/** Why a run that did not pass blocks the step: its verdict, then the end of its output. */
export function failureBlocker(stepId: string, evidence: Evidence): Blocker {
  const how = evidence.verdict === "timed_out"
    ? `timed out after ${evidence.timeoutSeconds} s and was killed`
    : evidence.verdict === "error"
    ? `could not run (${evidence.reason})`
    : `exited with ${evidence.exitCode ?? `signal ${evidence.signal}`}`;
  const output = [evidence.stdoutTail.trimEnd(), evidence.stderrTail.trimEnd()]
    .filter((t) => t !== "").join("\n");
  const tail = output ? `: ${tailBytes(output, MESSAGE_TAIL_BYTES)}` : "";
  return {
    code: "VERIFICATION_FAILED",
    pointer: { kind: "workflow_step", stepId },
    message: `\`${shortLine(evidence.commandLine)}\` ${how}${tail}`,
    suggestedFix: evidence.verdict === "error"
      ? "The command could not start in this workspace: tell the user (their config allows it, so its program or folder is missing), then acknowledge again with the new ackToken."
      : `Fix what the output shows and run \`${evidence.commandLine}\` yourself until it passes; then acknowledge again with the new ackToken (waymark runs it again). The full output tails are in \`verification\` and on the blocked attempt's node.`,
  };
}
