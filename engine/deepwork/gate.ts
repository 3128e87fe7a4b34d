/**
 * The checks a `finished_step` submission goes through after its shape: `json_schema` of file
 * outputs, then the quality gate (self-review instructions written to a file, or an external
 * reviewer run once per review, with an attempt limit). Each review is a `review_recorded`
 * event at the node whose step was reviewed, so the viewer shows verdicts where they belong.
 * @module
 */
import type { DomainEvent } from "../model/events.ts";
import { runLabel } from "../model/ids.ts";
import type { StoreReader } from "../model/ports.ts";
import { fail, type Result } from "../model/result.ts";
import type { CompiledStep } from "../workflow/compiled.ts";
import type { RecordedFile, SubmittedOutputs } from "./outputs.ts";
import type { JobPorts, QualityGate } from "./ports.ts";
import { readVerdict, reviewPrompt, reviewUnits, schemaProblem, selfReviewText } from "./review.ts";
import { type TopRun, workflowLabel } from "./stack.ts";

/** What the checks decided: go on (with events to record), send back, or fail. */
export type GateOutcome =
  | { kind: "pass"; events: DomainEvent[] }
  | { kind: "needs_work"; feedback: string; events: DomainEvent[] }
  | { kind: "fail"; error: Result<never>; events: DomainEvent[] };

/** What the checks look at. */
export interface Submission {
  /** The top run, at the node whose step is being finished. */
  top: TopRun;
  /** That step. */
  step: CompiledStep;
  /** The outputs as submitted. */
  outputs: SubmittedOutputs;
  /** The files they name, described. */
  files: RecordedFile[];
  /** The project root the paths are relative to. */
  root: string;
  /** Set when the agent skips the quality gate. */
  overrideReason?: string;
}

/** Most bytes of a file read for `json_schema` or inlined into an external review. */
const READ_LIMIT = 1024 * 1024;
/** Files inlined into an external review prompt (self-review lists paths only). */
const MAX_INLINE_FILES = 5;

function reviewEvent(
  s: Submission,
  fields: Pick<
    Extract<DomainEvent, { kind: "review_recorded" }>,
    "reviewer" | "verdict" | "attempt" | "feedback" | "criteria" | "file"
  >,
): DomainEvent {
  const { node } = s.top;
  return {
    kind: "review_recorded",
    sessionId: node.sessionId,
    runId: node.runId,
    nodeId: node.nodeId,
    stepId: node.pendingStepId,
    ...fields,
  };
}

/** `json_schema` checks of file outputs; failures send the step back with the errors. */
async function schemaChecks(ports: Pick<JobPorts, "files">, s: Submission): Promise<GateOutcome> {
  const problems: string[] = [];
  for (const spec of s.step.job?.outputs ?? []) {
    if (!spec.jsonSchema) continue;
    for (const f of s.files.filter((x) => x.output === spec.name)) {
      const text = await ports.files.readText(s.root, f.path, READ_LIMIT);
      const problem = await schemaProblem(spec.jsonSchema, {
        output: spec.name,
        path: f.path,
        text,
      });
      if (problem) problems.push(problem);
    }
  }
  if (problems.length === 0) return { kind: "pass", events: [] };
  const feedback = problems.join("\n");
  return {
    kind: "needs_work",
    feedback,
    events: [reviewEvent(s, {
      reviewer: "json_schema",
      verdict: "failed",
      attempt: 1,
      feedback,
      criteria: null,
      file: null,
    })],
  };
}

/** Self-review: the instructions go to a file the agent hands to a sub-agent. */
async function selfReview(ports: Pick<JobPorts, "files">, s: Submission): Promise<GateOutcome> {
  const workflow = workflowLabel(s.top.compiled.id);
  const units = reviewUnits(s.step, s);
  const name = `.deepwork/tmp/quality_review_${runLabel(s.top.node.runId)}_${s.step.id}.md`;
  const file = await ports.files.writeText(
    s.root,
    name,
    selfReviewText(units, { workflow, stepId: s.step.id }),
  );
  if (file === null) {
    return {
      kind: "fail",
      error: fail(
        "OUTPUT_INVALID",
        `The self-review instructions could not be written to ${name} inside the project root ${s.root}: that folder, or a symbolic link on the way, leads outside it (or cannot be written). Make .deepwork/tmp a folder inside the project, or pass quality_review_override_reason; nothing was recorded.`,
        { details: { step_id: s.step.id, file: name } },
      ),
      events: [],
    };
  }
  const feedback =
    `Quality review required. The review instructions are in ${file}. Spawn a sub-agent (the Task tool) to review your outputs against them, fix what it finds, then call finished_step again with the same outputs and quality_review_override_reason saying what the review found.`;
  return {
    kind: "needs_work",
    feedback,
    events: [reviewEvent(s, {
      reviewer: "self",
      verdict: "requested",
      attempt: 1,
      feedback,
      criteria: null,
      file,
    })],
  };
}

async function inlineFiles(
  ports: Pick<JobPorts, "files">,
  s: Submission,
): Promise<Map<string, string>> {
  const inline = new Map<string, string>();
  for (const f of s.files.slice(0, MAX_INLINE_FILES)) {
    const text = await ports.files.readText(s.root, f.path, READ_LIMIT);
    if (text !== null) inline.set(f.path, text);
  }
  return inline;
}

/** External review: every review once; a crash or garbage is an error, never a pass. */
async function externalReview(
  deps: { store: Pick<StoreReader, "getNodeEvents"> } & Pick<JobPorts, "files">,
  at: { s: Submission; gate: QualityGate & { runner: NonNullable<QualityGate["runner"]> } },
): Promise<GateOutcome> {
  const ports = deps;
  const { s, gate } = at;
  const { node } = s.top;
  const earlier = (await deps.store.getNodeEvents(node.runId, node.nodeId))
    .filter((e) => e.kind === "review_recorded" && e.reviewer === "external").length;
  const attempt = earlier + 1;
  const workflow = workflowLabel(s.top.compiled.id);
  const inline = await inlineFiles(ports, s);
  const failed: string[] = [];
  const criteria = [];
  for (const unit of reviewUnits(s.step, s)) {
    const prompt = reviewPrompt(unit, { workflow, stepId: s.step.id, inline });
    const run = await gate.runner.run(prompt, { timeoutMs: gate.timeoutMs });
    const verdict = readVerdict(run, gate.runner.command);
    if (!verdict.ok) {
      const event = reviewEvent(s, {
        reviewer: "external",
        verdict: "error",
        attempt,
        feedback: verdict.error,
        criteria: null,
        file: null,
      });
      return {
        kind: "fail",
        error: fail(
          "REVIEWER_FAILED",
          `The quality review could not run: ${verdict.error}. Nothing was passed; fix the reviewer (or pass quality_review_override_reason) and call finished_step again.`,
          { retry: { kind: "retryable_immediate" }, details: { step_id: s.step.id, attempt } },
        ),
        events: [event],
      };
    }
    criteria.push(...(verdict.criteria ?? []));
    if (!verdict.passed) failed.push(verdict.feedback);
  }
  const feedback = failed.length > 0 ? failed.join("\n\n") : "All quality reviews passed.";
  const events = [reviewEvent(s, {
    reviewer: "external",
    verdict: failed.length > 0 ? "failed" : "passed",
    attempt,
    feedback,
    criteria: criteria.length > 0 ? criteria : null,
    file: null,
  })];
  if (failed.length === 0) return { kind: "pass", events };
  if (attempt >= gate.maxAttempts) {
    return {
      kind: "fail",
      error: fail(
        "QUALITY_GATE_FAILED",
        `Quality gate failed after ${attempt} attempt(s), the maximum of ${gate.maxAttempts} attempts exceeded for step \`${s.step.id}\`. Feedback:\n${feedback}`,
        { details: { step_id: s.step.id, attempts: attempt, feedback } },
      ),
      events,
    };
  }
  return { kind: "needs_work", feedback, events };
}

/** Runs the checks in order; the first that does not pass decides. */
export async function checkSubmission(
  deps: { store: Pick<StoreReader, "getNodeEvents"> } & Pick<JobPorts, "files" | "gate">,
  s: Submission,
): Promise<GateOutcome> {
  const ports = deps;
  const schema = await schemaChecks(ports, s);
  if (schema.kind !== "pass") return schema;
  const gate = ports.gate;
  const reviews = s.step.job?.reviews ?? [];
  if (!gate || reviews.length === 0) return { kind: "pass", events: [] };
  if (s.overrideReason !== undefined) return { kind: "pass", events: [] };
  if (!gate.runner) return await selfReview(ports, s);
  return await externalReview(deps, { s, gate: { ...gate, runner: gate.runner } });
}
