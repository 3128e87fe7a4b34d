/**
 * The scripted, diligent agent of `workflows try`: it answers a step from what `pending` shows it
 * (required keys, the user's keys answered as a user would, the notes rules' labels and texts,
 * assessment levels that fire no follow-up, the contract's example), and repairs a blocked answer
 * from the blocked answer alone (each blocker's message and the example payload, as written).
 * It never reads the compiled workflow. Pure.
 * @module
 */
import type { Blocker } from "../answers/responses.ts";
import type { PendingStep } from "../workflow/pending.ts";
import { lineLabel } from "../workflow/notes_rules.ts";

/** An acknowledgement as the agent sends it. */
export interface Answer {
  /** Context keys it sets. */
  context: Record<string, unknown>;
  /** Notes (absent: none sent). */
  notesMarkdown?: string;
  /** Artifacts. */
  artifacts: Record<string, unknown>[];
}

/** A blocked answer: its blockers and the example payload that would clear them. */
export interface BlockedAnswer {
  /** The blockers, ordered. */
  blockers: Blocker[];
  /** The example payload of the blocked answer. */
  example: {
    context?: Record<string, unknown>;
    output?: { notesMarkdown?: string; artifacts?: unknown[] };
  };
}

/** What the path wants the agent to choose where it has a choice. */
export interface Choices {
  /** The value a key takes on this path, when the path decides it. */
  valueOf(key: string): { value: unknown } | null;
  /** The loop-control decision for the innermost loop at this iteration. */
  loopDecision(loopId: string, iteration: number): "continue" | "stop";
}

/**
 * The lines a rule's words ask for: `line starting \`L:\`` (or `the line \`L: …\``) gives a line
 * `L: x`; other quoted text is mentioned as written; a default `must match /^L: …/` message gives
 * its label.
 */
export function linesFromMessage(message: string): string[] {
  const text = message.replace(/^Step `[^`]*`: /, "").replace(/^one of: /, "").split(" | ")[0]!
    .replace(/\.$/, "");
  const regex = /must match \/(.*)\/[a-z]*$/.exec(text);
  if (regex) {
    const label = lineLabel(regex[1]!);
    return label ? [`${label} x`] : [];
  }
  const quoted = [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  if (quoted.length === 0) return lengthBounds(text) ? [] : [text];
  return [quoted[0]!.endsWith(":") ? `${quoted[0]} x` : quoted[0]!];
}

/** The length a rule's words ask for: `a..b` (or `a-b`, `a to b`) characters, `at least a`, `at most b`. */
function lengthBounds(message: string): { min: number; max: number } | null {
  const range = /(\d+) ?(?:\.\.|-|–| to ) ?(\d+|∞) characters/.exec(message);
  if (range) return { min: Number(range[1]), max: range[2] === "∞" ? Infinity : Number(range[2]) };
  const least = /at least (\d+) characters/i.exec(message);
  const most = /at most (\d+) characters/i.exec(message);
  if (!least && !most) return null;
  return { min: least ? Number(least[1]) : 0, max: most ? Number(most[1]) : Infinity };
}

function fitLength(notes: string, messages: readonly string[]): string {
  let out = notes;
  for (const m of messages) {
    const b = lengthBounds(m);
    if (!b) continue;
    while (out.length < b.min) out += " More detail.";
    if (out.length > b.max) out = out.slice(0, b.max);
  }
  return out;
}

/** Notes that meet what `pending.notesRules` announces, read as data first, then as words. */
export function notesFromPending(pending: PendingStep): string {
  const lines = [`Did ${pending.title}.`];
  for (const rule of pending.notesRules ?? []) {
    if (rule.label) lines.push(`${rule.label} x`);
    else if (rule.contains) lines.push(rule.contains);
    else lines.push(...linesFromMessage(rule.message));
  }
  return fitLength(lines.join("\n"), (pending.notesRules ?? []).map((r) => r.message));
}

function blockingLevels(pending: PendingStep, assessmentId: string): Set<string> {
  return new Set(
    (pending.followUps ?? []).filter((f) =>
      f.assessmentId === undefined || f.assessmentId === assessmentId
    ).map((f) => f.level),
  );
}

function assess(pending: PendingStep, choices: Choices): Record<string, unknown>[] {
  return (pending.assessments ?? []).map((a) => {
    const blocking = blockingLevels(pending, a.assessmentId);
    const dims = Object.fromEntries(a.dimensions.map((d) => {
      const wanted = choices.valueOf(`assessments.${a.assessmentId}.${d.id}`)?.value;
      const passing = d.levels.filter((l) => !blocking.has(l));
      const level = typeof wanted === "string" && passing.includes(wanted)
        ? wanted
        : passing[0] ?? d.levels[0]!;
      return [d.id, level];
    }));
    return { kind: "wr.assessment", assessmentId: a.assessmentId, dimensions: dims };
  });
}

function contractArtifact(pending: PendingStep, choices: Choices): Record<string, unknown>[] {
  if (!pending.outputContract) return [];
  const artifact = { ...pending.outputContract.example };
  if (artifact.kind === "wr.loop_control" && pending.loop) {
    artifact.decision = choices.loopDecision(pending.loop.loopId, pending.loop.iteration);
  }
  const probe = /^capability-probe-(.+)$/.exec(pending.stepId);
  if (artifact.kind === "wr.capability_observation" && probe) {
    artifact.capability = probe[1];
    artifact.status = "available";
  }
  return [artifact];
}

/** The answer to a pending step: what it asks for, from `pending` and the path's choices. */
export function answerPending(
  pending: PendingStep,
  options: { choices: Choices; context: Record<string, unknown> },
): Answer {
  const { choices } = options;
  const context: Record<string, unknown> = {};
  const keys = [
    ...(pending.requiredContext ?? []),
    ...(pending.userDependencies ?? []).map((d) => d.key),
  ];
  for (const key of keys) {
    const chosen = choices.valueOf(key);
    if (chosen) context[key] = chosen.value;
    else if (options.context[key] === undefined) context[key] = `the answer for ${key}`;
  }
  return {
    context,
    notesMarkdown: notesFromPending(pending),
    artifacts: [...assess(pending, choices), ...contractArtifact(pending, choices)],
  };
}

/** The first option of an example's `<one of: a, b>` placeholder, else the value as written. */
function asWritten(value: unknown): unknown {
  const m = typeof value === "string" ? /^<one of: ([^,>]+)/.exec(value) : null;
  return m ? m[1]!.trim() : value;
}

function exampleArtifacts(blocked: BlockedAnswer): Record<string, unknown>[] {
  return ((blocked.example.output?.artifacts ?? []) as Record<string, unknown>[]).map((a) => {
    if (a.kind !== "wr.assessment" || typeof a.dimensions !== "object") return { ...a };
    const dims = Object.entries(a.dimensions as Record<string, unknown>)
      .map(([k, v]) => [k, asWritten(v)]);
    return { ...a, dimensions: Object.fromEntries(dims) };
  });
}

function otherLevel(pending: PendingStep, level: string, artifact: Record<string, unknown>) {
  const def = pending.assessments?.find((a) => a.assessmentId === artifact.assessmentId);
  const dims = { ...(artifact.dimensions as Record<string, string>) };
  for (const [id, l] of Object.entries(dims)) {
    if (l !== level) continue;
    const d = def?.dimensions.find((x) => x.id === id);
    dims[id] = d?.levels.find((x) => x !== level) ?? l;
  }
  return { ...artifact, dimensions: dims };
}

/**
 * A DeepWork job step's outputs as its blocker names them: `Valid output names: \`a\`` or
 * `Declared outputs: \`a\` (required)` give one output per name; a list type, a list.
 */
function jobOutputs(artifacts: readonly Record<string, unknown>[], message: string) {
  const listed = /(?:Valid output names|Declared outputs): (.*)$/.exec(message)?.[1];
  const list = /Output `([^`]+)` is declared `type: [^`]+` and takes a list/.exec(message)?.[1];
  if (!listed && !list) return null;
  return artifacts.map((a) => {
    if (a.kind !== "wr.job_outputs") return a;
    const outputs = { ...(a.outputs as Record<string, unknown>) };
    if (listed) {
      for (const key of Object.keys(outputs)) delete outputs[key];
      for (const m of listed.matchAll(/`([^`]+)`/g)) outputs[m[1]!] = m[1]!;
    }
    if (list) outputs[list] = [String(outputs[list] ?? list)];
    return { ...a, outputs };
  });
}

/** The answer repaired from a blocked answer, each blocker's fix applied as written. */
export function applyFix(pending: PendingStep, answer: Answer, blocked: BlockedAnswer): Answer {
  const fixed: Answer = {
    context: { ...answer.context, ...(blocked.example.context ?? {}) },
    artifacts: [...answer.artifacts],
    ...(answer.notesMarkdown !== undefined ? { notesMarkdown: answer.notesMarkdown } : {}),
  };
  const examples = exampleArtifacts(blocked);
  const kinds = new Set(examples.map((a) => a.kind));
  let replaced = false;
  for (const b of blocked.blockers) {
    if (b.code === "ASSESSMENT_FOLLOWUP_REQUIRED") {
      const level = /= `([^`]+)`/.exec(b.message)?.[1] ?? "";
      fixed.artifacts = fixed.artifacts.map((a) =>
        a.kind === "wr.assessment" ? otherLevel(pending, level, a) : a
      );
    } else if (jobOutputs(fixed.artifacts, b.message)) {
      fixed.artifacts = jobOutputs(fixed.artifacts, b.message)!;
    } else if (b.pointer.kind === "workflow_step") {
      const base = fixed.notesMarkdown ?? `Did ${pending.title}.`;
      const add = b.code === "MISSING_REQUIRED_NOTES" ? [] : linesFromMessage(b.message);
      fixed.notesMarkdown = fitLength([base, ...add].join("\n"), [b.message]);
    } else if (!replaced && examples.length > 0) {
      replaced = true;
      fixed.artifacts = [...fixed.artifacts.filter((a) => !kinds.has(a.kind)), ...examples];
    }
  }
  return fixed;
}
