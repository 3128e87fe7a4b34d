/**
 * What a step's outputs are reviewed against, as text and as verdicts (grouped by the review
 * rules' strategies and fenced as their tasks are, `engine/review/`): the review prompts
 * (criteria, outputs, guidance), the self-review instructions file, the external reviewer's
 * JSON verdict read strictly (anything else is an error, never a pass), and `json_schema`
 * checks of file outputs. Pure; files are read through the port by the caller.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import type { CriterionResult } from "../model/events.ts";
import { jsonSchemaProblems } from "../gates/json_schema_check.ts";
import type { CompiledStep } from "../workflow/compiled.ts";
import { yamlParser } from "./yaml.ts";
import { groupByStrategy } from "../review/plan.ts";
import { fenced } from "../review/prompt.ts";
import type { JobReviewSpec } from "./job.ts";
import type { RecordedFile, SubmittedOutputs } from "./outputs.ts";
import type { ReviewRun } from "./ports.ts";

/** One review to run: its spec and the outputs it covers. */
export interface ReviewUnit {
  /** The review. */
  review: JobReviewSpec;
  /** Files it covers. */
  files: RecordedFile[];
  /** Inline (string) outputs it covers, by name. */
  texts: Record<string, string>;
}

/** The reviews a submission needs: `step` reviews once; an output's per file or together. */
export function reviewUnits(
  step: CompiledStep,
  at: { outputs: SubmittedOutputs; files: readonly RecordedFile[] },
): ReviewUnit[] {
  const texts = (names: readonly string[]) =>
    Object.fromEntries(
      (step.job?.outputs ?? []).filter((o) =>
        o.type === "string" && names.includes(o.name) && typeof at.outputs[o.name] === "string"
      ).map((o) => [o.name, at.outputs[o.name] as string]),
    );
  const units: ReviewUnit[] = [];
  for (const review of step.job?.reviews ?? []) {
    if (review.runEach === "step") {
      units.push({ review, files: [...at.files], texts: texts(Object.keys(at.outputs)) });
      continue;
    }
    if (at.outputs[review.runEach] === undefined) continue;
    const files = at.files.filter((f) => f.output === review.runEach);
    // the same strategies as review rules (`engine/review/plan.ts`)
    const groups = groupByStrategy(review.strategy ?? "individual", {
      matched: files,
      changed: at.files,
    });
    if (groups.length <= 1) units.push({ review, files, texts: texts([review.runEach]) });
    else for (const group of groups) units.push({ review, files: group, texts: {} });
  }
  return units;
}

/** The prompt of one review; `inline` holds file contents to include (external reviews). */
export function reviewPrompt(
  unit: ReviewUnit,
  at: { workflow: string; stepId: string; inline: ReadonlyMap<string, string> },
): string {
  const criteria = Object.entries(unit.review.criteria);
  const lines = [
    `# Quality review: step \`${at.stepId}\` of \`${at.workflow}\``,
    "",
    "Review the outputs below against every criterion. Answer with one JSON object and nothing else:",
    '{"passed": true|false, "feedback": "what to fix, or why it passes", "criteria_results": [{"criterion": "name", "passed": true|false, "feedback": "..."}]}',
    "",
    "## Criteria",
    ...(criteria.length > 0
      ? criteria.map(([name, text]) => `- **${name}**: ${text}`)
      : ["- The outputs do what the step's instructions ask."]),
  ];
  if (unit.review.guidance) lines.push("", "## Guidance", unit.review.guidance);
  lines.push("", "## Outputs");
  for (const f of unit.files) {
    const id = f.sha256 === null ? `modified ${f.modified}` : `sha256 ${f.sha256}`;
    lines.push(`- \`${f.output}\`: \`${f.path}\` (${f.size} bytes, ${id})`);
    const text = at.inline.get(f.path);
    if (text !== undefined) lines.push("", ...fenced(text), "");
  }
  for (const [name, text] of Object.entries(unit.texts)) {
    lines.push(`- \`${name}\` (text):`, "", ...fenced(text), "");
  }
  return lines.join("\n");
}

/** The self-review instructions file: every review's prompt, and what to do afterwards. */
export function selfReviewText(
  units: readonly ReviewUnit[],
  at: { workflow: string; stepId: string },
): string {
  const intro = [
    `# Self-review of step \`${at.stepId}\` of \`${at.workflow}\``,
    "",
    "Have a sub-agent (the Task tool) review the outputs below against each set of criteria, with fresh eyes. Fix what it finds. Then call finished_step again with the same outputs and `quality_review_override_reason` saying what the review found and how it was addressed.",
  ].join("\n");
  return [intro, ...units.map((u) => reviewPrompt(u, { ...at, inline: new Map() }))].join(
    "\n\n---\n\n",
  );
}

const verdictSchema = z.object({
  passed: z.boolean(),
  feedback: z.string(),
  criteria_results: z.array(z.object({
    criterion: z.string(),
    passed: z.boolean(),
    feedback: z.string().optional(),
  })).optional(),
});

/** A review's verdict, or why there is none (timeout, crash, not the JSON asked for). */
export type Verdict =
  | { ok: true; passed: boolean; feedback: string; criteria: CriterionResult[] | null }
  | { ok: false; error: string };

function jsonIn(stdout: string): unknown {
  const text = stdout.trim();
  try {
    return JSON.parse(text);
  } catch {
    // a model's answer: the object inside a fenced block, or between the first { and the last }
    const fenced = /```(?:json)?\s*\n([\s\S]*?)\n\s*```/.exec(text)?.[1];
    const braced = text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1);
    for (const candidate of [fenced, braced]) {
      if (!candidate) continue;
      try {
        return JSON.parse(candidate);
      } catch { /* try the next */ }
    }
    // tolerate a log line before the verdict: the last line that is a JSON object
    const last = text.split("\n").map((l) => l.trim()).filter((l) => l.startsWith("{")).at(-1);
    if (last === undefined) return undefined;
    try {
      return JSON.parse(last);
    } catch {
      return undefined;
    }
  }
}

/** Reads a review command's run as a verdict; anything but the JSON verdict is an error. */
export function readVerdict(run: ReviewRun, command: string): Verdict {
  if (run.kind === "timeout") {
    return {
      ok: false,
      error: `the review command \`${command}\` timed out after ${run.afterMs} ms`,
    };
  }
  if (run.kind === "failed_to_start") {
    return {
      ok: false,
      error: `the review command \`${command}\` could not start: ${run.message}`,
    };
  }
  if (run.code !== 0) {
    const stderr = run.stderr.trim().slice(-500);
    return {
      ok: false,
      error: `the review command \`${command}\` exited with status ${run.code}${
        stderr ? `: ${stderr}` : ""
      }`,
    };
  }
  const parsed = verdictSchema.safeParse(jsonIn(run.stdout));
  if (!parsed.success) {
    return {
      ok: false,
      error:
        `the review command \`${command}\` printed no JSON verdict ({passed, feedback, criteria_results?}); its output began: ${
          JSON.stringify(run.stdout.trim().slice(0, 200))
        }`,
    };
  }
  const v = parsed.data;
  return {
    ok: true,
    passed: v.passed,
    feedback: v.feedback,
    criteria: v.criteria_results?.map((c) => ({
      criterion: c.criterion,
      passed: c.passed,
      ...(c.feedback !== undefined ? { feedback: c.feedback } : {}),
    })) ?? null,
  };
}

/** Why a file's content does not match its output's `json_schema`, or `null` when it does. */
export async function schemaProblem(
  schema: Record<string, unknown>,
  at: { output: string; path: string; text: string | null },
): Promise<string | null> {
  const head = `Output \`${at.output}\` (\`${at.path}\`) must match its json_schema`;
  if (at.text === null) return `${head}, but it could not be read.`;
  const parseYaml = await yamlParser();
  let value: unknown;
  try {
    value = parseYaml(at.text);
  } catch (error) {
    return `${head}, but it is not valid YAML or JSON: ${(error as Error).message.split("\n")[0]}`;
  }
  const problems = jsonSchemaProblems(schema, value, { limit: 10 });
  return problems.length === 0 ? null : `${head}: ${problems.join("; ")}.`;
}
