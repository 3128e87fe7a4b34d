/**
 * What a new, resumed, cleared or compacted host session is told: the workspace's open runs
 * (most recent first, at most three), each with the workflow, the pending step and how to take
 * it up (a fresh `stateToken` to rehydrate with; the run id for `resume_session`). Nothing at
 * all when there is none. The text goes into the model's context, so it is short and says to
 * take a run up only when the user's request is about it.
 * @module
 */
import { type Keyring, mintToken } from "../../engine/access/tokens.ts";
import { runLabel } from "../../engine/model/ids.ts";
import type { OpenRun, OpenRuns } from "./open_runs.ts";

/** Runs shown at most. */
export const SHOWN_RUNS = 3;
/** Characters of a title, goal or step title shown. */
const FIELD_CHARS = 100;

/** `text` on one line, without control characters, cut to {@linkcode FIELD_CHARS}. */
function field(text: string): string {
  // deno-lint-ignore no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").replace(/\s+/g, " ")
    .trim();
  return flat.length > FIELD_CHARS ? `${flat.slice(0, FIELD_CHARS - 1)}…` : flat;
}

function runLines(run: OpenRun, at: { index: number; keyring: Keyring | null }): string[] {
  const about = run.goal ?? run.title;
  const step = run.pendingTitle
    ? `\`${run.pendingStepId}\` "${field(run.pendingTitle)}"`
    : `\`${run.pendingStepId}\``;
  const updated = `${run.updatedAt.slice(0, 16).replace("T", " ")} UTC`;
  const lines = [
    `${at.index}. ${runLabel(run.runId)} ${run.workflowId}${about ? ` "${field(about)}"` : ""}`,
    `   pending: step ${step}; updated ${updated}`,
  ];
  if (run.corrupt) {
    lines.push(
      "   its session failed an integrity check, so waymark refuses to advance it (`waymark doctor` says why)",
    );
  } else if (at.keyring) {
    const stateToken = mintToken(at.keyring, {
      kind: "state",
      runId: run.runId,
      nodeId: run.tipNodeId,
    });
    lines.push(`   continue_workflow {"stateToken": "${stateToken}"}`);
  } else {
    lines.push(`   resume_session {"query": "${runLabel(run.runId)}"}`);
  }
  return lines;
}

/** The text for the open runs, or `""` when there are none. */
export function sessionStartText(found: OpenRuns, keyring: Keyring | null): string {
  if (found.runs.length === 0) return "";
  const count = found.runs.length === 1 ? "an open workflow run" : "open workflow runs";
  const lines = [
    `waymark: ${count} in this workspace${found.runs.length > 1 ? ", most recent first" : ""}. ` +
    "Take one up only if the user's request is about it: call continue_workflow with its " +
    "stateToken alone (no ackToken), which returns the pending step, a recap and fresh tokens " +
    "and writes nothing; if a token is refused, resume_session with the run id gives fresh ones.",
    ...found.runs.flatMap((run, i) => runLines(run, { index: i + 1, keyring })),
  ];
  if (found.more) lines.push("More open runs: resume_session {} lists them.");
  return `${lines.join("\n")}\n`;
}
