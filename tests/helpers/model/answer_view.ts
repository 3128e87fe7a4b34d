/**
 * What a scripted model makes of one waymark answer as a host hands it over: the JSON of
 * `structuredContent` (Claude Code) or the text content (Gemini CLI). Both readings give the
 * same view, so one agent drives a run through either rendering, and a rendering that drops
 * something the agent needs makes the run fail.
 * @module
 */

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** One assessment the pending step asks for. */
export interface AssessmentAsk {
  /** Its id. */
  assessmentId: string;
  /** Its dimensions with their levels. */
  dimensions: { id: string; levels: string[] }[];
}

/** One child run of a parallel step. */
export interface ChildView {
  /** `open`, `completed` or `aborted`. */
  status: string;
  /** The token a subagent starts it with. */
  delegationToken: string;
  /** The ready-made task text. */
  instruction: string;
}

/** The pending step as the agent reads it. */
export interface PendingView {
  /** The step id. */
  stepId: string;
  /** Its title. */
  title: string;
  /** The step's prompt. */
  prompt: string;
  /** Whether notes may be left out. */
  notesOptional: boolean;
  /** The output contract's example artifact. */
  contractExample?: Json;
  /** The assessments to rate. */
  assessments: AssessmentAsk[];
  /** The iteration of the innermost loop. */
  loopIteration?: number;
  /** Context keys the acknowledgement must set. */
  contextKeys: string[];
  /** Context keys only the user can supply. */
  userKeys: string[];
  /** Lines the notes must hold (a label's template filled in, or text to mention). */
  noteLines: string[];
  /** Ratings that keep the step pending (`*`: any assessment). */
  followUps: { assessmentId: string; level: string }[];
}

/** What a step's gates ask for, where an answer carries them. */
type Gates = Pick<PendingView, "contextKeys" | "userKeys" | "noteLines" | "followUps">;

/** The gates from `pending`'s fields (the prose is for people; an agent reads these). */
function jsonGates(p: Json): Gates {
  return {
    contextKeys: p.requiredContext ?? [],
    userKeys: p.userDependencies?.map((d: Json) => d.key) ?? [],
    noteLines: (p.notesRules ?? []).map((n: Json) => n.label ? `${n.label} x` : n.contains ?? "")
      .filter(Boolean),
    followUps: (p.followUps ?? []).map((f: Json) => ({
      assessmentId: f.assessmentId ?? "*",
      level: f.level,
    })),
  };
}

const ticked = (s: string) => [...s.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The gates from a text answer's gate lines (`context: set …`, `notes: …`). */
function textGates(footer: string): Gates {
  const set = footer.match(/^context: set (.*)$/m)?.[1];
  const users = [...footer.matchAll(/^context from the user: `([^`]+)`/gm)].map((m) => m[1]!);
  const notes = [...footer.matchAll(/^notes: (?:a line `(.*?) …`|`(.*?)`)/gm)]
    .map((m) => m[1] !== undefined ? `${m[1]} x` : m[2]!);
  const follow = [...footer.matchAll(/^follow-up: rating `([^`]+)`(?: in (\S+))?/gm)]
    .map((m) => ({ assessmentId: m[2] ?? "*", level: m[1]! }));
  return {
    contextKeys: set ? ticked(set) : [],
    userKeys: users,
    noteLines: notes,
    followUps: follow,
  };
}

/** A waymark execution answer (start, continue, rehydrate), read. */
export interface StepView {
  /** `ok`, `blocked` or `error`. */
  kind: "ok" | "blocked" | "error";
  /** The answer's state token. */
  stateToken?: string;
  /** The ack token for the pending step. */
  ackToken?: string;
  /** Whether the run is complete. */
  isComplete: boolean;
  /** The pending step. */
  pending: PendingView | null;
  /** Blocker codes, with their messages. */
  blockers: { code: string; message: string }[];
  /** A parallel step's child runs. */
  delegations: ChildView[];
  /** The error code, when the call failed. */
  errorCode?: string;
  /** The verification output's tails, when the answer has one. */
  verificationOutput: string;
  /** WorkRail's one token for the next call (its answers carry no state/ack pair). */
  continueToken?: string;
}

/** Parses an answer's text as the JSON a host passed on, or null when it is not JSON. */
export function asJson(text: string): Json | null {
  const t = text.trim();
  if (!t.startsWith("{")) return null;
  try {
    return JSON.parse(t);
  } catch {
    return null;
  }
}

/**
 * The answer without a host's wrapper: Gemini CLI puts MCP text inside
 * `<untrusted_context>…</untrusted_context>`.
 */
export function unwrap(text: string): string {
  const m = text.trim().match(/^<(\w+)>\n?([\s\S]*?)\n?<\/\1>$/);
  return m ? m[2]! : text;
}

/** Reads an execution answer (JSON or text; waymark's, or WorkRail's for the bench's comparison). */
export function readStep(text: string): StepView {
  const json = asJson(text);
  if (json && typeof json.code === "string" && json.retry) return errorView(json.code);
  if (json) return stepFromJson(json);
  const continueToken = grab(text, /"continueToken":"(ct_[A-Za-z0-9_-]+)"/);
  return continueToken ? stepFromWorkRail(text, continueToken) : stepFromText(unwrap(text));
}

/** A WorkRail answer: the step between its USER and SYSTEM parts, a continueToken. */
function stepFromWorkRail(text: string, continueToken: string): StepView {
  const user = text.split(/-{9}\nSYSTEM\n-{9}/)[0]!;
  const stepId = grab(user, /<!-- stepId: (\S+) -->/) ?? "step";
  return {
    kind: "ok",
    isComplete: false,
    continueToken,
    pending: {
      stepId,
      title: grab(user, /^# (.*)$/m) ?? stepId,
      prompt: user,
      notesOptional: false,
      assessments: [],
      contextKeys: [],
      userKeys: [],
      noteLines: [],
      followUps: [],
    },
    blockers: [],
    delegations: [],
    verificationOutput: "",
  };
}

/** A failed call's view. */
function errorView(code: string): StepView {
  return {
    kind: "error",
    isComplete: false,
    pending: null,
    blockers: [],
    delegations: [],
    errorCode: code,
    verificationOutput: "",
  };
}

function stepFromJson(r: Json): StepView {
  if (r.error) return errorView(r.error.code);
  const p = r.pending;
  return {
    kind: r.kind === "blocked" ? "blocked" : "ok",
    stateToken: r.stateToken,
    ackToken: r.ackToken,
    isComplete: r.isComplete === true,
    pending: p
      ? {
        stepId: p.stepId,
        title: p.title,
        prompt: p.prompt,
        notesOptional: p.notesOptional === true,
        contractExample: p.outputContract?.example,
        assessments: (p.assessments ?? []).map((a: Json) => ({
          assessmentId: a.assessmentId,
          dimensions: a.dimensions.map((d: Json) => ({ id: d.id, levels: d.levels })),
        })),
        loopIteration: p.loop?.iteration,
        ...jsonGates(p),
      }
      : null,
    blockers: (r.blockers ?? []).map((b: Json) => ({ code: b.code, message: b.message })),
    delegations: (r.delegations ?? []).map((d: Json) => ({
      status: d.status,
      delegationToken: d.delegationToken,
      instruction: d.instruction,
    })),
    verificationOutput: r.verification
      ? `${r.verification.stdoutTail ?? ""}\n${r.verification.stderrTail ?? ""}`
      : "",
  };
}

/** The first capture of a pattern, or undefined. */
function grab(text: string, pattern: RegExp): string | undefined {
  return text.match(pattern)?.[1];
}

/** Where a text answer's footer (tokens and gates) starts: the older or the shorter rendering. */
function footerStart(text: string): number {
  const at = ["\n---\n", "\nThen continue_workflow with", "\nstateToken: "]
    .map((m) => text.indexOf(m)).filter((i) => i >= 0);
  return at.length ? Math.min(...at) : text.length;
}

/** The step's own prompt in a text answer: after the header lines, before the footer. */
function promptOfText(text: string, footerAt: number): string {
  const body = text.slice(0, footerAt);
  const start = body.indexOf("\n\n");
  return start < 0 ? body : body.slice(start + 2);
}

/** Assessments from the text's examples (`Artifact: \`{…}\`` in the prompt, `artifact: {…}`). */
function assessmentsOfText(text: string): AssessmentAsk[] {
  const out = new Map<string, AssessmentAsk>();
  const examples = /(?:Artifact: `|^artifact: )(\{"kind":"[\w.]+assessment".*\}\}?)/gm;
  for (const m of text.matchAll(examples)) {
    const a = JSON.parse(m[1]!.replace(/`$/, "").replaceAll(" (optional)", ""));
    out.set(a.assessmentId, {
      assessmentId: a.assessmentId,
      dimensions: Object.entries(a.dimensions as Record<string, string>).map(([id, v]) => ({
        id,
        levels: v.replace(/^<|>$/g, "").split(/ ?\| ?/),
      })),
    });
  }
  return [...out.values()];
}

/** The output contract's example in a text answer's footer, either rendering. */
function contractOfText(footer: string): Json | undefined {
  const old = grab(footer, /output\.artifacts: \[(.*)\] \(/);
  if (old) return JSON.parse(old);
  for (const m of footer.matchAll(/^artifact: (\{.*\}) \([\w.]+(?:, required)?\)$/gm)) {
    const artifact = JSON.parse(m[1]!);
    if (!/assessment$/.test(artifact.kind)) return artifact;
  }
  return undefined;
}

function stepFromText(text: string): StepView {
  const error = grab(text, /^Error ([A-Z_]+):/);
  if (error) return errorView(error);
  const at = footerStart(text);
  const footer = text.slice(at);
  const stepId = grab(text, /^Step `([^`]+)` of /m) ?? grab(text, /^# .* \(`([^`]+)`\)$/m);
  const prompt = promptOfText(text, at);
  const delegations: ChildView[] = [];
  for (const m of text.matchAll(/^- \[(\w+)\] \d+: .*\n(?: {2}Task: (.*)\n)?/gm)) {
    const instruction = m[2] ?? "";
    delegations.push({
      status: m[1]!,
      delegationToken: grab(instruction, /(dlg1_[A-Za-z0-9_-]+)/) ?? "",
      instruction,
    });
  }
  return {
    kind: text.startsWith("BLOCKED") ? "blocked" : "ok",
    stateToken: grab(footer, /stateToken: (st1_[A-Za-z0-9_-]+)/),
    ackToken: grab(footer, /ackToken: (ack1_[A-Za-z0-9_-]+)/),
    isComplete: !stepId && /^# .* complete$/m.test(text),
    pending: stepId
      ? {
        stepId,
        title: grab(text, /^# (.*?)(?: \(`[^`]+`\))?$/m) ?? stepId,
        prompt,
        notesOptional: /\(optional for this step\)|notesMarkdown \(optional\)/.test(footer),
        contractExample: contractOfText(footer),
        assessments: assessmentsOfText(text),
        loopIteration: Number(grab(text, /^Loop `[^`]+`: iteration (\d+)/m) ?? NaN) || undefined,
        ...textGates(footer),
      }
      : null,
    blockers: [...text.matchAll(/^- \[([A-Z_]+)\] \([^)]*\) (.*)$/gm)].map((m) => ({
      code: m[1]!,
      message: m[2]!,
    })),
    delegations,
    verificationOutput: text,
  };
}

/** The run tips a `resume_session` answer offers (state tokens of runs not complete, first first). */
export function resumeTokens(text: string): string[] {
  const json = asJson(text);
  if (json) {
    return (json.candidates ?? []).filter((c: Json) => !c.tip.isComplete && c.tip.pendingStepId)
      .map((c: Json) => c.tip.stateToken);
  }
  const out: string[] = [];
  for (const m of text.matchAll(/next: (\S+)\n\s+stateToken: (st1_[A-Za-z0-9_-]+)/g)) {
    if (m[1] !== "complete") out.push(m[2]!);
  }
  return out;
}

/** The description an `inspect_workflow` answer gives (the text itself when not JSON). */
export function describedText(text: string): string {
  const json = asJson(text);
  return json ? `${json.workflow?.description ?? ""}` : text;
}
