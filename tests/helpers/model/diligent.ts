/**
 * The scripted model behind the host tests: a diligent agent that decides its next move from the
 * conversation the host sends, and nothing else. It reads the user's task, waymark's answers as
 * the host passed them on (JSON or text, see `answer_view.ts`) and the results of the host's own
 * tools, and calls waymark's tools with what each pending step asks for: the context keys, the
 * notes lines, the assessments and the output contract's artifact (the same reading of a step as
 * the MCP walk's agent, `mcp_agent.ts`). A parallel step's children go to subagents through the
 * host's delegation tool; a failed verification is fixed with the host's shell tool when its
 * output says how (a `FIX: <command>` line).
 *
 * It is stateless: every decision is a function of the transcript, so a new session, a resumed
 * one, a compacted one and a subagent are all just other transcripts.
 * @module
 */
import { ASSESSMENT_ARTIFACT_KIND } from "../../../engine/gates/assessments.ts";
import { readDescription } from "../mcp_agent.ts";
import {
  describedText,
  type PendingView,
  readStep,
  resumeTokens,
  type StepView,
} from "./answer_view.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** One tool call the model made. */
export interface Call {
  /** The call's id (the host's). */
  id: string;
  /** The tool's name without the host's prefix (`start_workflow`, or `delegate`, `shell`). */
  name: string;
  /** Its arguments. */
  input: Json;
}

/** A conversation as the host sent it, in the host-neutral shape the agent reads. */
export type Turn =
  | { role: "user"; text: string }
  | { role: "model"; text: string; calls: Call[] }
  | { role: "results"; results: { id: string; text: string }[] };

/** The next move: tool calls, or a final text. */
export type Move = { calls: Omit<Call, "id">[] } | { text: string };

/** What the host offers besides waymark's tools. */
export interface HostTools {
  /** Whether the host has a subagent tool (`delegate` moves). */
  delegate: boolean;
  /** Whether the host has a shell tool (`shell` moves). */
  shell: boolean;
}

/** A bound on calls per conversation, so a confused run ends instead of looping. */
const MAX_CALLS = 400;

/** The last line the agent says when a run ended (tests look for it). */
export const DONE = "WAYMARK-RUN-COMPLETE";
/** What the agent says when it stopped on purpose before the end (the task said how far). */
export const PAUSED = "WAYMARK-RUN-PAUSED";

interface Exchange {
  call: Call;
  result?: string;
}

function exchanges(transcript: readonly Turn[]): Exchange[] {
  const out: Exchange[] = [];
  const byId = new Map<string, Exchange>();
  for (const turn of transcript) {
    if (turn.role === "model") {
      for (const call of turn.calls) {
        const e = { call };
        out.push(e);
        byId.set(call.id, e);
      }
    } else if (turn.role === "results") {
      for (const r of turn.results) {
        const e = byId.get(r.id);
        if (e) e.result = r.text;
      }
    }
  }
  return out;
}

/** Everything the user (and the host on the user's side: hooks, reminders) said. */
function userText(transcript: readonly Turn[]): string {
  return transcript.filter((t) => t.role === "user").map((t) => t.text).join("\n");
}

const WAYMARK = new Set([
  "list_workflows",
  "inspect_workflow",
  "start_workflow",
  "continue_workflow",
  "resume_session",
]);
const STEP_TOOLS = new Set(["start_workflow", "continue_workflow"]);

/** Decides the next move from a conversation. */
export function nextMove(transcript: readonly Turn[], host: HostTools): Move {
  const all = exchanges(transcript);
  if (all.length >= MAX_CALLS) return { text: `Giving up after ${MAX_CALLS} calls.` };
  const task = userText(transcript);
  const waymark = all.filter((e) => WAYMARK.has(e.call.name) && e.result !== undefined);
  const last = waymark.at(-1);
  if (!last) return firstMove(task);
  switch (last.call.name) {
    case "list_workflows": {
      // the user named it: inspect it even when the listing leaves it out (the server decides)
      const id = nextWorkflow(task, waymark)!;
      return { calls: [{ name: "inspect_workflow", input: { workflowId: id } }] };
    }
    case "inspect_workflow":
      return {
        calls: [{
          name: "start_workflow",
          input: { workflowId: last.call.input.workflowId, goal: goalOf(task) },
        }],
      };
    case "resume_session": {
      const token = resumeTokens(last.result!)[0];
      if (!token) return { text: "There is no open run to resume." };
      return { calls: [{ name: "continue_workflow", input: { stateToken: token } }] };
    }
  }
  return stepMove({ all, waymark, transcript, host, task });
}

function firstMove(task: string): Move {
  const delegation = task.match(/(dlg1_[A-Za-z0-9_-]+)/)?.[1];
  if (delegation) {
    return { calls: [{ name: "start_workflow", input: { delegationToken: delegation } }] };
  }
  if (wantedWorkflows(task).length) return { calls: [{ name: "list_workflows", input: {} }] };
  // a host that hands the agent its place back (a hook) puts the call to make in context
  const token = task.match(/continue_workflow \{"stateToken": "(st1_[A-Za-z0-9_-]+)"\}/)?.[1] ??
    task.match(/(st1_[A-Za-z0-9_-]+)/)?.[1];
  if (token) return { calls: [{ name: "continue_workflow", input: { stateToken: token } }] };
  if (/\bresume\b|pick up|where (?:I|we) left off/i.test(task)) {
    return { calls: [{ name: "resume_session", input: {} }] };
  }
  return { text: "I have no waymark task here." };
}

/** A workflow id in backquotes. */
const WORKFLOW_ID = /`([a-z][\w-]*\.[\w-]+)`/g;

/**
 * The workflows the task names, in order: ``run the waymark workflow `id` `` names one, ``run
 * the waymark workflows `a`, `b` and `c` `` several, run one after another in one conversation.
 */
function wantedWorkflows(task: string): string[] {
  const list = task.match(/workflows? ((?:`[a-z][\w-]*\.[\w-]+`(?:,? (?:and )?)?)+)/)?.[1];
  return list ? [...list.matchAll(WORKFLOW_ID)].map((m) => m[1]!) : [];
}

/** The first workflow the task names that this conversation has not started yet. */
function nextWorkflow(task: string, waymark: readonly Exchange[]): string | undefined {
  const started = new Set(
    waymark.filter((e) => e.call.name === "start_workflow").map((e) => e.call.input.workflowId),
  );
  return wantedWorkflows(task).find((id) => !started.has(id));
}

function goalOf(task: string): string {
  return task.match(/Goal: (.*)/)?.[1]?.trim() ?? "Scripted run through a real host";
}

/**
 * How many acknowledgements the latest instruction allows before pausing: a user turn saying
 * ``stop after 2 steps`` sets it (counted from that turn); a later one saying ``carry on`` lifts it.
 */
function stepBudget(transcript: readonly Turn[]): { steps: number; from: number } | undefined {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const turn = transcript[i]!;
    if (turn.role !== "user") continue;
    if (/\bcarry on\b/i.test(turn.text)) return undefined;
    const n = turn.text.match(/stop after (\d+) steps?/)?.[1];
    if (n !== undefined) return { steps: Number(n), from: i };
  }
  return undefined;
}

interface StepState {
  all: Exchange[];
  waymark: Exchange[];
  transcript: readonly Turn[];
  host: HostTools;
  task: string;
}

function stepMove({ all, waymark, transcript, host, task }: StepState): Move {
  const last = waymark.at(-1)!;
  const answer = readStep(last.result!);
  if (answer.kind === "error") return { text: `waymark answered ${answer.errorCode}; stopping.` };
  if (answer.isComplete || !answer.pending) {
    const next = nextWorkflow(task, waymark);
    if (next) return { calls: [{ name: "inspect_workflow", input: { workflowId: next } }] };
    return { text: `The run is complete.\n${DONE}` };
  }
  const budget = stepBudget(transcript);
  if (budget && acksAfter(transcript, budget.from) >= budget.steps) {
    return { text: `Stopping here as asked, at step ${answer.pending.stepId}.\n${PAUSED}` };
  }
  const after = all.slice(all.indexOf(last) + 1);
  const open = answer.delegations.filter((d) => d.status === "open");
  if (open.length > 0 && host.delegate && !after.some((e) => e.call.name === "delegate")) {
    return {
      calls: open.map((d) => ({
        name: "delegate",
        input: { description: "Drive a waymark child run", prompt: d.instruction },
      })),
    };
  }
  if (answer.kind === "blocked") {
    const blocked = blockedMove(answer, after, host);
    if (blocked) return blocked;
  }
  const repeatedBlock = answer.kind === "blocked" &&
    waymark.slice(-4).filter((e) => readStep(e.result!).kind === "blocked").length >= 3;
  if (repeatedBlock) return { text: `Blocked again at ${answer.pending.stepId}; stopping.` };
  return { calls: [{ name: "continue_workflow", input: ackFor(answer, thisRun(waymark)) }] };
}

/** The exchanges of the run the conversation is on: from its workflow's inspection on. */
function thisRun(waymark: Exchange[]): Exchange[] {
  const start = waymark.findLastIndex((e) => e.call.name === "inspect_workflow");
  return start < 0 ? waymark : waymark.slice(start);
}

/** Acknowledgements the model sent after a turn. */
function acksAfter(transcript: readonly Turn[], from: number): number {
  return transcript.slice(from).flatMap((t) => t.role === "model" ? t.calls : [])
    .filter((c) => c.name === "continue_workflow" && c.input.ackToken).length;
}

/** On a failed verification, run the fix its output names (once per blocked answer). */
function blockedMove(answer: StepView, after: Exchange[], host: HostTools): Move | null {
  if (!answer.blockers.some((b) => b.code === "VERIFICATION_FAILED")) return null;
  const fix = answer.verificationOutput.match(/FIX: (.+)/)?.[1];
  if (!fix || !host.shell || after.some((e) => e.call.name === "shell")) return null;
  return { calls: [{ name: "shell", input: { command: fix, description: "Fix the check" } }] };
}

/** Context keys already given in this conversation's acknowledgements. */
function decided(waymark: Exchange[]): Json {
  const out: Json = {};
  for (const e of waymark) {
    if (STEP_TOOLS.has(e.call.name)) Object.assign(out, e.call.input.context ?? {});
  }
  return out;
}

/** The acknowledgement a diligent agent sends for the pending step. */
function ackFor(answer: StepView, waymark: Exchange[]): Json {
  const pending = answer.pending!;
  const inspect = waymark.findLast((e) => e.call.name === "inspect_workflow");
  const reading = readDescription(inspect ? describedText(inspect.result!) : "");
  const already = decided(waymark);
  const context: Json = {};
  const wanted = new Set([...pending.contextKeys, ...pending.userKeys]);
  for (const key of reading.domains.keys()) {
    if (pending.prompt.includes(`\`${key}\``)) wanted.add(key);
  }
  for (const key of wanted) {
    if (key in already) continue;
    context[key] = reading.domains.get(key)?.[0] ?? `the user's answer for ${key}`;
  }
  const lines = pending.noteLines;
  const notes = [`Did ${pending.title}.`, ...lines].join("\n");
  const artifacts = [...assessed(pending), ...contract(pending)];
  if (answer.continueToken) {
    return { continueToken: answer.continueToken, output: { notesMarkdown: notes } };
  }
  return {
    stateToken: answer.stateToken,
    ackToken: answer.ackToken,
    ...(Object.keys(context).length ? { context } : {}),
    output: { notesMarkdown: notes, ...(artifacts.length ? { artifacts } : {}) },
  };
}

/** One assessment artifact per assessment, every dimension at its first level that keeps no follow-up. */
function assessed(pending: PendingView): Json[] {
  const blocking = pending.followUps;
  return pending.assessments.map((a) => {
    const blocks = (level: string) =>
      blocking.some((b) =>
        b.level === level && (b.assessmentId === "*" || b.assessmentId === a.assessmentId)
      );
    const dimensions = Object.fromEntries(
      a.dimensions.map((d) => [d.id, d.levels.find((l) => !blocks(l)) ?? d.levels[0]!]),
    );
    return { kind: ASSESSMENT_ARTIFACT_KIND, assessmentId: a.assessmentId, dimensions };
  });
}

/** The contract's example, with a loop decision that runs a loop twice. */
function contract(pending: PendingView): Json[] {
  if (!pending.contractExample) return [];
  const artifact = { ...pending.contractExample };
  if (artifact.kind === "wr.loop_control") {
    artifact.decision = (pending.loopIteration ?? 2) < 2 ? "continue" : "stop";
  }
  return [artifact];
}
