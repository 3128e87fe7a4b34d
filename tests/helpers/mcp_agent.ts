/**
 * A scripted agent that walks a workflow through MCP the way a diligent agent would, deriving
 * everything it submits from what the workflow shows it: the description (the context keys it
 * reads, with their values, and its optional start inputs) and each pending step's gates as
 * `pending` gives them as data (`requiredContext`, `userDependencies`, the line labels and texts
 * of `notesRules`, the assessment levels and `followUps`, the output contract's example, the loop
 * it runs in), never its prompt's prose about them. It never reads the compiled workflow: a gate
 * `pending` does not announce blocks it, which is the point.
 *
 * A `variant` picks, for every choice, the variant-th option (modulo), so runs 0..n-1 take every
 * value of every key and every passing level. With `probed`, each step not in it yet is first
 * acknowledged without what its prompt asks for (and added): the blockers must be exactly the
 * gates the prompt announced.
 * @module
 */
import assert from "node:assert/strict";
import { ok, type TestClient } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** What a workflow's description tells an agent about its context. */
export interface Reading {
  /** Context keys with a closed set of values (``Context: `risk` low|high``). */
  domains: Map<string, unknown[]>;
  /** Optional start inputs (``optional `ticket` ``). */
  optional: string[];
}

function literal(text: string): unknown {
  if (text === "true" || text === "false") return text === "true";
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

/** Reads the context keys and their values, and the optional inputs, from a text. */
export function readDescription(text: string): Reading {
  const domains = new Map<string, unknown[]>();
  for (const m of text.matchAll(/`([A-Za-z_]\w*)`:? \(?([\w-]+(?:\|[\w-]+)+)\)?/g)) {
    if (!domains.has(m[1]!)) domains.set(m[1]!, m[2]!.split("|").map(literal));
  }
  const optional = [...text.matchAll(/optional `([A-Za-z_]\w*)`/g)].map((m) => m[1]!);
  return { domains, optional };
}

/** The keys `pending` says the acknowledgement must set: required ones, and the user's. */
function gateKeys(pending: Json): { required: string[]; user: string[] } {
  return {
    required: pending.requiredContext ?? [],
    user: (pending.userDependencies ?? []).map((d: Json) => d.key as string),
  };
}

/** The lines and texts `pending.notesRules` say the notes must have. */
export function requiredLines(pending: Json): string[] {
  return (pending.notesRules ?? []).flatMap((r: Json) =>
    r.label ? [`${r.label} x`] : r.contains ? [r.contains as string] : []
  );
}

/** Levels `pending.followUps` say keep the step pending, by assessment (`*` for any). */
export function blockingLevels(pending: Json): { assessmentId: string; level: string }[] {
  return (pending.followUps ?? []).map((f: Json) => ({
    assessmentId: f.assessmentId ?? "*",
    level: f.level,
  }));
}

/** What the agent saw and did in one run. */
export interface Walk {
  /** Pending step ids, in order. */
  steps: string[];
  /** Their prompts, in order. */
  prompts: string[];
  /** Blocked attempts made by the probe, with the codes they were blocked with. */
  probes: { stepId: string; codes: string[] }[];
  /** The final response. */
  last: Json;
}

/** The agent's state over one run. */
interface RunState {
  reading: Reading;
  variant: number;
  decided: Record<string, unknown>;
}

function pick<T>(options: readonly T[], variant: number): T {
  return options[variant % options.length]!;
}

/** The context keys to set at this step: required ones, the user's, and described keys it names. */
function decide(run: RunState, pending: Json): Record<string, unknown> {
  const prompt = pending.prompt as string;
  const gates = gateKeys(pending);
  const wanted = new Set([...gates.required, ...gates.user]);
  for (const key of run.reading.domains.keys()) if (prompt.includes(`\`${key}\``)) wanted.add(key);
  const now: Record<string, unknown> = {};
  for (const key of wanted) {
    if (key in run.decided) continue;
    const domain = run.reading.domains.get(key);
    now[key] = domain ? pick(domain, run.variant) : `the user's answer for ${key}`;
  }
  return now;
}

/** One `wr.assessment` per requested assessment: every dimension at a chosen level. */
function assess(run: RunState, pending: Json, block?: { level: string }): Json[] {
  const blocking = blockingLevels(pending);
  return (pending.assessments ?? []).map((a: Json) => {
    const blocks = (l: string) =>
      blocking.some((b) =>
        b.level === l && (b.assessmentId === "*" || b.assessmentId === a.assessmentId)
      );
    let used = false;
    const dimensions = Object.fromEntries(a.dimensions.map((d: Json) => {
      if (block && !used && d.levels.includes(block.level)) {
        used = true;
        return [d.id, block.level];
      }
      const passing = (d.levels as string[]).filter((l) => !blocks(l));
      return [d.id, pick(passing, run.variant)];
    }));
    return { kind: "wr.assessment", assessmentId: a.assessmentId, dimensions };
  });
}

function contractArtifact(pending: Json): Json[] {
  if (!pending.outputContract) return [];
  const artifact = { ...pending.outputContract.example };
  if (artifact.kind === "wr.loop_control") {
    artifact.decision = (pending.loop?.iteration ?? 2) < 2 ? "continue" : "stop";
  }
  return [artifact];
}

async function ack(c: TestClient, from: Json, payload: Json): Promise<Json> {
  return ok(
    await c.call("continue_workflow", {
      stateToken: from.stateToken,
      ackToken: from.ackToken,
      ...payload,
    }),
  );
}

/**
 * Acknowledges the pending step without what its prompt asks for, and checks the blockers are
 * exactly the announced gates; returns the last blocked response (its ackToken is fresh).
 */
async function probe(
  c: TestClient,
  from: Json,
  good: { context: Json; notes: string; artifacts: Json[]; lines: string[] },
  walk: Walk,
): Promise<Json> {
  const pending = from.pending;
  const attempts: { expect: string[]; payload: Json }[] = [];
  const bare: string[] = [];
  if (!pending.notesOptional) bare.push("MISSING_REQUIRED_NOTES");
  const keys = Object.keys(good.context);
  const gates = gateKeys(pending);
  for (const k of keys) {
    if (gates.user.includes(k)) bare.push("USER_ONLY_DEPENDENCY");
    else if (gates.required.includes(k)) bare.push("MISSING_CONTEXT_KEY");
  }
  if (good.artifacts.length > 0) bare.push("MISSING_REQUIRED_OUTPUT");
  if (pending.notesOptional && good.lines.length > 0) bare.push("MISSING_REQUIRED_OUTPUT");
  if (bare.length > 0) attempts.push({ expect: bare, payload: { output: {} } });
  const full = { context: good.context, output: { artifacts: good.artifacts } };
  if (good.lines.length > 0) {
    attempts.push({
      expect: ["INVALID_REQUIRED_OUTPUT"],
      payload: { ...full, output: { ...full.output, notesMarkdown: `Did ${pending.title}.` } },
    });
  }
  const blocking = blockingLevels(pending);
  if (blocking.length > 0) {
    const level = blocking[0]!.level;
    const artifacts = [
      ...assess(
        { reading: { domains: new Map(), optional: [] }, variant: 0, decided: {} },
        pending,
        {
          level,
        },
      ),
      ...contractArtifact(pending),
    ];
    attempts.push({
      expect: ["ASSESSMENT_FOLLOWUP_REQUIRED"],
      payload: { context: good.context, output: { notesMarkdown: good.notes, artifacts } },
    });
  }
  let current = from;
  for (const attempt of attempts) {
    const blocked = await ack(c, current, attempt.payload);
    const where = `${pending.stepId}: ${JSON.stringify(attempt.payload).slice(0, 200)}`;
    assert.equal(blocked.kind, "blocked", `the gates announced at ${where} did not block`);
    const codes = [...new Set(blocked.blockers.map((b: Json) => b.code as string))].sort();
    assert.deepEqual(codes, [...new Set(attempt.expect)].sort(), `blockers at ${where}`);
    walk.probes.push({ stepId: pending.stepId, codes });
    current = blocked;
  }
  return current;
}

/**
 * Walks a workflow to completion: reads its description (`inspect_workflow`), starts it (with
 * the optional inputs on odd variants), and acknowledges each step as its prompt asks.
 */
export async function walkWorkflow(
  c: TestClient,
  workflowId: string,
  options: { variant: number; probed?: Set<string>; maxSteps?: number },
): Promise<Walk> {
  const inspected = ok(await c.call("inspect_workflow", { workflowId }));
  const reading = readDescription(inspected.workflow.description);
  const run: RunState = { reading, variant: options.variant, decided: {} };
  const start: Json = {};
  if (options.variant % 2 === 1) {
    for (const key of reading.optional) {
      start[key] = `${key} given at start (run ${options.variant})`;
    }
  }
  let response = ok(
    await c.call("start_workflow", {
      workflowId,
      goal: `Scripted walk ${options.variant} of ${workflowId}`,
      ...(Object.keys(start).length ? { context: start } : {}),
    }),
  );
  const walk: Walk = { steps: [], prompts: [], probes: [], last: response };
  while (!response.isComplete) {
    assert.ok(walk.steps.length < (options.maxSteps ?? 200), `${workflowId} did not terminate`);
    const pending = response.pending;
    walk.steps.push(pending.stepId);
    walk.prompts.push(pending.prompt);
    const context = decide(run, pending);
    const lines = requiredLines(pending);
    const notes = [`Did ${pending.title}.`, ...lines].join("\n");
    const artifacts = [...assess(run, pending), ...contractArtifact(pending)];
    const probing = options.probed !== undefined && !options.probed.has(pending.stepId);
    options.probed?.add(pending.stepId);
    const from = probing
      ? await probe(c, response, { context, notes, artifacts, lines }, walk)
      : response;
    const next = await ack(c, from, {
      ...(Object.keys(context).length ? { context } : {}),
      output: { notesMarkdown: notes, ...(artifacts.length ? { artifacts } : {}) },
    });
    assert.equal(
      next.kind,
      "ok",
      `${workflowId} blocked at ${pending.stepId}: ${JSON.stringify(next.blockers)}`,
    );
    Object.assign(run.decided, context);
    response = next;
  }
  walk.last = response;
  return walk;
}
